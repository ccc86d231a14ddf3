#include "test_util.hpp"

#include <atomic>
#include <vector>

namespace {

class Groups : public plait_test::Workers {};

TEST_P(Groups, ManyChildren) {
  std::atomic<long> sum{0};
  pool().run([&] {
    plait::task_group g;
    for (int i = 1; i <= 10000; ++i) g.run([&sum, i] { sum += i; });
    g.wait();
  });
  EXPECT_EQ(sum.load(), 10000L * 10001 / 2);
}

TEST_P(Groups, ChildrenAddChildrenToTheSameGroup) {
  std::atomic<long> count{0};
  pool().run([&] {
    plait::task_group g;
    // Each child adds two grandchildren to the same group, three levels deep: 1+2+4+8 per root.
    std::function<void(int)> node = [&](int level) {
      count++;
      if (level < 3)
        for (int k = 0; k < 2; ++k) g.run([&node, level] { node(level + 1); });
    };
    for (int i = 0; i < 100; ++i) g.run([&node] { node(0); });
    g.wait();
  });
  EXPECT_EQ(count.load(), 100 * 15);
}

TEST_P(Groups, NestedGroups) {
  std::atomic<long> leaves{0};
  pool().run([&] {
    plait::task_group outer;
    for (int i = 0; i < 20; ++i)
      outer.run([&] {
        plait::task_group inner;
        for (int j = 0; j < 20; ++j)
          inner.run([&] {
            plait::task_group innermost;
            for (int k = 0; k < 5; ++k) innermost.run([&] { leaves++; });
            innermost.wait();
          });
        inner.wait();
      });
    outer.wait();
  });
  EXPECT_EQ(leaves.load(), 20 * 20 * 5);
}

TEST_P(Groups, MixedWithSpawnHandles) {
  // A group waited for between a spawn and its join must leave the handle's slot alone.
  long r = pool().run([] {
    long total = 0;
    for (int rep = 0; rep < 200; ++rep) {
      std::atomic<long> s{0};
      plait::task_group g;
      auto h = plait::spawn([] { return 5L; });
      for (int i = 0; i < 8; ++i) g.run([&s] { s += 1; });
      g.wait();
      total += h.join() + s.load();
    }
    return total;
  });
  EXPECT_EQ(r, 200L * 13);
}

TEST_P(Groups, WaitCanBeCalledAgainAndGroupReused) {
  std::atomic<int> n{0};
  pool().run([&] {
    plait::task_group g;
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < 10; ++i) g.run([&n] { n++; });
      g.wait();
      ASSERT_EQ(n.load(), (round + 1) * 10);
    }
    g.wait();  // nothing pending: returns at once
  });
}

TEST_P(Groups, CancelSkipsChildrenNotStarted) {
  std::atomic<int> ran{0};
  const int total = 2000;
  pool().run([&] {
    plait::task_group g;
    for (int i = 0; i < total; ++i) g.run([&ran] { ran++; });
    g.cancel();
    EXPECT_TRUE(g.is_canceling());
    g.wait();
  });
  // On one worker nothing can start before cancel(); elsewhere thieves may have run a few.
  if (GetParam() == 1) {
    EXPECT_EQ(ran.load(), 0);
  }
  EXPECT_LT(ran.load(), total);
}

TEST_P(Groups, CancelFromAChildStopsTheRest) {
  std::atomic<int> ran{0};
  pool().run([&] {
    plait::task_group g;
    g.run([&g] { g.cancel(); });
    for (int i = 0; i < 1000; ++i) g.run([&ran] { ran++; });
    g.wait();
    // The group is usable again after wait(): cancellation was cleared.
    std::atomic<int> after{0};
    for (int i = 0; i < 10; ++i) g.run([&after] { after++; });
    g.wait();
    EXPECT_EQ(after.load(), 10);
  });
  // Children are popped newest first, so the canceller (the oldest) runs last on one worker.
  EXPECT_LE(ran.load(), 1000);
}

TEST_P(Groups, DestructorWaits) {
  std::atomic<int> n{0};
  pool().run([&] {
    {
      plait::task_group g;
      for (int i = 0; i < 100; ++i) g.run([&n] { n++; });
    }  // no wait(): the destructor waits
    EXPECT_EQ(n.load(), 100);
  });
}

// How deeply tasks nest on one thread: a wait() that ran the slots of enclosing groups nested one
// frame per task (found by the floorplan kernel as a 1 GiB stack overflow at 1 worker).
thread_local int nesting = 0;
std::atomic<int> max_nesting{0};

void group_tree(int depth, std::atomic<long>& leaves) {
  int n = ++nesting;
  int seen = max_nesting.load();
  while (n > seen && !max_nesting.compare_exchange_weak(seen, n)) {
  }
  if (depth == 0) {
    leaves++;
  } else {
    plait::task_group g;
    for (int i = 0; i < 6; ++i) g.run([depth, &leaves] { group_tree(depth - 1, leaves); });
    g.wait();
  }
  --nesting;
}

TEST_P(Groups, NestedWaitsStayAsDeepAsTheTree) {
  std::atomic<long> leaves{0};
  max_nesting = 0;
  pool().run([&] { group_tree(6, leaves); });  // 6^6 = 46,656 leaves, 55,987 tasks
  EXPECT_EQ(leaves.load(), 46656);
  // One worker: exactly the tree depth (7 levels). More workers: helping a wait by stealing may
  // nest a few stolen subtrees, but never one frame per task.
  if (GetParam() == 1) {
    EXPECT_EQ(max_nesting.load(), 7);
  }
  EXPECT_LE(max_nesting.load(), 64) << "tasks nest with the number of tasks, not the tree depth";
}

INSTANTIATE_TEST_SUITE_P(Runtime, Groups, plait_test::worker_counts, plait_test::workers_name);

TEST(Groups, RunOutsideAWorkerThrows) {
  plait::task_group g;
  EXPECT_THROW(g.run([] {}), std::logic_error);
}

}  // namespace
