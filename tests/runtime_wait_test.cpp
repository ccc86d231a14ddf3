// Latches and the wait loop: the latches alone (completion codes, the sleeping waiter's mark, no
// lost wake-up between a blocking waiter and a completer with random delays), and waiters inside
// a pool that sleep instead of burning a core when nothing is left to run (a long join, a long
// group wait, a caller outside the pool).
#include "test_util.hpp"

#include "pool_impl.hpp"  // internal: latches, run_until

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

namespace {

using plait::detail::CountLatch;
using plait::detail::latch_ref;
using plait::detail::OnceLatch;
using plait::detail::run_until;
using plait::detail::BlockWait;

constexpr int kRounds = plait_test::sanitized ? 300 : 3000;

// Aborts the process with a message if a test body hangs (a lost wake-up shows as a hang).
class Watchdog {
 public:
  explicit Watchdog(const char* what, int seconds = 60) : t_([this, what, seconds] {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > until) {
        std::fprintf(stderr, "watchdog: %s did not finish in %d s (lost wake-up?)\n", what, seconds);
        std::abort();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }) {}
  ~Watchdog() {
    done_.store(true, std::memory_order_release);
    t_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread t_;
};

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// What a wait cost the calling thread: its wall time and its CPU time, in milliseconds.
struct WaitCost {
  double wall = 0, cpu = 0;
};

template <class F>
WaitCost cost_of(F&& wait) {
  const double c0 = thread_cpu_ms();
  const auto t0 = std::chrono::steady_clock::now();
  wait();
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
          thread_cpu_ms() - c0};
}

// The waiter slept: it used less CPU than half of the wait's wall time.
::testing::AssertionResult slept(const WaitCost& c, const char* waiter, const char* wait) {
  if (c.cpu < 0.5 * c.wall) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the " << waiter << " burnt " << c.cpu << " ms of CPU in a " << c.wall
                                       << " ms " << wait;
}

// `rounds` calls of round(x), x a random word that changes from round to round (from `seed` on).
template <class Round>
void random_rounds(int rounds, std::uint64_t seed, Round round) {
  std::uint64_t x = seed;
  for (int r = 0; r < rounds; ++r) {
    x = plait_test::mix(x + static_cast<std::uint64_t>(r));
    round(x);
  }
}

void random_pause(std::uint64_t x) {
  switch (x % 4) {
    case 0: break;
    case 1:
      for (unsigned i = 0; i < x % 2000; ++i) __builtin_ia32_pause();
      break;
    case 2: std::this_thread::yield(); break;
    default: std::this_thread::sleep_for(std::chrono::microseconds(x % 1500)); break;
  }
}

TEST(Latch, OnceLatchCarriesItsCode) {
  OnceLatch l;
  EXPECT_FALSE(l.probe());
  l.set(2);
  EXPECT_TRUE(l.probe());
  EXPECT_EQ(l.code(), 2);
}

TEST(Latch, ArmReportsCompletionAndTheMarkHidesNothing) {
  OnceLatch l;
  EXPECT_TRUE(l.arm());  // pending: the waiter may sleep
  EXPECT_FALSE(l.probe());
  l.set(1);  // sees the mark: wakes (nobody sleeps here; harmless)
  EXPECT_TRUE(l.probe());
  EXPECT_EQ(l.code(), 1);
  EXPECT_FALSE(l.arm());  // complete: the waiter must not sleep
  l.disarm();
  EXPECT_EQ(l.code(), 1);

  CountLatch c;
  c.add(3);
  EXPECT_TRUE(c.arm());
  EXPECT_EQ(c.count(), 3);
  c.count_down(2);
  EXPECT_FALSE(c.probe());
  EXPECT_EQ(c.count(), 1);
  c.count_down(1);  // reaches zero with the mark: wakes
  EXPECT_TRUE(c.probe());
  EXPECT_FALSE(c.arm());
  c.disarm();
  EXPECT_EQ(c.count(), 0);
  c.add(1);  // reusable, as a task_group is
  EXPECT_FALSE(c.probe());
  c.count_down(1);
  EXPECT_TRUE(c.probe());
}

// A thread that is no worker waits (spin, then futex) while another sets the latch after a random
// pause: every round must end. Some rounds complete before the waiter arms, some while it
// spins, some while it sleeps.
TEST(Latch, BlockingWaiterSeesEveryCompletion) {
  Watchdog dog("Latch.BlockingWaiterSeesEveryCompletion");
  random_rounds(kRounds, 12345, [](std::uint64_t x) {
    OnceLatch l;
    int payload = 0;
    std::thread setter([&l, &payload, x] {
      random_pause(x);
      payload = 42;
      l.set(1);
    });
    random_pause(x >> 20);
    run_until(nullptr, latch_ref{&l, nullptr}, BlockWait{});
    EXPECT_EQ(payload, 42);  // published by the latch's release
    setter.join();
  });
}

// Several completers count a latch down; the waiter blocks until the last one.
TEST(Latch, BlockingWaiterSeesTheLastCountDown) {
  Watchdog dog("Latch.BlockingWaiterSeesTheLastCountDown");
  random_rounds(kRounds / 3, 777, [](std::uint64_t x) {
    CountLatch c;
    c.add(3);
    std::atomic<int> sum{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; ++i) {
      ts.emplace_back([&c, &sum, i, x] {
        random_pause(x >> (8 * i));
        sum.fetch_add(i + 1, std::memory_order_relaxed);
        c.count_down(1);
      });
    }
    run_until(nullptr, latch_ref{nullptr, &c}, BlockWait{});
    EXPECT_EQ(sum.load(std::memory_order_relaxed), 6);
    for (auto& t : ts) t.join();
  });
}

// The marks of a CountLatch count its sleeping waiters: one waiter leaving (woken spuriously, or
// finding the latch complete) keeps the others' marks, so the completion still wakes them.
TEST(Latch, CountLatchCountsItsSleepingWaiters) {
  CountLatch c;
  c.add(2);
  EXPECT_TRUE(c.arm());  // waiter A
  EXPECT_TRUE(c.arm());  // waiter B
  EXPECT_EQ(c.sleepers(), 2);
  c.disarm();  // A woke spuriously and leaves
  EXPECT_EQ(c.sleepers(), 1);  // B's mark stays: the completion below must wake it
  EXPECT_EQ(c.count(), 2);
  c.count_down(1);
  EXPECT_FALSE(c.probe());
  c.count_down(1);
  EXPECT_TRUE(c.probe());
  EXPECT_EQ(c.sleepers(), 1);
  c.disarm();  // B, woken
  EXPECT_EQ(c.sleepers(), 0);
  EXPECT_EQ(c.count(), 0);
}

// A waiter back from its sleep lingers a random while after it removed its mark, as a worker does
// that finds a task to run when it wakes: another waiter woken at the same time may mark the latch
// again and sleep meanwhile, and the completion may come before the lingering one looks again.

void linger_after_wake(plait::detail::protocol_point p) noexcept {
  if (p != plait::detail::protocol_point::latch_woken) return;
  thread_local std::uint64_t y = plait_test::mix(reinterpret_cast<std::uintptr_t>(&y));
  y = plait_test::mix(y);
  if (y % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(y % 500));
}

// Many threads wait for one CountLatch (as the members of an OpenMP team wait for a barrier phase)
// while the completer first wakes every sleeper a few times, so that they go back to sleep at
// different moments, and then completes the latch: every waiter of every round must see the
// completion. With a single `asleep` bit this hung — a waiter woken by the noise cleared the bit
// that another had set again before sleeping on, and the completion saw no sleeper.
TEST(Latch, ManyBlockingWaitersOnOneCountLatchAllWake) {
  Watchdog dog("Latch.ManyBlockingWaitersOnOneCountLatchAllWake");
  plait::detail::protocol_hook const saved = plait::detail::g_protocol_hook;
  plait::detail::g_protocol_hook = &linger_after_wake;
  constexpr int kWaiters = 5;
  random_rounds(kRounds / 10, 4242, [&](std::uint64_t x) {
    CountLatch c;
    c.add(1);
    std::atomic<int> woke{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < kWaiters; ++i) {
      ts.emplace_back([&c, &woke, i, x] {
        if (i == 0) random_pause(x);
        run_until(nullptr, latch_ref{nullptr, &c}, BlockWait{});
        woke.fetch_add(1, std::memory_order_relaxed);
      });
    }
    // Spurious wake-ups while the waiters arrive and sleep (as other latches' completions and
    // new work cause them), then the completion, often while a woken waiter lingers.
    const int bursts = 1 + static_cast<int>(x % 4);
    for (int b = 0; b < bursts; ++b) {
      std::this_thread::sleep_for(std::chrono::microseconds(200 + (x >> (3 * b)) % 800));
      plait::detail::wake_latch_waiters(&c);
    }
    std::this_thread::sleep_for(std::chrono::microseconds((x >> 40) % 600));
    c.count_down(1);
    for (auto& t : ts) t.join();
    EXPECT_EQ(woke.load(std::memory_order_relaxed), kWaiters);
    EXPECT_EQ(c.sleepers(), 0);
  });
  plait::detail::g_protocol_hook = saved;
}

// ---- targeted wake-ups (src/sleep.cpp) ---------------------------------------------------------

using plait::detail::HelpWait;
using plait::detail::sleep_counts;
using plait::detail::SleepCounts;

using plait_test::fib_serial;
using plait_test::fib_spawn;

template <class Pred>
bool wait_for(Pred pred, int seconds = 20) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

SleepCounts operator-(const SleepCounts& a, const SleepCounts& b) {
  return {a.latch_completions - b.latch_completions, a.latch_wakeups - b.latch_wakeups, a.work_wakeups - b.work_wakeups,
          a.idle_wakeups - b.idle_wakeups,          a.futex_waits - b.futex_waits,     a.futile_wakeups - b.futile_wakeups};
}

// A worker of `pool` waits (HelpWait) for its own CountLatch inside a root task, and sleeps there
// once nothing is left to run; the root is handed in from a thread of its own.
struct PoolWaiter {
  explicit PoolWaiter(unsigned workers) : pool(plait::pool_options{.num_workers = workers}) {
    latch.add(1);
    caller = std::thread([this] {
      pool.run([this] {
        run_until(plait::detail::current_worker(), latch_ref{nullptr, &latch}, HelpWait{});
        returned.store(true, std::memory_order_release);
      });
    });
  }
  ~PoolWaiter() {
    if (latch.count() != 0) latch.count_down(1);
    caller.join();
  }
  plait::pool pool;
  CountLatch latch;
  std::atomic<bool> returned{false};
  std::thread caller;
};

// Many waiters asleep at once on different latches — threads that are no worker and workers of
// several pools — and each completion wakes its own waiter and no other thread: one thread woken
// per completion, no sleeper woken for nothing. (With one process-wide futex word, each completion
// woke every latch sleeper of every pool: the others woke, found their latch pending and slept
// again.)
TEST(SleepModule, ACompletionWakesItsOwnWaiterAndNoOther) {
  if (!PLAIT_COUNTERS) GTEST_SKIP() << "needs the sleep module's counters (PLAIT_COUNTERS=1)";
  if (plait::pool({.num_workers = 1}).options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin";
  Watchdog dog("SleepModule.ACompletionWakesItsOwnWaiterAndNoOther");
  constexpr int kBlocked = 6, kPools = 3;
  std::vector<std::unique_ptr<OnceLatch>> latches;
  std::vector<std::unique_ptr<std::atomic<bool>>> back;
  for (int i = 0; i < kBlocked; ++i) {
    latches.push_back(std::make_unique<OnceLatch>());
    back.push_back(std::make_unique<std::atomic<bool>>(false));
  }
  std::vector<std::thread> blocked;
  for (int i = 0; i < kBlocked; ++i) {
    blocked.emplace_back([&, i] {
      run_until(nullptr, latch_ref{latches[static_cast<std::size_t>(i)].get(), nullptr}, BlockWait{});
      back[static_cast<std::size_t>(i)]->store(true, std::memory_order_release);
    });
  }
  std::vector<std::unique_ptr<PoolWaiter>> pools;
  for (int i = 0; i < kPools; ++i) pools.push_back(std::make_unique<PoolWaiter>(2));
  // Everyone asleep: each latch marked by its waiter.
  ASSERT_TRUE(wait_for([&] {
    for (auto& l : latches)
      if (!l->marked()) return false;
    for (auto& p : pools)
      if (p->latch.sleepers() != 1) return false;
    return true;
  })) << "the waiters did not all go to sleep";
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the pools' other workers too

  // The threads that are no worker, one at a time: nothing else may wake.
  for (int i = 0; i < kBlocked; ++i) {
    const SleepCounts before = sleep_counts();
    latches[static_cast<std::size_t>(i)]->set(1);
    ASSERT_TRUE(wait_for([&] { return back[static_cast<std::size_t>(i)]->load(std::memory_order_acquire); }));
    const SleepCounts d = sleep_counts() - before;
    EXPECT_EQ(d.latch_completions, 1u) << "latch " << i;
    EXPECT_EQ(d.latch_wakeups, 1u) << "latch " << i << ": one completion woke " << d.latch_wakeups << " threads";
    EXPECT_EQ(d.futex_waits, 0u) << "latch " << i << ": " << d.futex_waits << " sleepers woke and slept again";
    EXPECT_EQ(d.futile_wakeups, 0u) << "latch " << i;
    for (int j = i + 1; j < kBlocked; ++j) EXPECT_TRUE(latches[static_cast<std::size_t>(j)]->marked()) << j;
  }
  // The pools' waiters: each completion wakes that worker only (the root it returns from then
  // completes its caller's latch: a second completion with its one waiter).
  for (int i = 0; i < kPools; ++i) {
    const SleepCounts before = sleep_counts();
    pools[static_cast<std::size_t>(i)]->latch.count_down(1);
    ASSERT_TRUE(wait_for([&] { return pools[static_cast<std::size_t>(i)]->returned.load(std::memory_order_acquire); }));
    const SleepCounts d = sleep_counts() - before;
    EXPECT_GE(d.latch_completions, 1u);
    EXPECT_EQ(d.latch_wakeups, d.latch_completions) << "pool " << i;
    EXPECT_EQ(d.futile_wakeups, 0u) << "pool " << i;
    for (int j = i + 1; j < kPools; ++j) EXPECT_EQ(pools[static_cast<std::size_t>(j)]->latch.sleepers(), 1) << j;
  }
  for (auto& t : blocked) t.join();
  pools.clear();
}

// New work of one pool does not wake the latch waiters of another: a worker of pool B sleeps in a
// group wait while pool A runs a spawn-heavy program (thousands of publications). B's workers do
// not wake; the waiter then wakes for its own latch.
TEST(SleepModule, NewWorkOfOnePoolLeavesAnotherPoolsWaitersAsleep) {
  if (!PLAIT_COUNTERS) GTEST_SKIP() << "needs the per-worker counters (PLAIT_COUNTERS=1)";
  if (plait::pool({.num_workers = 1}).options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin";
  Watchdog dog("SleepModule.NewWorkOfOnePoolLeavesAnotherPoolsWaitersAsleep");
  PoolWaiter b(2);
  ASSERT_TRUE(wait_for([&] { return b.latch.sleepers() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::uint64_t b_sleeps = b.pool.total_counters().sleeps;
  plait::pool a({.num_workers = 2});
  std::uint64_t publishes = 0;
  for (int rep = 0; rep < 5; ++rep) {
    EXPECT_EQ(a.run([] { return fib_spawn(22); }), fib_serial(22));
    publishes = a.total_counters().publishes;
  }
  EXPECT_GT(publishes, 0u);
  EXPECT_EQ(b.pool.total_counters().sleeps, b_sleeps) << "pool A's " << publishes << " publications woke pool B's workers";
  EXPECT_EQ(b.latch.sleepers(), 1);
  b.latch.count_down(1);
  ASSERT_TRUE(wait_for([&] { return b.returned.load(std::memory_order_acquire); }));
}

// Every test under a watchdog named after it (suite, test and worker count).
class Waits : public plait_test::Workers {
 protected:
  void SetUp() override {
    plait_test::Workers::SetUp();
    const ::testing::TestInfo* ti = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = std::string(ti->test_suite_name()) + "." + ti->name();
    dog_.emplace(name_.c_str());
  }
  bool skip() {
    if (pool().options().idle != plait::idle_policy::sleep) return true;
    return GetParam() < 2;  // with one worker nothing is ever stolen: no join or group wait waits
  }
  std::string name_;
  std::optional<Watchdog> dog_;
};

constexpr auto kLong = std::chrono::milliseconds(300);

// A long task: it says that it started, then sleeps for kLong.
void long_task(std::atomic<bool>& started) {
  started.store(true, std::memory_order_release);
  std::this_thread::sleep_for(kLong);
}

void until_started(const std::atomic<bool>& started) {
  while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
}

// A wait for a long task that started just before: it lasted more than 200 ms, and the waiter slept.
::testing::AssertionResult slept_through_long_wait(const WaitCost& c, const char* waiter, const char* wait) {
  if (c.wall <= 200.0) return ::testing::AssertionFailure() << "the " << wait << " lasted only " << c.wall << " ms";
  return slept(c, waiter, wait);
}

// A join whose task was stolen and runs for a long time, with nothing else to run: the joiner
// sleeps (its thread uses far less CPU than the wait lasts) and wakes when the task is done.
TEST_P(Waits, LongJoinSleeps) {
  if (skip()) GTEST_SKIP() << "needs 2+ workers and PLAIT_IDLE=sleep";
  WaitCost cost;
  int v = pool().run([&] {
    std::atomic<bool> started{false};
    auto h = plait::spawn([&] {
      long_task(started);
      return 7;
    });
    until_started(started);  // stolen by now
    int r = 0;
    cost = cost_of([&] { r = h.join(); });
    return r;
  });
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(slept_through_long_wait(cost, "joiner", "join"));
}

// The same for a task_group wait whose last child runs elsewhere for a long time.
TEST_P(Waits, LongGroupWaitSleeps) {
  if (skip()) GTEST_SKIP() << "needs 2+ workers and PLAIT_IDLE=sleep";
  WaitCost cost;
  int v = pool().run([&] {
    std::atomic<bool> started{false};
    int out = 0;
    plait::task_group g;
    g.run([&] {
      long_task(started);
      out = 9;
    });
    until_started(started);
    cost = cost_of([&] { g.wait(); });
    return out;
  });
  EXPECT_EQ(v, 9);
  EXPECT_TRUE(slept_through_long_wait(cost, "group waiter", "wait"));
}

// A sleeping joiner still helps: the thief, after a pause long enough for the joiner to fall
// asleep, spawns work that the joiner may take (it is woken by the publication).
TEST_P(Waits, SleepingJoinerWakesForTheThiefsWork) {
  if (skip()) GTEST_SKIP() << "needs 2+ workers and PLAIT_IDLE=sleep";
  long v = pool().run([&] {
    std::atomic<bool> started{false};
    auto h = plait::spawn([&] {
      started.store(true, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      plait::task_group g;
      std::atomic<long> s{0};
      for (int i = 0; i < 64; ++i)
        g.run([&s, i] {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          s.fetch_add(i, std::memory_order_relaxed);
        });
      g.wait();
      return s.load(std::memory_order_relaxed);
    });
    until_started(started);
    return h.join();
  });
  EXPECT_EQ(v, 64 * 63 / 2);
}

// A thread outside the pool waiting for a long root sleeps too.
TEST_P(Waits, OutsideCallerSleeps) {
  if (pool().options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin set";
  int v = 0;
  const WaitCost cost = cost_of([&] {
    v = pool().run([] {
      std::this_thread::sleep_for(kLong);
      return 3;
    });
  });
  EXPECT_EQ(v, 3);
  EXPECT_TRUE(slept(cost, "caller", "root"));
}

// No sleeper is left while work exists: after every worker fell asleep, a root adds one child per
// worker, and each child waits until all of them have started. That ends only if every sleeping
// worker is woken for the published children.
TEST_P(Waits, EverySleeperWakesForPublishedWork) {
  if (pool().options().idle != plait::idle_policy::sleep) GTEST_SKIP() << "PLAIT_IDLE=spin set";
  const unsigned n = GetParam();
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // everyone is asleep by now
    std::atomic<unsigned> started{0};
    std::atomic<unsigned> timed_out{0};
    pool().run([&] {
      plait::task_group g;
      for (unsigned i = 0; i < n; ++i)
        g.run([&] {
          started.fetch_add(1, std::memory_order_acq_rel);
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (started.load(std::memory_order_acquire) < n) {
            if (std::chrono::steady_clock::now() > until) {
              timed_out.fetch_add(1, std::memory_order_relaxed);
              break;
            }
            // A spawn and join serve thieves' requests: the runtime publishes private work only at
            // pushes and pops, so a child that spun without them would keep its queued siblings.
            auto h = plait::spawn([] { return 1; });
            (void)h.join();
            std::this_thread::yield();
          }
        });
      g.wait();
    });
    EXPECT_EQ(timed_out.load(), 0u) << "round " << round << ": only " << started.load() << " of " << n
                                    << " children started within 10 s";
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, Waits, plait_test::worker_counts, plait_test::workers_name);

}  // namespace
