// Shared helpers for the runtime tests: worker-count parameterisation and random trees.
#pragma once

#include <plait/plait.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace plait_test {

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

}  // namespace plait_test
