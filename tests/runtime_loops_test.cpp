// parallel_for / parallel_for_chunks / parallel_reduce: every index exactly once for random
// ranges, every partitioner, steal policies and 1/2/8/16 workers; reductions equal the serial
// result (bitwise in deterministic mode); exceptions; bad input.
#include "test_util.hpp"

#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

// The loop bodies go through std::function: the loop engines are instantiated once per body
// signature instead of once per call site (this file was the slowest of the suite to compile in
// every tree), and they run the same code whatever the body's type.
using index_body = std::function<void(std::int64_t)>;
using chunk_body = std::function<void(std::int64_t, std::int64_t)>;

void pfor(std::int64_t b, std::int64_t e, const index_body& f, plait::partitioner p = plait::adaptive_partition()) {
  plait::parallel_for(b, e, f, p);
}

void pchunks(std::int64_t b, std::int64_t e, const chunk_body& f, plait::partitioner p) {
  plait::parallel_for_chunks(b, e, f, p);
}

std::vector<plait::partitioner> partitioners() {
  return {plait::adaptive_partition(),  plait::static_partition(),    plait::dynamic_partition(1),
          plait::dynamic_partition(7),  plait::guided_partition(1),   plait::guided_partition(5),
          plait::taskloop_grainsize(1), plait::taskloop_grainsize(13), plait::taskloop_num_tasks(1),
          plait::taskloop_num_tasks(100), plait::recursive_partition(1), plait::recursive_partition(9)};
}

const plait::steal_policy policies[] = {plait::steal_policy::one, plait::steal_policy::half,
                                        plait::steal_policy::adaptive};
const char* policy_names[] = {"one", "half", "adaptive"};

using Param = std::tuple<unsigned, int>;

class Loops : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    plait::pool_options o{.num_workers = std::get<0>(GetParam())};
    o.steal = policies[std::get<1>(GetParam())];
    pool_ = std::make_unique<plait::pool>(o);
  }
  plait::pool& pool() { return *pool_; }
  std::unique_ptr<plait::pool> pool_;
};

constexpr int ranges = plait_test::sanitized ? 8 : 40;

TEST_P(Loops, EveryIndexExactlyOnce) {
  std::mt19937_64 rng(std::get<0>(GetParam()) * 31 + static_cast<unsigned>(std::get<1>(GetParam())));
  for (int r = 0; r < ranges; ++r) {
    std::int64_t n = static_cast<std::int64_t>(rng() % (r % 4 == 0 ? 20000 : 300));
    // Offsets near both ends of int64 too: 64-bit safe arithmetic.
    std::int64_t offs[] = {0, -5000, INT64_MAX - n, INT64_MIN};
    std::int64_t begin = offs[r % 4];
    for (const auto& p : partitioners()) {
      std::vector<std::atomic<std::uint8_t>> hits(static_cast<std::size_t>(n));
      pool().run([&] {
        pfor(
            begin, begin + n,
            [&](std::int64_t i) {
              ASSERT_GE(i, begin);
              ASSERT_LT(i - begin, n);
              hits[static_cast<std::size_t>(i - begin)].fetch_add(1, std::memory_order_relaxed);
            },
            p);
      });
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << p.name() << " n=" << n << " i=" << i;
    }
  }
}

TEST_P(Loops, ChunksCoverTheRangeInDisjointPieces) {
  for (const auto& p : partitioners()) {
    constexpr std::int64_t n = 5000;
    std::vector<std::atomic<std::uint8_t>> hits(n);
    std::atomic<std::int64_t> chunks{0};
    pool().run([&] {
      pchunks(
          100, 100 + n,
          [&](std::int64_t lo, std::int64_t hi) {
            ASSERT_LT(lo, hi);
            chunks.fetch_add(1, std::memory_order_relaxed);
            for (std::int64_t i = lo; i < hi; ++i) hits[static_cast<std::size_t>(i - 100)].fetch_add(1);
          },
          p);
    });
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << p.name();
    if (p.type() == plait::partitioner::kind::grainsize) {
      EXPECT_EQ(chunks.load(), n / p.param()) << p.name();
    }
    if (p.type() == plait::partitioner::kind::num_tasks) {
      EXPECT_EQ(chunks.load(), p.param()) << p.name();
    }
  }
}

TEST_P(Loops, ReductionsEqualTheSerialResult) {
  constexpr std::int64_t n = 100003;
  std::int64_t want = 0;
  for (std::int64_t i = 0; i < n; ++i) want += i * i % 1009;
  for (const auto& p : partitioners()) {
    for (auto m : {plait::reduce_mode::fast, plait::reduce_mode::deterministic}) {
      std::int64_t got = pool().run([&] {
        return plait::parallel_reduce(
            std::int64_t{0}, n, std::int64_t{0},
            [](std::int64_t lo, std::int64_t hi, std::int64_t acc) {
              for (std::int64_t i = lo; i < hi; ++i) acc += i * i % 1009;
              return acc;
            },
            [](std::int64_t a, std::int64_t b) { return a + b; }, p, m);
      });
      ASSERT_EQ(got, want) << p.name();
    }
  }
}

TEST_P(Loops, OrderIsKeptForNonCommutativeCombines) {
  // String concatenation is associative but not commutative. Every partitioner but dynamic and
  // guided keeps the order of chunks (documented); deterministic mode keeps it for all.
  constexpr std::int64_t n = 300;
  std::string want;
  for (std::int64_t i = 0; i < n; ++i) want += static_cast<char>('a' + i % 26);
  for (const auto& p : partitioners()) {
    bool ordered = p.type() != plait::partitioner::kind::dynamic && p.type() != plait::partitioner::kind::guided;
    for (auto m : {plait::reduce_mode::fast, plait::reduce_mode::deterministic}) {
      if (!ordered && m == plait::reduce_mode::fast) continue;
      std::string got = pool().run([&] {
        return plait::parallel_reduce(
            std::int64_t{0}, n, std::string(),
            [](std::int64_t lo, std::int64_t hi, std::string acc) {
              for (std::int64_t i = lo; i < hi; ++i) acc += static_cast<char>('a' + i % 26);
              return acc;
            },
            [](std::string a, const std::string& b) { return a + b; }, p, m);
      });
      ASSERT_EQ(got, want) << p.name();
    }
  }
}

double det_sum(plait::pool& pool, plait::partitioner p) {
  return pool.run([&] {
    return plait::parallel_reduce(
        std::int64_t{0}, std::int64_t{200000}, 0.0,
        [](std::int64_t lo, std::int64_t hi, double acc) {
          for (std::int64_t i = lo; i < hi; ++i) acc += 1.0 / static_cast<double>(i + 1) * std::sin(static_cast<double>(i));
          return acc;
        },
        [](double a, double b) { return a + b; }, p, plait::reduce_mode::deterministic);
  });
}

TEST_P(Loops, DeterministicReductionIsBitwiseIdenticalAcrossPoolsAndPartitioners) {
  plait::pool one(plait::pool_options{.num_workers = 1});
  double ref = det_sum(one, plait::static_partition());
  for (const auto& p : partitioners())
    for (int rep = 0; rep < 3; ++rep) {
      double got = det_sum(pool(), p);
      ASSERT_EQ(std::memcmp(&got, &ref, sizeof got), 0) << p.name() << " " << got << " vs " << ref;
    }
}

TEST_P(Loops, ExceptionsFromBodiesPropagate) {
  for (const auto& p : partitioners()) {
    std::atomic<int> ran{0};
    bool caught = false;
    pool().run([&] {
      try {
        pfor(
            0, 20000,
            [&](std::int64_t i) {
              ran.fetch_add(1, std::memory_order_relaxed);
              if (i == 12345) throw std::runtime_error("loop boom");
            },
            p);
      } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == "loop boom";
      }
    });
    ASSERT_TRUE(caught) << p.name();
    // And the pool is still fine afterwards.
    std::atomic<int> after{0};
    pool().run([&] { pfor(0, 1000, [&](std::int64_t) { after.fetch_add(1); }, p); });
    ASSERT_EQ(after.load(), 1000) << p.name();
  }
}

TEST_P(Loops, NestedLoops) {
  std::atomic<std::int64_t> sum{0};
  pool().run([&] {
    pfor(0, 50, [&](std::int64_t i) {
      pfor(0, 200, [&](std::int64_t j) { sum.fetch_add(i * 200 + j, std::memory_order_relaxed); });
    });
  });
  EXPECT_EQ(sum.load(), 10000LL * 9999 / 2);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + "_" + policy_names[std::get<1>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Runtime, Loops, ::testing::Combine(plait_test::worker_counts, ::testing::Range(0, 3)),
                         param_name);

TEST(LoopsApi, EmptyRangesAreNoOpsAndReversedRangesAreErrors) {
  int calls = 0;
  pfor(5, 5, [&](std::int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(plait::parallel_reduce(
                3, 3, 42, [](std::int64_t, std::int64_t, int a) { return a + 1; }, [](int a, int b) { return a + b; }),
            42);
  try {
    pfor(10, 2, [](std::int64_t) {});
    ADD_FAILURE() << "reversed range accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("reversed range [10, 2)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pfor(INT64_MIN, INT64_MAX, [](std::int64_t) {}), std::invalid_argument);
}

TEST(LoopsApi, OutsideAPoolTheDefaultPoolRunsTheLoop) {
  std::atomic<int> n{0};
  pfor(0, 1000, [&](std::int64_t) { n.fetch_add(1); }, plait::taskloop_grainsize(10));
  EXPECT_EQ(n.load(), 1000);
}

TEST(LoopsApi, BadPartitionerArgumentsAreRefused) {
  EXPECT_THROW(plait::taskloop_grainsize(0), std::invalid_argument);
  EXPECT_THROW(plait::taskloop_num_tasks(0), std::invalid_argument);
  EXPECT_THROW(plait::dynamic_partition(-3), std::invalid_argument);
  EXPECT_THROW(plait::guided_partition(0), std::invalid_argument);
  EXPECT_THROW(plait::recursive_partition(-1), std::invalid_argument);
  try {
    (void)plait::taskloop_grainsize(0);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "plait::taskloop_grainsize: grain = 0 is not valid; accepted: an integer >= 1");
  }
}

TEST(LoopsApi, ParsePartitioner) {
  for (const char* ok : {"static", "adaptive", "dynamic:4", "guided:2", "grainsize:8", "num_tasks:100", "recursive:16"})
    EXPECT_EQ(plait::parse_partitioner(ok).name(), ok);
  for (const char* bad : {"", "auto", "dynamic", "dynamic:", "dynamic:0", "dynamic:-1", "grainsize:x", "static:3",
                          "num_tasks:99999999999999999999"}) {
    try {
      (void)plait::parse_partitioner(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("accepted: static, dynamic:C"), std::string::npos) << e.what();
    }
  }
}

// A linear taskloop with more tasks than one window of records: every task gets the range the
// OpenMP rule gives it without windows, and a non-commutative reduction sees the tasks in order.
TEST(LoopsApi, TaskloopPastOneWindowKeepsRangesAndOrder) {
  plait::pool p({.num_workers = 2});
  const std::int64_t n = 200'007, tasks = 100'003;  // > 2^16 tasks: two windows
  static_assert(tasks > (std::int64_t{1} << 16));
  std::vector<std::int64_t> lo_of(static_cast<std::size_t>(n), -1), hi_of(static_cast<std::size_t>(n), -1);
  p.run([&] {
    pchunks(
        0, n,
        [&](std::int64_t lo, std::int64_t hi) {
          for (std::int64_t i = lo; i < hi; ++i) {
            lo_of[static_cast<std::size_t>(i)] = lo;
            hi_of[static_cast<std::size_t>(i)] = hi;
          }
        },
        plait::taskloop_num_tasks(tasks));
  });
  const std::int64_t q = n / tasks, extra = n % tasks;
  std::int64_t at = 0;
  for (std::int64_t j = 0; j < tasks; ++j) {
    const std::int64_t len = q + (j < extra ? 1 : 0);
    for (std::int64_t i = at; i < at + len; ++i) {
      ASSERT_EQ(lo_of[static_cast<std::size_t>(i)], at) << "task " << j;
      ASSERT_EQ(hi_of[static_cast<std::size_t>(i)], at + len) << "task " << j;
    }
    at += len;
  }
  ASSERT_EQ(at, n);
  // Order: each task folds its range into a (first, last) pair; combining checks adjacency.
  using Span = std::pair<std::int64_t, std::int64_t>;
  bool in_order = true;
  Span all = p.run([&] {
    return plait::parallel_reduce(
        std::int64_t{0}, n, Span{-1, -1},
        [](std::int64_t lo, std::int64_t hi, Span acc) {
          return acc.first < 0 ? Span{lo, hi} : Span{acc.first, hi};
        },
        [&](Span a, Span b) {
          if (a.first < 0) return b;
          if (b.first < 0) return a;
          if (a.second != b.first) in_order = false;
          return Span{a.first, b.second};
        },
        plait::taskloop_num_tasks(tasks));
  });
  EXPECT_TRUE(in_order);
  EXPECT_EQ(all, (Span{0, n}));
}

// num_tasks(2^40) over 2^40 iterations: records are made one window at a time, so the loop starts
// at once; the first task throws, which cancels the rest and ends the loop after its first window.
TEST(LoopsApi, TaskloopWithAHugeTaskCountStaysBounded) {
  plait::pool p({.num_workers = 2});
  const std::int64_t huge = std::int64_t{1} << 40;
  std::atomic<std::int64_t> ran{0};
  EXPECT_THROW(p.run([&] {
    pchunks(
        0, huge,
        [&](std::int64_t lo, std::int64_t) {
          ran.fetch_add(1, std::memory_order_relaxed);
          if (lo == 0) throw std::runtime_error("stop");
        },
        plait::taskloop_num_tasks(huge));
  }),
               std::runtime_error);
  EXPECT_LE(ran.load(), std::int64_t{1} << 16);
}

}  // namespace
