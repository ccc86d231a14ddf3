#include "test_util.hpp"

#include "pool_impl.hpp"  // internal: the magazines (pool_alloc_bytes) for the allocator's own test
#include "task_alloc_resource.hpp"  // internal: the magazines as a pmr resource (the data-flow map)

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

namespace {

class Pools : public plait_test::Workers {};

using plait_test::fib_serial;
using plait_test::fib_spawn;

TEST_P(Pools, ConcurrentRunFromExternalThreads) {
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        if (pool().run([n = 12 + (t + i) % 8] { return fib_spawn(n); }) == fib_serial(12 + (t + i) % 8)) ok++;
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(ok.load(), 6 * 20);
}

TEST_P(Pools, RunFromInsideATaskRunsInline) {
  int r = pool().run([this] {
    int me = plait::this_worker_index();
    return pool().run([me] { return plait::this_worker_index() == me ? 1 : 0; });
  });
  EXPECT_EQ(r, 1);
}

TEST_P(Pools, WorkerIndexInRange) {
  EXPECT_EQ(plait::this_worker_index(), -1);
  int idx = pool().run([] { return plait::this_worker_index(); });
  EXPECT_GE(idx, 0);
  EXPECT_LT(idx, static_cast<int>(GetParam()));
}

TEST_P(Pools, IdlePoolUsesAlmostNoCpu) {
  if (pool().options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin set";
  EXPECT_EQ(pool().run([] { return fib_spawn(18); }), 2584);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the workers reach sleep
  auto cpu = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  };
  double c0 = cpu();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  double used = cpu() - c0;
  // 1 s of wall time with GetParam() idle workers: expect well under 2% of one core in all.
  EXPECT_LT(used, 0.02) << used << " s of CPU in 1 s while idle with " << GetParam() << " workers";
}

// The sleep protocol under random pauses: before each root the test pauses 0-3 ms, so the workers
// are caught spinning, yielding (idle < 1 ms) or asleep. Each root adds a child B and then a child
// A that keeps spawning and joining tiny tasks until B has started. A idle worker has asked A's
// worker for work (a sleeper asks before it sleeps), so one of A's spawns publishes B, and that
// publish must wake a sleeper to take it: a lost request or a lost wake-up shows as A's wait
// running out (a failed expectation after 10 s, not a hang). A must keep passing through push and
// pop: the runtime publishes private work only there, so a task that spins without spawning may
// keep its queued siblings to itself for as long as it runs, by design. With one worker B runs
// after A returns, so A does not wait there and the test checks the roots alone.
TEST_P(Pools, NoLostWakeUpAfterRandomPauses) {
  if (pool().options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin set";
  const int rounds = plait_test::sanitized ? 60 : 300;
  std::uint64_t x = 0x9E3779B97F4A7C15ull * (GetParam() + 1);
  int timeouts = 0;
  for (int r = 0; r < rounds; ++r) {
    x = plait_test::mix(x + static_cast<std::uint64_t>(r));
    std::this_thread::sleep_for(std::chrono::microseconds(x % 3000));
    std::atomic<bool> b_started{false};
    bool a_timed_out = false;
    long v = pool().run([&] {
      plait::task_group g;
      g.run([&] { b_started.store(true, std::memory_order_release); });
      if (GetParam() > 1) {
        g.run([&] {
          auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (!b_started.load(std::memory_order_acquire)) {
            if (std::chrono::steady_clock::now() > until) {
              a_timed_out = true;
              break;
            }
            auto h = plait::spawn([] { return 1; });
            (void)h.join();
          }
        });
      }
      g.wait();
      return fib_spawn(12);
    });
    EXPECT_EQ(v, 144);
    EXPECT_TRUE(b_started.load());
    if (a_timed_out) ++timeouts;
  }
  EXPECT_EQ(timeouts, 0) << "a queued task waited 10 s for an idle worker while its owner kept spawning";
}

TEST_P(Pools, CountersAreReadableAndResettable) {
  pool().reset_counters();
  pool().run([] { return fib_spawn(15); });
  auto per = pool().counters();
  ASSERT_EQ(per.size(), GetParam());
#if PLAIT_COUNTERS
  plait::worker_counters t;
  for (auto& c : per) t += c;
  EXPECT_EQ(t.spawns, 986u);  // fib_spawn(15) spawns once per call with n >= 2
  pool().reset_counters();
  EXPECT_EQ(pool().total_counters().spawns, 0u);
#endif
}

INSTANTIATE_TEST_SUITE_P(Runtime, Pools, plait_test::worker_counts, plait_test::workers_name);

TEST(Pool, SeveralPoolsAtOnce) {
  plait::pool a({.num_workers = 2});
  plait::pool b({.num_workers = 3});
  std::thread t([&] { EXPECT_EQ(b.run([] { return fib_spawn(20); }), 6765); });
  EXPECT_EQ(a.run([] { return fib_spawn(20); }), 6765);
  t.join();
}

TEST(Pool, PinnedAndSpinningPoolsWork) {
  plait::pool p({.num_workers = 2, .pin = plait::pin_policy::cores, .idle = plait::idle_policy::spin});
  EXPECT_EQ(p.run([] { return fib_spawn(20); }), 6765);
}

TEST(Pool, DoubleJoinThrows) {
  plait::pool p({.num_workers = 1});
  p.run([] {
    auto h = plait::spawn([] { return 1; });
    EXPECT_EQ(h.join(), 1);
    EXPECT_THROW(h.join(), std::logic_error);
  });
}

TEST(Pool, BadOptionsThrowOneLine) {
  EXPECT_THROW(plait::pool({.num_workers = 5000}), std::invalid_argument);
  EXPECT_THROW(plait::pool({.num_workers = 1, .stack_size = 1000}), std::invalid_argument);
  EXPECT_THROW(plait::pool({.num_workers = 1, .deque_capacity = 1000}), std::invalid_argument);
}

#ifndef NDEBUG
// Debug builds check the runtime's invariants with PLAIT_ASSERT; a failed check names itself.
TEST(PoolDeathTest, FailedInvariantCheckAbortsWithItsCondition) {
  int two = 2;
  EXPECT_DEATH(PLAIT_ASSERT(two == 3), "internal invariant violated: two == 3");
}
#endif

// A death test: `root`, run on a pool with options `o`, must abort the process with a message
// that matches `message`.
void expect_root_aborts(const plait::pool_options& o, const std::function<void()>& root, const char* message) {
  EXPECT_DEATH(
      {
        plait::pool p(o);
        p.run(root);
      },
      message);
}

TEST(PoolDeathTest, NonLifoJoinAbortsWithAMessage) {
  expect_root_aborts({.num_workers = 1}, [] {
    auto a = plait::spawn([] { return 1; });
    auto b = plait::spawn([] { return 2; });
    a.join();  // wrong: b is newer
    b.join();
  }, "join order violated");
}

// A join by a task other than the spawner. Run on the spawner's worker right above the handle
// (popped by the group's wait, run at once by the throttle, or a loop record), the joining task's
// head equals the handle's top: only the end of that task shows it (detail::check_frame, on with
// PLAIT_CHECK_JOINS: debug builds). On another worker, or below, the join's own check catches it
// in every build (JoinByAStolenGroupChildAborts).
#if PLAIT_CHECK_JOINS
const char* const wrong_joiner = "joined a spawn_handle of the task that created it";

TEST(PoolDeathTest, JoinByAGroupChildRunInPlaceAborts) {
  expect_root_aborts({.num_workers = 1}, [] {
    auto h = plait::spawn([] { return 1; });
    plait::task_group g;
    g.run([&] { (void)h.join(); });  // wrong: the group child did not spawn h
    g.wait();
  }, wrong_joiner);
}

TEST(PoolDeathTest, JoinByAThrottledGroupChildAborts) {
  expect_root_aborts({.num_workers = 1, .group_throttle = 1}, [] {
    auto h0 = plait::spawn([] { return 0; });
    auto h = plait::spawn([] { return 1; });
    plait::task_group g;
    g.run([] {});
    g.run([&] { (void)h.join(); });  // over the throttle: runs at once, right above h
    g.wait();
    (void)h0.join();
  }, wrong_joiner);
}

TEST(PoolDeathTest, JoinByALoopBodyAborts) {
  expect_root_aborts({.num_workers = 1}, [] {
    auto h = plait::spawn([] { return 1; });
    plait::parallel_for(0, 1, [&](std::int64_t) { (void)h.join(); }, plait::static_partition());
  }, wrong_joiner);
}

TEST(PoolDeathTest, JoinByAGroupChildThatRefillsTheSlotAborts) {
  // After the wrong join the child adds a child of its own, which lands in the handle's slot and
  // leaves the head where it started: the slot's content shows it.
  expect_root_aborts({.num_workers = 1}, [] {
    auto h = plait::spawn([] { return 1; });
    plait::task_group g, g2;
    g.run([&] {
      (void)h.join();
      g2.run([] {});
    });
    g.wait();
    g2.wait();
  }, wrong_joiner);
}
#endif

// The group child runs on the other worker (added before the handle, it is the oldest slot: the
// idle worker steals it): the join's own compare refuses it, in every build.
TEST(PoolDeathTest, JoinByAStolenGroupChildAborts) {
  expect_root_aborts({.num_workers = 2}, [] {
    auto body = [] { return 1; };
    std::atomic<plait::spawn_handle<decltype(body)>*> hp{nullptr};
    plait::task_group g;
    g.run([&] {
      plait::spawn_handle<decltype(body)>* h = nullptr;
      while ((h = hp.load()) == nullptr) {
      }
      (void)h->join();
    });
    auto h = plait::spawn(body);
    hp.store(&h);
    for (;;) {  // spawns publish for the idle worker's request; the thief's join aborts the process
      auto x = plait::spawn([] {});
      x.join();
    }
  }, "not among the unjoined spawns");
}

}  // namespace

namespace {

// The one small-object allocator (detail/task_alloc.hpp) used from everywhere at once: threads
// that are no worker allocate from the pool's depot (task_alloc_foreign) and free there
// (task_free_foreign); workers allocate from and free into their magazines; blocks cross between
// the two kinds in both directions. Every live block is filled with its own id and checked when
// it is freed: two live blocks never overlap and none is handed out twice (ASan: a freed block is
// poisoned, so a use after free is reported).
struct Block {
  unsigned char* p;
  std::size_t bytes;
  unsigned char id;
};

void fill(const Block& b) { std::memset(b.p, b.id, b.bytes); }
bool intact(const Block& b) {
  for (std::size_t i = 0; i < b.bytes; ++i)
    if (b.p[i] != b.id) return false;
  return true;
}

// task_alloc_resource packs nodes of its first size three to a 512-byte block of the magazines
// (the data-flow map's 136-byte nodes): distinct, non-overlapping, intact, reused after they come
// back, and other sizes still served; the blocks go back when the resource dies (ASan/LSan trees).
TEST(TaskAlloc, TheResourcePacksItsNodeSize) {
  plait::pool pool({.num_workers = 1});
  const int bad = pool.run([] {
    int errors = 0;
    plait::detail::task_alloc_resource r;
    constexpr std::size_t node = 136;
    std::vector<Block> nodes;
    for (int i = 0; i < 300; ++i) {
      Block b{static_cast<unsigned char*>(r.allocate(node, 8)), node, static_cast<unsigned char>(i)};
      fill(b);
      nodes.push_back(b);
    }
    std::vector<unsigned char*> starts;
    for (const Block& b : nodes) starts.push_back(b.p);
    std::sort(starts.begin(), starts.end());
    for (std::size_t i = 1; i < starts.size(); ++i)
      if (starts[i] - starts[i - 1] < static_cast<std::ptrdiff_t>(node)) ++errors;  // overlap
    // packed: consecutive nodes at the node's own stride (3 per block), not one block each
    std::size_t dense = 0;
    for (std::size_t i = 1; i < nodes.size(); ++i)
      if (nodes[i].p - nodes[i - 1].p == static_cast<std::ptrdiff_t>(node)) ++dense;
    if (dense < nodes.size() / 2) ++errors;
    void* other = r.allocate(40, 8);  // another size: a block of its own
    std::memset(other, 0xab, 40);
    for (const Block& b : nodes)
      if (!intact(b)) ++errors;
    unsigned char* const last = nodes.back().p;
    r.deallocate(last, node, 8);
    nodes.pop_back();
    if (r.allocate(node, 8) != last) ++errors;  // the node given back is handed out again
    r.deallocate(other, 40, 8);
    return errors;
  });
  EXPECT_EQ(bad, 0);
}

TEST(TaskAlloc, WorkersAndOutsideThreadsShareTheMagazines) {
  plait::pool pool({.num_workers = 2});
  plait::detail::Pool* home = pool.run([] { return plait::detail::current_worker()->pool; });
  const std::size_t sizes[] = {8, 64, 100, 128, 200, 256, 500, 512, 513, 2000};  // the last two: operator new
  constexpr int kThreads = 3, kPerThread = 3000;
  std::mutex mu;
  std::vector<Block> to_workers;  // allocated outside, freed by workers
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::uint64_t x = plait_test::mix(static_cast<std::uint64_t>(t) + 1);
      std::vector<Block> mine;
      for (int i = 0; i < kPerThread; ++i) {
        x = plait_test::mix(x);
        const std::size_t bytes = sizes[x % std::size(sizes)];
        Block b{static_cast<unsigned char*>(plait::detail::pool_alloc_bytes(home, bytes, 16)), bytes,
                static_cast<unsigned char>(x >> 8)};
        fill(b);
        mine.push_back(b);
        if (x % 3 == 0) {  // free one of ours now: the depot's strays fill and become batches
          const std::size_t k = (x >> 20) % mine.size();
          if (!intact(mine[k])) bad.fetch_add(1);
          plait::detail::pool_free_bytes(home, mine[k].p, mine[k].bytes, 16);
          mine[k] = mine.back();
          mine.pop_back();
        }
      }
      std::lock_guard<std::mutex> lk(mu);
      to_workers.insert(to_workers.end(), mine.begin(), mine.end());
    });
  }
  // Meanwhile the workers allocate and free in their magazines, going to the depot and back.
  std::vector<Block> from_workers(20000);
  pool.run([&] {
    plait::parallel_for(0, static_cast<std::int64_t>(from_workers.size()), [&](std::int64_t i) {
      const std::size_t bytes = sizes[static_cast<std::size_t>(i) % std::size(sizes)];
      Block b{static_cast<unsigned char*>(plait::detail::pool_alloc_bytes(home, bytes, 16)), bytes,
              static_cast<unsigned char>(i * 7)};
      fill(b);
      from_workers[static_cast<std::size_t>(i)] = b;
    });
  });
  for (auto& t : ts) t.join();
  // Outside blocks freed by workers, worker blocks freed outside: all still intact first.
  pool.run([&] {
    plait::parallel_for(0, static_cast<std::int64_t>(to_workers.size()), [&](std::int64_t i) {
      const Block& b = to_workers[static_cast<std::size_t>(i)];
      if (!intact(b)) bad.fetch_add(1);
      plait::detail::pool_free_bytes(home, b.p, b.bytes, 16);
    });
  });
  for (const Block& b : from_workers) {
    if (!intact(b)) bad.fetch_add(1);
    plait::detail::pool_free_bytes(home, b.p, b.bytes, 16);
  }
  EXPECT_EQ(bad.load(), 0);
  // And the magazines still hand out sound blocks afterwards, to both kinds of thread.
  void* a = plait::detail::pool_alloc_bytes(home, 64, 16);
  void* w = pool.run([home] { return plait::detail::pool_alloc_bytes(home, 64, 16); });
  EXPECT_NE(a, w);
  plait::detail::pool_free_bytes(home, a, 64, 16);
  plait::detail::pool_free_bytes(home, w, 64, 16);
}

}  // namespace
