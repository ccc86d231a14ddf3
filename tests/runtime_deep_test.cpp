// Deep recursion with default settings: no stack overflow, no abort when deques fill.
#include "test_util.hpp"

namespace {

class Deep : public plait_test::Workers {};

// A chain: every level spawns the next and joins it.
long chain(long n) {
  if (n == 0) return 0;
  auto h = plait::spawn([n] { return chain(n - 1); });
  return h.join() + 1;
}

// A UTS-like tree 20,000 levels deep: a spine of depth D where every node also spawns a small
// side subtree, so thieves steal from all along the spine.
long side(int k) {
  if (k == 0) return 1;
  auto a = plait::spawn([k] { return side(k - 1); });
  long b = side(k - 1);
  return a.join() + b + 1;
}
long spine(long depth) {
  if (depth == 0) return 1;
  auto s = plait::spawn([depth] { return side(static_cast<int>(depth % 4)); });
  long down = spine(depth - 1);
  return down + s.join() + 1;
}
long side_nodes(int k) { return k == 0 ? 1 : 2 * side_nodes(k - 1) + 1; }

#if defined(PLAIT_TSAN)
// ThreadSanitizer keeps a fixed shadow call stack of 64K entries per thread and crashes beyond it
// (about 4 frames per level at -O1), so the TSan tree runs these shapes 10,000 levels deep. The
// gcc, clang-16, debug and ASan trees run the full sizes. See docs/design.md section 5.
constexpr long chain_len = 10000;
constexpr long tree_depth = 10000;
#else
constexpr long chain_len = 1000000;
constexpr long tree_depth = 20000;
#endif

TEST_P(Deep, MillionNestedSpawnJoin) { EXPECT_EQ(pool().run([] { return chain(chain_len); }), chain_len); }

TEST_P(Deep, TwentyThousandLevelTree) {
  long want = 1;
  for (long i = 1; i <= tree_depth; ++i) want += 1 + side_nodes(static_cast<int>(i % 4));
  EXPECT_EQ(pool().run([] { return spine(tree_depth); }), want);
}

INSTANTIATE_TEST_SUITE_P(Runtime, Deep, plait_test::worker_counts, plait_test::workers_name);

TEST(Deep, FullDequeRunsSpawnsInline) {
  // 64 slots: the chain overflows the deque after 64 levels and carries on inline.
  plait::pool p({.num_workers = 2, .deque_capacity = 64});
  EXPECT_EQ(p.run([] { return chain(10000); }), 10000);
  EXPECT_EQ(p.run([] { return spine(2000); }), [] {
    long want = 1;
    for (long i = 1; i <= 2000; ++i) want += 1 + side_nodes(static_cast<int>(i % 4));
    return want;
  }());
}

}  // namespace
