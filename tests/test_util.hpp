// Shared helpers for the runtime tests: worker-count parameterisation and random trees.
#pragma once

#include <plait/plait.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace plait_test {

// The ThreadSanitizer and AddressSanitizer trees, where the tests run several times slower: the
// stress tests run fewer rounds there (the shapes are the same).
#if defined(PLAIT_TSAN) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

// 1 and 2 workers, and oversubscribed 8 and 16 on a 2-core machine.
inline const auto worker_counts = ::testing::Values(1u, 2u, 8u, 16u);

inline std::string workers_name(const ::testing::TestParamInfo<unsigned>& info) {
  return "w" + std::to_string(info.param);
}

class Workers : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override { pool_ = std::make_unique<plait::pool>(plait::pool_options{.num_workers = GetParam()}); }
  plait::pool& pool() { return *pool_; }
  std::unique_ptr<plait::pool> pool_;
};

// A steal policy under test: its name (in the parameterised tests' names), the policy, the chunk.
struct StealPolicy {
  const char* name;
  plait::steal_policy steal;
  std::size_t chunk;
};

// Designated initialisers: they keep compiling if the policy fields become std::optional.
inline std::unique_ptr<plait::pool> make_pool(unsigned workers, const StealPolicy& p) {
  return std::make_unique<plait::pool>(
      plait::pool_options{.num_workers = workers, .steal = p.steal, .steal_chunk = p.chunk});
}

inline long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// Fibonacci with a spawn per call (n >= 2), joined after the serial half.
inline long fib_spawn(int n) {
  if (n < 2) return n;
  auto a = plait::spawn([n] { return fib_spawn(n - 1); });
  long b = fib_spawn(n - 2);
  return a.join() + b;
}

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// A random tree defined by (seed, node id): a node's children and payload follow from its hash.
struct RandomTree {
  std::uint64_t seed;
  unsigned max_depth;
  unsigned max_fanout;
  unsigned children(std::uint64_t id, unsigned depth) const {
    if (depth >= max_depth) return 0;
    return static_cast<unsigned>(mix(seed ^ (id * 0x9E3779B97F4A7C15ULL)) % (max_fanout + 1));
  }
  static std::uint64_t child_id(std::uint64_t id, unsigned i) { return mix(id + 0x632BE59BD9B4E019ULL * (i + 1)); }
  std::uint64_t payload(std::uint64_t id) const { return mix(id ^ seed) >> 8; }
};

struct TreeResult {
  std::uint64_t nodes = 0;
  std::uint64_t sum = 0;
  bool operator==(const TreeResult& o) const { return nodes == o.nodes && sum == o.sum; }
};

// The spawn variant of a random tree: children spawned one at a time through recursion over the
// child index, so the handles are joined LIFO whatever the fan-out. Every node adds one to
// `tree_tasks_run` (tests reset it and compare with the node count: each task ran exactly once).
inline std::atomic<std::uint64_t> tree_tasks_run{0};

TreeResult spawn_children(const RandomTree& t, std::uint64_t id, unsigned depth, unsigned i, unsigned k);

inline TreeResult spawn_tree(const RandomTree& t, std::uint64_t id, unsigned depth) {
  tree_tasks_run.fetch_add(1, std::memory_order_relaxed);
  TreeResult c = spawn_children(t, id, depth, 0, t.children(id, depth));
  return {1 + c.nodes, t.payload(id) + c.sum};
}

inline TreeResult spawn_children(const RandomTree& t, std::uint64_t id, unsigned depth, unsigned i, unsigned k) {
  if (i == k) return {};
  auto h = plait::spawn([&t, id, depth, i] { return spawn_tree(t, RandomTree::child_id(id, i), depth + 1); });
  TreeResult rest = spawn_children(t, id, depth, i + 1, k);
  TreeResult mine = h.join();
  return {rest.nodes + mine.nodes, rest.sum + mine.sum};
}

// Sets (v != null) or unsets an environment variable for the guard's lifetime.
struct EnvGuard {
  std::string name, old;
  bool had;
  EnvGuard(const char* n, const char* v) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    if (v)
      setenv(n, v, 1);
    else
      unsetenv(n);
  }
  ~EnvGuard() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

inline TreeResult serial_tree(const RandomTree& t, std::uint64_t id, unsigned depth) {
  TreeResult r{1, t.payload(id)};
  unsigned k = t.children(id, depth);
  for (unsigned i = 0; i < k; ++i) {
    TreeResult c = serial_tree(t, RandomTree::child_id(id, i), depth + 1);
    r.nodes += c.nodes;
    r.sum += c.sum;
  }
  return r;
}

// `count` random trees run as spawn trees on `p` against the serial walk. Tree s has seed
// mix(s + salt), at most `depth` + s % 6 levels below the root and `fanout` + s % 4 children a
// node. Each must give the serial node count and payload sum, and every node's task must run
// exactly once; the first tree that does not ends the check.
inline ::testing::AssertionResult random_spawn_trees_run_once(plait::pool& p, int count, std::uint64_t salt,
                                                              unsigned depth, unsigned fanout) {
  for (int s = 0; s < count; ++s) {
    const RandomTree t{mix(static_cast<std::uint64_t>(s) + salt), depth + static_cast<unsigned>(s % 6),
                       fanout + static_cast<unsigned>(s % 4)};
    const TreeResult want = serial_tree(t, 1, 0);
    tree_tasks_run = 0;
    const TreeResult got = p.run([&] { return spawn_tree(t, 1, 0); });
    if (got.nodes != want.nodes || got.sum != want.sum)
      return ::testing::AssertionFailure() << "seed " << s << ": nodes " << got.nodes << ", sum " << got.sum
                                           << "; serial: nodes " << want.nodes << ", sum " << want.sum;
    if (tree_tasks_run.load() != want.nodes)
      return ::testing::AssertionFailure() << "seed " << s << ": " << tree_tasks_run.load() << " tasks ran for "
                                           << want.nodes << " nodes: a task ran twice or never";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace plait_test
