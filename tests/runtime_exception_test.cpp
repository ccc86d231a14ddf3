#include "test_util.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace {

class Exceptions : public plait_test::Workers {};

struct TreeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::atomic<long> ran{0};

// A binary spawn tree of the given depth; the node with number `bad` throws.
long tree(int depth, long id, long bad) {
  ran.fetch_add(1, std::memory_order_relaxed);
  if (id == bad) throw TreeError("node " + std::to_string(id));
  if (depth == 0) return 1;
  auto h = plait::spawn([=] { return tree(depth - 1, 2 * id, bad); });
  long r = tree(depth - 1, 2 * id + 1, bad);
  return r + h.join();
}

TEST_P(Exceptions, FromAnyDepthReachTheJoin) {
  const int depth = 10;  // 2047 nodes, ids 1..2047
  for (long bad : {1L, 2L, 3L, 17L, 600L, 1024L, 2047L}) {
    ran = 0;
    try {
      pool().run([&] { return tree(depth, 1, bad); });
      FAIL() << "no exception for bad=" << bad;
    } catch (const TreeError& e) {
      EXPECT_EQ(std::string(e.what()), "node " + std::to_string(bad));
    }
    // Nothing ran twice: at most every node once.
    EXPECT_LE(ran.load(), 2047);
  }
  ran = 0;
  EXPECT_EQ(pool().run([] { return tree(10, 1, -1); }), 1024);
  EXPECT_EQ(ran.load(), 2047);  // and without an exception, every node exactly once
}

TEST_P(Exceptions, StolenTaskExceptionReachesJoin) {
  // Spawn a throwing task and keep the spawner busy so that thieves (if any) take it.
  for (int rep = 0; rep < 50; ++rep) {
    EXPECT_THROW(pool().run([] {
      auto h = plait::spawn([]() -> int { throw std::out_of_range("stolen"); });
      volatile long spin = 0;
      for (int i = 0; i < 20000; ++i) spin = spin + i;
      return h.join();
    }),
                 std::out_of_range);
  }
}

TEST_P(Exceptions, AbandonedHandleIsJoinedByItsDestructor) {
  std::atomic<int> done{0};
  EXPECT_THROW(pool().run([&] {
    auto h = plait::spawn([&done] { done++; return 1; });
    throw std::runtime_error("after spawn");
    return h.join();
  }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 1);
}

TEST_P(Exceptions, GroupRethrowsFirstAndRunsNoChildTwice) {
  std::atomic<int> ran_children{0};
  try {
    pool().run([&] {
      plait::task_group g;
      for (int i = 0; i < 500; ++i)
        g.run([&ran_children, i] {
          ran_children++;
          if (i == 250) throw std::invalid_argument("child 250");
        });
      g.wait();
    });
    FAIL() << "group did not rethrow";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "child 250");
  }
  EXPECT_GE(ran_children.load(), 1);
  EXPECT_LE(ran_children.load(), 500);
}

TEST_P(Exceptions, JoinRethrowsEitherSide) {
  EXPECT_THROW(pool().run([] { return plait::join([]() -> int { throw std::logic_error("f"); }, [] { return 1; }); }),
               std::logic_error);
  EXPECT_THROW(pool().run([] { return plait::join([] { return 1; }, []() -> int { throw std::logic_error("g"); }); }),
               std::logic_error);
}

TEST_P(Exceptions, PoolSurvivesAndKeepsWorking) {
  for (int i = 0; i < 20; ++i) EXPECT_THROW(pool().run([] { throw 42; }), int);
  EXPECT_EQ(pool().run([] { return tree(8, 1, -1); }), 256);
}

INSTANTIATE_TEST_SUITE_P(Runtime, Exceptions, plait_test::worker_counts, plait_test::workers_name);

}  // namespace
