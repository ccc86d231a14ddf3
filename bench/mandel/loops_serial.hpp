// Serial executor for the loop benchmarks (see loops.hpp): the serial elision. Every variant's
// chunks run in loop order on the calling thread, so "tasks" counts the chunks the variant would
// create and affinity is 1 by construction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "mandel/loops.hpp"

namespace loops {

struct exec_serial {
  static constexpr const char* name = "serial";
  explicit exec_serial(plait_bench::Cli& cli) { opt_.add(cli, {}); }
  void start(const plait_bench::Cli& cli) { s_ = opt_.get(cli); }
  const spec& get() const { return s_; }
  int slots() const { return 1; }

  template <class F>
  void run(std::int64_t n, tracker& tr, F&& body) {
    auto chunk = [&](std::int64_t lo, std::int64_t hi) {
      tr.enter(0, lo, hi);
      body(lo, hi);
    };
    switch (s_.v) {
      case variant::puretask_single:
      case variant::puretask_parallel:
        for (std::int64_t k = 0, m = fixed_chunks(n, s_.grain); k < m; ++k)
          chunk(k * s_.grain, std::min(n, (k + 1) * s_.grain));
        break;
      case variant::taskloop_linear: {
        const taskloop_rule r = taskloop_rule::make(n, s_);
        for (std::int64_t k = 0; k < r.tasks; ++k) chunk(r.lo(k), r.hi(k));
        break;
      }
      case variant::taskloop_recursive: {
        std::vector<std::pair<std::int64_t, std::int64_t>> leaves;
        recursive_leaves(0, n, s_.grain, leaves);
        for (auto [lo, hi] : leaves) chunk(lo, hi);
        break;
      }
      case variant::ws_dynamic:
        for (std::int64_t k = 0, m = fixed_chunks(n, s_.chunk); k < m; ++k)
          chunk(k * s_.chunk, std::min(n, (k + 1) * s_.chunk));
        break;
      case variant::ws_static:
      case variant::ws_guided:
      case variant::adaptive:
        if (n > 0) chunk(0, n);
        break;
    }
  }
  void reset_stats() {}
  void stats(plait_bench::Record&) const {}

 private:
  options opt_;
  spec s_;
};

}  // namespace loops
