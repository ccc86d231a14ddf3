// plait::dataflow_group: every declared ordering holds, on random DAGs and on hand-made cases.
#include <plait/dataflow.hpp>
#include <plait/plait.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

namespace {

// Sanitizer builds run the same tests at a smaller size.
#if defined(PLAIT_TSAN) || defined(__SANITIZE_ADDRESS__)
constexpr bool small_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool small_build = true;
#else
constexpr bool small_build = false;
#endif
#else
constexpr bool small_build = false;
#endif

using plait::dep_mode;

class Dataflow : public plait_test::Workers {};

// ---- random DAGs -------------------------------------------------------------------------------

constexpr int kElems = 24;  // the shared array: small, so that sections overlap a lot

struct Acc {
  int lo, hi;  // element range [lo, hi)
  dep_mode mode;
};

struct TaskSpec {
  std::vector<Acc> acc;  // disjoint ranges
  int spin;              // busy work, to vary interleavings
};

std::vector<TaskSpec> random_tasks(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<TaskSpec> ts(static_cast<std::size_t>(n));
  for (auto& t : ts) {
    int k = 1 + static_cast<int>(rng() % 3);
    // k disjoint ranges from sorted cut points
    std::vector<int> cuts;
    for (int i = 0; i < 2 * k; ++i) cuts.push_back(static_cast<int>(rng() % (kElems + 1)));
    std::sort(cuts.begin(), cuts.end());
    for (int i = 0; i < k; ++i) {
      int lo = cuts[static_cast<std::size_t>(2 * i)], hi = cuts[static_cast<std::size_t>(2 * i + 1)];
      if (hi == lo) continue;
      unsigned r = static_cast<unsigned>(rng() % 100);
      dep_mode m = r < 35 ? dep_mode::in
                   : r < 50 ? dep_mode::out
                   : r < 65 ? dep_mode::inout
                   : r < 85 ? dep_mode::inoutset
                            : dep_mode::mutexinoutset;
      t.acc.push_back({lo, hi, m});
    }
    t.spin = static_cast<int>(rng() % 200);
  }
  return ts;
}

// What a task does to its sections; commutative for the set modes, so any order within a set
// gives the serial result. `reads` gets a checksum of what `in` sections saw.
// Unsigned: the products wrap (defined behaviour), the values only need to be reproducible.
using u64 = std::uint64_t;

void apply_task(const TaskSpec& t, int id, u64* data, u64* reads) {
  u64 sum = 0;
  for (const Acc& a : t.acc) {
    for (int e = a.lo; e < a.hi; ++e) {
      switch (a.mode) {
        case dep_mode::in:
          sum = sum * 31 + data[e];
          break;
        case dep_mode::out:
          data[e] = static_cast<u64>(id * 1000 + e);
          break;
        case dep_mode::inout:
          data[e] = data[e] * 3 + static_cast<u64>(id);
          break;
        case dep_mode::inoutset:
        case dep_mode::mutexinoutset:
          std::atomic_ref<u64>(data[e]).fetch_add(static_cast<u64>(id + 1), std::memory_order_relaxed);
          break;
      }
    }
  }
  reads[id] = sum;
}

struct Times {
  std::vector<long> start, end;
};

// Checks every pair of tasks that touch a common element, in creation order.
void check_orders(const std::vector<TaskSpec>& ts, const Times& tm) {
  int n = static_cast<int>(ts.size());
  for (int e = 0; e < kElems; ++e) {
    std::vector<std::pair<int, dep_mode>> hist;
    for (int i = 0; i < n; ++i)
      for (const Acc& a : ts[static_cast<std::size_t>(i)].acc)
        if (a.lo <= e && e < a.hi) hist.push_back({i, a.mode});
    for (std::size_t x = 0; x < hist.size(); ++x) {
      for (std::size_t y = x + 1; y < hist.size(); ++y) {
        auto [i, mi] = hist[x];
        auto [j, mj] = hist[y];
        auto si = static_cast<std::size_t>(i), sj = static_cast<std::size_t>(j);
        if (mi == dep_mode::in && mj == dep_mode::in) continue;
        bool same_set = false;
        if (mi == mj && (mi == dep_mode::inoutset || mi == dep_mode::mutexinoutset)) {
          same_set = true;
          for (std::size_t z = x + 1; z < y; ++z)
            if (hist[z].second != mi) same_set = false;
        }
        if (same_set) {
          if (mi == dep_mode::mutexinoutset) {
            bool disjoint = tm.end[si] < tm.start[sj] || tm.end[sj] < tm.start[si];
            ASSERT_TRUE(disjoint) << "mutexinoutset tasks " << i << " and " << j << " overlapped on element " << e;
          }
          continue;
        }
        ASSERT_LT(tm.end[si], tm.start[sj]) << "task " << j << " started before task " << i
                                            << " ended (element " << e << ")";
      }
    }
  }
}

TEST_P(Dataflow, RandomDagsRespectEveryEdgeAndMatchSerialReplay) {
  const int n = small_build ? 60 : 500;
  const int seeds = small_build ? 3 : 12;
  for (int seed = 1; seed <= seeds; ++seed) {
    auto ts = random_tasks(static_cast<std::uint64_t>(seed) * 7919 + GetParam(), n);
    // serial replay
    std::vector<u64> sdata(kElems, 1), sreads(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) apply_task(ts[static_cast<std::size_t>(i)], i, sdata.data(), sreads.data());

    std::vector<u64> data(kElems, 1), reads(static_cast<std::size_t>(n), 0);
    Times tm{std::vector<long>(static_cast<std::size_t>(n), -1), std::vector<long>(static_cast<std::size_t>(n), -1)};
    std::atomic<long> clock{0};
    pool().run([&] {
      plait::dataflow_group g;
      for (int i = 0; i < n; ++i) {
        const TaskSpec& t = ts[static_cast<std::size_t>(i)];
        std::vector<plait::access> deps;
        for (const Acc& a : t.acc)
          deps.push_back(plait::access{data.data() + a.lo, static_cast<std::size_t>(a.hi - a.lo) * sizeof(u64), a.mode});
        g.run(deps, [&, i, &t = t] {
          auto si = static_cast<std::size_t>(i);
          // seq_cst: one global order of all starts and ends, the clock the checks compare.
          tm.start[si] = clock.fetch_add(1, std::memory_order_seq_cst);
          volatile int sink = 0;
          for (int s = 0; s < t.spin; ++s) sink = sink + s;
          if (t.spin % 7 == 0) std::this_thread::yield();
          apply_task(t, i, data.data(), reads.data());
          tm.end[si] = clock.fetch_add(1, std::memory_order_seq_cst);
        });
      }
      g.wait();
    });
    for (int i = 0; i < n; ++i) ASSERT_GE(tm.end[static_cast<std::size_t>(i)], 0) << "task " << i << " did not run";
    check_orders(ts, tm);
    EXPECT_EQ(data, sdata) << "seed " << seed;
    EXPECT_EQ(reads, sreads) << "seed " << seed;
    if (HasFailure()) return;
  }
}

// ---- hand-made cases ---------------------------------------------------------------------------

TEST_P(Dataflow, ChainOnOneAddress) {
  const long n = small_build ? 10000 : 100000;
  long x = 0;
  long bad = 0;
  pool().run([&] {
    plait::dataflow_group g;
    for (long i = 0; i < n; ++i)
      g.run({plait::inout(x)}, [&x, &bad, i] {
        if (x != i) ++bad;
        x = i + 1;
      });
    g.wait();
  });
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(x, n);
}

TEST_P(Dataflow, EmptyDependenceListAndZeroLengthSection) {
  std::atomic<int> ran{0};
  int arr[4] = {0, 0, 0, 0};
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < 100; ++i) g.run({}, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
    // a zero-element section declares nothing: these do not wait for each other
    for (int i = 0; i < 10; ++i) g.run({plait::out(arr, 0)}, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
    std::vector<plait::access> none;
    g.run(none, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
    g.wait();
  });
  EXPECT_EQ(ran.load(), 111);
}

// Writer on [0,8), reader on [4,12) (partial overlap), writer on [6,10), writer on [0,16).
TEST_P(Dataflow, PartialOverlapsKeepEveryOrder) {
  for (int round = 0; round < (small_build ? 3 : 20); ++round) {
    int a[16] = {};
    std::atomic<int> clock{0};
    int t[4][2] = {};
    int seen[8] = {};
    pool().run([&] {
      plait::dataflow_group g;
      auto mark = [&](int k, int se) { t[k][se] = clock.fetch_add(1, std::memory_order_seq_cst); };
      g.run({plait::out(a + 0, 8)}, [&] {
        mark(0, 0);
        std::this_thread::sleep_for(std::chrono::microseconds(round % 3 == 0 ? 2000 : 0));
        for (int i = 0; i < 8; ++i) a[i] = 100 + i;
        mark(0, 1);
      });
      g.run({plait::in(a + 4, 8)}, [&] {
        mark(1, 0);
        for (int i = 0; i < 8; ++i) seen[i] = a[4 + i];
        mark(1, 1);
      });
      g.run({plait::inout(a + 6, 4)}, [&] {
        mark(2, 0);
        for (int i = 6; i < 10; ++i) a[i] += 1000;
        mark(2, 1);
      });
      g.run({plait::out(a, 16)}, [&] {
        mark(3, 0);
        for (int i = 0; i < 16; ++i) a[i] = -a[i];
        mark(3, 1);
      });
      g.wait();
    });
    EXPECT_LT(t[0][1], t[1][0]);  // reader after the writer it overlaps
    EXPECT_LT(t[1][1], t[2][0]);  // inout after the reader it overlaps
    EXPECT_LT(t[2][1], t[3][0]);
    EXPECT_LT(t[1][1], t[3][0]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(seen[i], 104 + i);
    for (int i = 4; i < 8; ++i) EXPECT_EQ(seen[i], 0);
    int want[16];
    for (int i = 0; i < 16; ++i) want[i] = i < 8 ? 100 + i : 0;
    for (int i = 6; i < 10; ++i) want[i] += 1000;
    for (int i = 0; i < 16; ++i) EXPECT_EQ(a[i], -want[i]) << i;
  }
}

TEST_P(Dataflow, MutexinoutsetMembersNeverOverlap) {
  const int k = small_build ? 20 : 200;
  long counter = 0;
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  long before = -1, after = -1;
  pool().run([&] {
    plait::dataflow_group g;
    g.run({plait::out(counter)}, [&] { counter = 5; });
    for (int i = 0; i < k; ++i)
      g.run({plait::mutexinoutset(counter)}, [&] {
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) violations.fetch_add(1, std::memory_order_relaxed);
        long v = counter;  // a plain read-modify-write: racy unless exclusive
        std::this_thread::yield();
        counter = v + 1;
        inside.fetch_sub(1, std::memory_order_relaxed);
      });
    g.run({plait::in(counter)}, [&] { after = counter; });
    g.wait();
    before = 5;
  });
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(after, before + k);
}

// Two sets over overlapping ranges: a task in both sets must hold both (no deadlock, no overlap).
TEST_P(Dataflow, MutexinoutsetAcrossSplitRanges) {
  long a[4] = {0, 0, 0, 0};
  std::atomic<int> in_lo{0}, in_hi{0}, violations{0};
  const int k = small_build ? 10 : 60;
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < k; ++i) {
      int which = i % 3;  // 0: [0,2), 1: [2,4), 2: [0,4)
      long* p = which == 1 ? a + 2 : a;
      std::size_t len = which == 2 ? 4 : 2;
      g.run({plait::mutexinoutset(p, len)}, [&, which] {
        bool lo = which != 1, hi = which != 0;
        if (lo && in_lo.fetch_add(1) != 0) violations.fetch_add(1);
        if (hi && in_hi.fetch_add(1) != 0) violations.fetch_add(1);
        if (lo) ++a[0];
        if (hi) ++a[3];
        std::this_thread::yield();
        if (lo) in_lo.fetch_sub(1);
        if (hi) in_hi.fetch_sub(1);
      });
    }
    g.wait();
  });
  EXPECT_EQ(violations.load(), 0);
  int lo = 0, hi = 0;
  for (int i = 0; i < k; ++i) {
    lo += i % 3 != 1;
    hi += i % 3 != 0;
  }
  EXPECT_EQ(a[0], lo);
  EXPECT_EQ(a[3], hi);
}

// inoutset members can run at the same time: two members wait for each other (with 2+ workers).
TEST_P(Dataflow, InoutsetMembersRunConcurrently) {
  if (GetParam() < 2) GTEST_SKIP() << "needs two workers";
  int x = 0;
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < 2; ++i)
      g.run({plait::inoutset(x)}, [&] {
        arrived.fetch_add(1);
        auto t0 = std::chrono::steady_clock::now();
        while (arrived.load() < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
          std::this_thread::yield();
        if (arrived.load() == 2) met.fetch_add(1);
      });
    g.wait();
  });
  EXPECT_EQ(met.load(), 2);
}

TEST_P(Dataflow, ReadersAfterASetWaitForAllMembers) {
  long x = 0;
  long seen = -1;
  const int k = 16;
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < k; ++i)
      g.run({plait::inoutset(x)}, [&, i] {
        if (i % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        std::atomic_ref<long>(x).fetch_add(1);
      });
    g.run({plait::in(x)}, [&] { seen = x; });
    g.run({plait::inout(x)}, [&] { x *= 10; });
    g.wait();
  });
  EXPECT_EQ(seen, k);
  EXPECT_EQ(x, 10 * k);
}

// ready_now (the OpenMP front door runs a task at once when it says so) sees every unfinished
// task that a new access would have to wait for, and nothing else: the tasks below stay unfinished
// (held at a gate) while it is asked.
TEST_P(Dataflow, ReadyNowSeesEveryUnfinishedConflict) {
  int x = 0, y = 0, z = 0, other = 0;
  int arr[8] = {};
  std::atomic<bool> gate{false};
  bool before_empty = false, after_all = false;
  bool answers[9] = {};
  pool().run([&] {
    plait::dataflow_group g;
    before_empty = g.ready_now({plait::in(x), plait::inout(y), plait::mutexinoutset(z)});
    auto held = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      while (!gate.load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) std::this_thread::yield();
    };
    g.run({plait::out(x)}, held);
    g.run({plait::in(y)}, held);
    g.run({plait::mutexinoutset(z)}, held);
    g.run({plait::inout(arr + 2, 2)}, held);
    answers[0] = g.ready_now({plait::in(x)});           // after the writer: no
    answers[1] = g.ready_now({plait::inout(x)});        // no
    answers[2] = g.ready_now({plait::in(y)});           // readers do not order readers: yes
    answers[3] = g.ready_now({plait::out(y)});          // a writer after the reader: no
    answers[4] = g.ready_now({plait::mutexinoutset(z)});  // the set's member is unfinished: no
    answers[5] = g.ready_now({plait::inout(other)});    // untouched: yes
    answers[6] = g.ready_now({plait::in(arr + 3, 4)});  // overlaps arr[2..3] in one byte range: no
    answers[7] = g.ready_now({plait::in(arr + 4, 4)});  // just past it: yes
    answers[8] = g.ready_now({plait::in(other), plait::in(x)});  // one access of two: no
    gate.store(true);
    g.wait();
    after_all = g.ready_now({plait::inout(x), plait::inout(y), plait::mutexinoutset(z), plait::inout(arr, 8)});
  });
  EXPECT_TRUE(before_empty);
  const bool want[9] = {false, false, true, false, false, true, false, true, false};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(answers[i], want[i]) << "question " << i;
  EXPECT_TRUE(after_all);
}

TEST_P(Dataflow, FirstExceptionCancelsTheRestAndWaitRethrows) {
  int x = 0;
  std::vector<int> ran(10, 0);
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < 10; ++i)
      g.run({plait::inout(x)}, [&, i] {
        ran[static_cast<std::size_t>(i)] = 1;
        if (i == 4) throw std::runtime_error("task 4 failed");
        ++x;
      });
    try {
      g.wait();
      ADD_FAILURE() << "wait() did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "task 4 failed");
    }
    // the group is usable again after wait()
    g.run({plait::inout(x)}, [&] { x += 100; });
    g.wait();
  });
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ran[static_cast<std::size_t>(i)], i <= 4 ? 1 : 0) << i;
  EXPECT_EQ(x, 104);
}

TEST_P(Dataflow, DestructorWaits) {
  std::atomic<int> ran{0};
  long a = 0;
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < 50; ++i) g.run({plait::inout(a)}, [&] { ++a; ran.fetch_add(1); });
  });
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(a, 50);
}

TEST_P(Dataflow, BlockedWavefront) {
  const int nb = small_build ? 8 : 24;
  std::vector<long> v(static_cast<std::size_t>(nb * nb), 0);
  auto at = [&](int i, int j) -> long& { return v[static_cast<std::size_t>(i * nb + j)]; };
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < nb; ++j) {
        std::vector<plait::access> d;
        if (i > 0) d.push_back(plait::in(at(i - 1, j)));
        if (j > 0) d.push_back(plait::in(at(i, j - 1)));
        d.push_back(plait::inout(at(i, j)));
        g.run(d, [&, i, j] {
          long up = i > 0 ? at(i - 1, j) : 1, left = j > 0 ? at(i, j - 1) : 1;
          at(i, j) = (up + left) % 1000003;
        });
      }
    g.wait();
  });
  std::vector<long> w(static_cast<std::size_t>(nb * nb));
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      long up = i > 0 ? w[static_cast<std::size_t>((i - 1) * nb + j)] : 1;
      long left = j > 0 ? w[static_cast<std::size_t>(i * nb + j - 1)] : 1;
      w[static_cast<std::size_t>(i * nb + j)] = (up + left) % 1000003;
    }
  EXPECT_EQ(v, w);
}

TEST_P(Dataflow, BadAccessesAreRefused) {
  int x = 0;
  bool ran = false;
  pool().run([&] {
    plait::dataflow_group g;
    plait::access bad_mode{&x, sizeof x, static_cast<dep_mode>(9)};
    EXPECT_THROW(g.run({bad_mode}, [&] { ran = true; }), std::invalid_argument);
    plait::access wraps{reinterpret_cast<const void*>(UINTPTR_MAX - 3), 16, dep_mode::in};
    EXPECT_THROW(g.run({wraps}, [&] { ran = true; }), std::invalid_argument);
    g.wait();
  });
  EXPECT_FALSE(ran);
}

// Many tasks on fresh addresses: passes the creator's throttle (4096 unfinished tasks) and the
// table's sweep (16384 segments) several times.
TEST_P(Dataflow, ManyIndependentAddressesThrottleAndSweep) {
  const int n = small_build ? 12000 : 60000;
  std::vector<int> hits(static_cast<std::size_t>(2 * n), 0);
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < n; ++i) {
      int* p = hits.data() + 2 * i;
      g.run({plait::inout(p[0]), plait::in(p[1])}, [p] { ++p[0]; });
    }
    g.wait();
  });
  for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(2 * i)], 1) << i;
}

// The table's sweep must keep a segment whose readers have not finished, even when its writer
// has (and most other segments are dead). Needs 3 workers: one holds the gate, one creates,
// the others run the filler tasks.
TEST_P(Dataflow, SweepKeepsUnfinishedReaders) {
  if (GetParam() < 3) GTEST_SKIP() << "needs three workers";
  // Under the sanitizers (and PLAIT_STRESS) the spinning gate and creator starve the thieves on
  // a small machine; the release build covers this test.
  if (small_build) GTEST_SKIP() << "release builds only";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  long x = 1, gate = 0;
  std::atomic<bool> release{false};
  std::atomic<long> clock{0};
  long reader_end[4] = {-1, -1, -1, -1};
  long writer_start = -1;
  const int fillers = 40, accesses = 1000;
  std::vector<long> filler(static_cast<std::size_t>(fillers * accesses), 0);
  std::atomic<int> fillers_done{0};
  pool().run([&] {
    plait::dataflow_group g;
    g.run({plait::out(x)}, [&] { x = 2; });  // a writer that finishes early
    g.run({plait::out(gate)}, [&] {
      while (!release.load() && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(5))
        std::this_thread::yield();
    });
    for (int r = 0; r < 4; ++r)
      g.run({plait::in(gate), plait::in(x)}, [&, r] { reader_end[r] = clock.fetch_add(1); });
    for (int f = 0; f < fillers; ++f) {
      std::vector<plait::access> d;
      for (int a = 0; a < accesses; ++a) d.push_back(plait::inout(filler[static_cast<std::size_t>(f * accesses + a)]));
      g.run(d, [&] { fillers_done.fetch_add(1); });
      // Let the fillers finish, so that the next run() sweeps a table that is mostly dead. The
      // spawn/join publishes our deque to thieves that asked (a spinning task publishes nothing).
      while (fillers_done.load() <= f && std::chrono::steady_clock::now() < deadline) {
        auto h = plait::spawn([] {});
        h.join();
        std::this_thread::yield();
      }
    }
    g.run({plait::out(x)}, [&] { writer_start = clock.fetch_add(1); });
    release.store(true);
    g.wait();
  });
  for (int r = 0; r < 4; ++r) EXPECT_LT(reader_end[r], writer_start) << "reader " << r;
  EXPECT_EQ(fillers_done.load(), fillers);  // else the sweep may not have run (slow machine)
}

// A long run of readers (their list is pruned as it grows), then a writer after all of them.
TEST_P(Dataflow, WriterWaitsForAManyReaders) {
  const int k = small_build ? 3000 : 20000;
  long x = 7;
  std::atomic<int> readers_done{0};
  int seen_by_writer = -1;
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < k; ++i)
      g.run({plait::in(x)}, [&] {
        if (x == 7) readers_done.fetch_add(1, std::memory_order_relaxed);
      });
    g.run({plait::out(x)}, [&] {
      seen_by_writer = readers_done.load(std::memory_order_relaxed);
      x = 8;
    });
    g.wait();
  });
  EXPECT_EQ(seen_by_writer, k);
  EXPECT_EQ(x, 8);
}

// Tasks of the group add tasks to it (ordered by the group's lock; no throttling inside).
TEST_P(Dataflow, TasksAddTasksToTheirGroup) {
  long x = 0;
  std::atomic<int> ran{0};
  pool().run([&] {
    plait::dataflow_group g;
    for (int i = 0; i < 20; ++i)
      g.run({}, [&] {
        for (int j = 0; j < 50; ++j)
          g.run({plait::inout(x)}, [&] {
            ++x;
            ran.fetch_add(1, std::memory_order_relaxed);
          });
      });
    g.wait();
  });
  EXPECT_EQ(ran.load(), 1000);
  EXPECT_EQ(x, 1000);
}

// Tasks of a nested group add more tasks to the outer group than the throttle allows: the
// throttle must not drain the outer group from there (it would wait for its own caller).
TEST_P(Dataflow, NestedGroupAddsToOuterGroupWithoutDeadlock) {
  const int per = small_build ? 2500 : 3000;
  long x = 0;
  pool().run([&] {
    plait::dataflow_group outer;
    outer.run({}, [&] {
      plait::dataflow_group inner;
      for (int i = 0; i < 2; ++i)
        inner.run({}, [&] {
          for (int j = 0; j < per; ++j) outer.run({plait::inout(x)}, [&] { ++x; });
        });
      inner.wait();
    });
    outer.wait();
  });
  EXPECT_EQ(x, 2L * per);
}

INSTANTIATE_TEST_SUITE_P(Workers, Dataflow, plait_test::worker_counts, plait_test::workers_name);

TEST(DataflowOutsideAPool, RunThrowsLogicError) {
  plait::dataflow_group g;
  int x = 0;
  bool ran = false;
  EXPECT_THROW(g.run({plait::in(x)}, [&] { ran = true; }), std::logic_error);
  EXPECT_FALSE(ran);
  g.wait();  // nothing to wait for: returns
}

}  // namespace
