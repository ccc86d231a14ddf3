// oneTBB executor for the loop benchmarks (see loops.hpp).
//   puretask-single     tbb::task_group from one thread: g.run(chunk) per chunk of G, g.wait()
//   puretask-parallel   tbb::parallel_for (static_partitioner) over the chunk indices, each body
//                       g.run(chunk) into one task_group; then g.wait()
//   taskloop-linear     task_group from one thread with the OpenMP taskloop chunk rule (grainsize G /
//                       num_tasks N), i.e. what #pragma omp taskloop does
//   taskloop-recursive  tbb::parallel_for, blocked_range grain G, simple_partitioner (halving to <= G)
//   ws-static           tbb::parallel_for with static_partitioner
//   adaptive            tbb::parallel_for with auto_partitioner (TBB's default)
// ws-dynamic and ws-guided have no oneTBB counterpart and are rejected (exit 2).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <cstdint>
#include <memory>

#include "mandel/loops.hpp"
#include "mandel/loops_task_group.hpp"

namespace loops {

struct exec_tbb {
  static constexpr const char* name = "tbb";

  explicit exec_tbb(plait_bench::Cli& cli) {
    opt_.add(cli, {"puretask-single", "puretask-parallel", "taskloop-linear", "taskloop-recursive", "ws-static",
                   "adaptive"});
  }
  void start(const plait_bench::Cli& cli) {
    s_ = opt_.get(cli);
    threads_ = static_cast<int>(cli.threads);
    gc_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                static_cast<std::size_t>(threads_));
    arena_ = std::make_unique<tbb::task_arena>(threads_);
    arena_->initialize();
  }
  const spec& get() const { return s_; }
  int slots() const { return threads_; }

  template <class F>
  void run(std::int64_t n, tracker& tr, F&& body) {
    auto chunk = [&tr, &body](std::int64_t lo, std::int64_t hi) {
      tr.enter(tbb::this_task_arena::current_thread_index(), lo, hi);
      body(lo, hi);
    };
    using range = tbb::blocked_range<std::int64_t>;
    auto ranges = [&chunk](const range& r) { chunk(r.begin(), r.end()); };
    const spec s = s_;
    arena_->execute([&] {
      switch (s.v) {
        case variant::puretask_single: chunk_tasks_single<tbb::task_group>(chunk, n, s.grain); break;
        case variant::puretask_parallel: {
          tbb::task_group g;
          tbb::parallel_for(
              range(0, fixed_chunks(n, s.grain), 1),
              [&](const range& ks) {
                for (std::int64_t k = ks.begin(); k != ks.end(); ++k) run_chunk(g, chunk, k, n, s.grain);
              },
              tbb::static_partitioner());
          g.wait();
          break;
        }
        case variant::taskloop_linear: {
          const taskloop_rule r = taskloop_rule::make(n, s);
          tbb::task_group g;
          for (std::int64_t k = 0; k < r.tasks; ++k) {
            const std::int64_t lo = r.lo(k), hi = r.hi(k);
            g.run([&chunk, lo, hi] { chunk(lo, hi); });
          }
          g.wait();
          break;
        }
        case variant::taskloop_recursive:
          if (n > 0) tbb::parallel_for(range(0, n, static_cast<std::size_t>(s.grain)), ranges, tbb::simple_partitioner());
          break;
        case variant::ws_static:
          if (n > 0) tbb::parallel_for(range(0, n, 1), ranges, tbb::static_partitioner());
          break;
        case variant::adaptive:
          if (n > 0) tbb::parallel_for(range(0, n, 1), ranges, tbb::auto_partitioner());
          break;
        case variant::ws_dynamic:
        case variant::ws_guided:
          throw plait_bench::usage_error("option --variant: " + loops::name(s.v) + " is not available for oneTBB");
      }
    });
  }
  void reset_stats() {}
  void stats(plait_bench::Record&) const {}

 private:
  options opt_;
  spec s_;
  int threads_ = 1;
  std::unique_ptr<tbb::global_control> gc_;
  std::unique_ptr<tbb::task_arena> arena_;
};

}  // namespace loops
