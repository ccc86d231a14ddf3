#include "test_util.hpp"

#include <array>
#include <memory>
#include <vector>

namespace {

class Fib : public plait_test::Workers {};

using plait_test::fib_serial;
using plait_test::fib_spawn;

long fib_join(int n) {
  if (n < 2) return n;
  auto [a, b] = plait::join([n] { return fib_join(n - 1); }, [n] { return fib_join(n - 2); });
  return a + b;
}

// Number of spawns fib_spawn(n) performs: one per call with n >= 2.
[[maybe_unused]] std::uint64_t spawns_of(int n) { return n < 2 ? 0 : 1 + spawns_of(n - 1) + spawns_of(n - 2); }

TEST_P(Fib, FibValuesSpawn) {
  for (int n = 0; n <= 27; ++n) EXPECT_EQ(pool().run([n] { return fib_spawn(n); }), fib_serial(n)) << "n=" << n;
}

TEST_P(Fib, FibValuesJoin) {
  for (int n : {0, 1, 2, 10, 20, 25}) EXPECT_EQ(pool().run([n] { return fib_join(n); }), fib_serial(n)) << "n=" << n;
}

TEST_P(Fib, CountersCountEverySpawn) {
  pool().reset_counters();
  EXPECT_EQ(pool().run([] { return fib_spawn(22); }), fib_serial(22));
  plait::worker_counters c = pool().total_counters();
#if PLAIT_COUNTERS
  EXPECT_EQ(c.spawns, spawns_of(22));
  EXPECT_LE(c.steals, c.spawns);
  // Every steal (and the attempt before it) happens-before the root completes, so this holds in
  // the snapshot; failures do not: idle workers keep failing attempts while we read.
  EXPECT_LE(c.steals, c.steal_attempts);
  EXPECT_EQ(c.injected, 1u);
  if (GetParam() == 1) {
    EXPECT_EQ(c.steals, 0u);
  }
#else
  EXPECT_EQ(c.spawns, 0u);
#endif
}

TEST_P(Fib, VoidAndMoveOnlyResults) {
  auto r = pool().run([] {
    int side = 0;
    auto h = plait::spawn([&side] { side = 7; });
    h.join();
    auto m = plait::spawn([] { return std::make_unique<int>(42); });
    std::unique_ptr<int> p = m.join();
    auto [a, b] = plait::join([] {}, [] { return 3; });
    (void)a;
    return side + *p + b;
  });
  EXPECT_EQ(r, 52);
}

TEST_P(Fib, LargeClosuresNeedNoHeap) {
  // A 1 KiB capture lives in the handle, not in the slot.
  long r = pool().run([] {
    std::array<long, 128> big{};
    for (int i = 0; i < 128; ++i) big[i] = i;
    auto h = plait::spawn([big] {
      long s = 0;
      for (long x : big) s += x;
      return s;
    });
    return h.join();
  });
  EXPECT_EQ(r, 127L * 128 / 2);
}

INSTANTIATE_TEST_SUITE_P(Runtime, Fib, plait_test::worker_counts, plait_test::workers_name);

TEST(Spawn, OutsideAWorkerThrowsLogicError) {
  try {
    auto h = plait::spawn([] { return 1; });
    (void)h;
    FAIL() << "spawn outside a worker did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a plait worker"), std::string::npos) << e.what();
  }
}

TEST(Spawn, JoinOutsideAWorkerRunsOnTheDefaultPool) {
  auto [a, b] = plait::join([] { return 1; }, [] { return 2; });
  EXPECT_EQ(a + b, 3);
}

}  // namespace
