// 10^4 random task trees per worker count: every task runs exactly once and the sums match.
#include "test_util.hpp"

#include <atomic>

namespace {

using plait_test::RandomTree;
using plait_test::TreeResult;

class Trees : public plait_test::Workers {};

using plait_test::spawn_tree;
std::atomic<std::uint64_t>& executed = plait_test::tree_tasks_run;

// Task-group variant: results accumulate in atomics.
void group_tree(const RandomTree& t, std::uint64_t id, unsigned depth, std::atomic<std::uint64_t>& nodes,
                std::atomic<std::uint64_t>& sum) {
  executed.fetch_add(1, std::memory_order_relaxed);
  nodes.fetch_add(1, std::memory_order_relaxed);
  sum.fetch_add(t.payload(id), std::memory_order_relaxed);
  unsigned k = t.children(id, depth);
  if (k == 0) return;
  plait::task_group g;
  for (unsigned i = 0; i < k; ++i)
    g.run([&, i] { group_tree(t, RandomTree::child_id(id, i), depth + 1, nodes, sum); });
  g.wait();
}

constexpr int trees = plait_test::sanitized ? 2000 : 10000;

TEST_P(Trees, RandomSpawnTreesRunEveryTaskOnce) {
  EXPECT_TRUE(plait_test::random_spawn_trees_run_once(pool(), trees, 1, 3, 1));
}

TEST_P(Trees, RandomGroupTreesRunEveryTaskOnce) {
  for (int s = 0; s < trees / 4; ++s) {
    RandomTree t{plait_test::mix(static_cast<std::uint64_t>(s) + 77), 3u + static_cast<unsigned>(s % 5),
                 1u + static_cast<unsigned>(s % 5)};
    TreeResult want = plait_test::serial_tree(t, 1, 0);
    executed = 0;
    std::atomic<std::uint64_t> nodes{0}, sum{0};
    pool().run([&] { group_tree(t, 1, 0, nodes, sum); });
    ASSERT_EQ(nodes.load(), want.nodes) << "seed " << s;
    ASSERT_EQ(sum.load(), want.sum) << "seed " << s;
    ASSERT_EQ(executed.load(), want.nodes) << "seed " << s;
  }
}

TEST_P(Trees, OneBigTreeBalancesAcrossWorkers) {
  // The first seed whose tree has 10^4..10^6 nodes (a fixed choice, found by search).
  RandomTree t{0, 16, 3};
  TreeResult want;
  for (std::uint64_t s = 1;; ++s) {
    t.seed = s;
    want = plait_test::serial_tree(t, 1, 0);
    if (want.nodes >= 10000 && want.nodes <= 1000000) break;
  }
  pool().reset_counters();
  TreeResult got = pool().run([&] { return spawn_tree(t, 1, 0); });
  EXPECT_EQ(got, want);
#if PLAIT_COUNTERS
  auto c = pool().total_counters();
  EXPECT_EQ(c.spawns + 1, want.nodes);  // every node but the root is a spawn
#endif
}

INSTANTIATE_TEST_SUITE_P(Runtime, Trees, plait_test::worker_counts, plait_test::workers_name);

}  // namespace
