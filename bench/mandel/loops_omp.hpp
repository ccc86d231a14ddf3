// OpenMP executor for the loop benchmarks (see loops.hpp): libgomp (gcc) or libomp (clang-16).
//   puretask-single     parallel + single; for each chunk: #pragma omp task (Listing 1 of study 002)
//   puretask-parallel   parallel; #pragma omp for schedule(static) over the chunks, each iteration
//                       creates its chunk's task (the barrier at the end of the parallel region waits)
//   taskloop-linear     parallel + single; #pragma omp taskloop grainsize(G) / num_tasks(N) over the
//                       iterations (the runtime cuts the chunks; both runtimes follow the rule in
//                       loops::taskloop_rule, which gives the tracker its chunk boundaries)
//   taskloop-recursive  parallel + single; explicit recursive halving with #pragma omp task down to
//                       pieces of <= G (the runtimes' own taskloop splitting cannot be selected)
//   ws-static/dynamic/guided  #pragma omp for schedule(static | dynamic, C | guided, C)
// adaptive has no OpenMP counterpart and is rejected (exit 2).
#pragma once

#include <omp.h>

#include <cstdint>
#include <vector>

#include "mandel/loops.hpp"

namespace loops {

// clang-16 compares the taskloop's signed loop variable with its own unsigned trip count in the code
// it generates for #pragma omp taskloop, and warns (-Wsign-compare) about that generated comparison.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wsign-compare"
#endif

struct exec_omp {
  static constexpr const char* name = "omp";

  explicit exec_omp(plait_bench::Cli& cli) {
    opt_.add(cli, {"puretask-single", "puretask-parallel", "taskloop-linear", "taskloop-recursive", "ws-static",
                   "ws-dynamic", "ws-guided"});
  }
  void start(const plait_bench::Cli& cli) {
    s_ = opt_.get(cli);
    threads_ = static_cast<int>(cli.threads);
  }
  const spec& get() const { return s_; }
  int slots() const { return threads_; }

  template <class F>
  void run(std::int64_t n, tracker& tr, F&& body) {
    tracker* tp = &tr;
    auto* bp = &body;
    const std::int64_t g = s_.grain, c = s_.chunk;
    switch (s_.v) {
      case variant::puretask_single: {
#pragma omp parallel num_threads(threads_) firstprivate(tp, bp, n, g)
#pragma omp single
        for (std::int64_t k = 0, m = fixed_chunks(n, g); k < m; ++k) {
          const std::int64_t lo = k * g, hi = std::min(n, lo + g);
#pragma omp task firstprivate(tp, bp, lo, hi)
          chunk(lo, hi, tp, bp);
        }
        break;
      }
      case variant::puretask_parallel: {
        const std::int64_t m = fixed_chunks(n, g);
#pragma omp parallel num_threads(threads_) firstprivate(tp, bp, n, g, m)
        {
#pragma omp for schedule(static)
          for (std::int64_t k = 0; k < m; ++k) {
            const std::int64_t lo = k * g, hi = std::min(n, lo + g);
#pragma omp task firstprivate(tp, bp, lo, hi)
            chunk(lo, hi, tp, bp);
          }
        }
        break;
      }
      case variant::taskloop_linear: {
        const std::int64_t nt = s_.num_tasks;
        {
          const taskloop_rule r = taskloop_rule::make(n, s_);
          std::vector<std::int64_t> los;
          for (std::int64_t k = 0; k < r.tasks; ++k) los.push_back(r.lo(k));
          tr.expect(std::move(los));
        }
        if (nt > 0) {
#pragma omp parallel num_threads(threads_) firstprivate(tp, bp, n, nt)
#pragma omp single
#pragma omp taskloop num_tasks(nt) firstprivate(tp, bp)
          for (std::int64_t i = 0; i < n; ++i) iteration(omp_get_thread_num(), i, tp, bp);
        } else {
#pragma omp parallel num_threads(threads_) firstprivate(tp, bp, n, g)
#pragma omp single
#pragma omp taskloop grainsize(g) firstprivate(tp, bp)
          for (std::int64_t i = 0; i < n; ++i) iteration(omp_get_thread_num(), i, tp, bp);
        }
        break;
      }
      case variant::taskloop_recursive: {
#pragma omp parallel num_threads(threads_) firstprivate(tp, bp, n, g)
#pragma omp single
        recurse(0, n, g, tp, bp);
        break;
      }
      case variant::ws_static: {
#pragma omp parallel for schedule(static) num_threads(threads_) firstprivate(tp, bp)
        for (std::int64_t i = 0; i < n; ++i) iteration(omp_get_thread_num(), i, tp, bp);
        break;
      }
      case variant::ws_dynamic: {
        {
          std::vector<std::int64_t> los;
          for (std::int64_t lo = 0; lo < n; lo += c) los.push_back(lo);
          tr.expect(std::move(los));
        }
#pragma omp parallel for schedule(dynamic, c) num_threads(threads_) firstprivate(tp, bp)
        for (std::int64_t i = 0; i < n; ++i) iteration(omp_get_thread_num(), i, tp, bp);
        break;
      }
      case variant::ws_guided: {
#pragma omp parallel for schedule(guided, c) num_threads(threads_) firstprivate(tp, bp)
        for (std::int64_t i = 0; i < n; ++i) iteration(omp_get_thread_num(), i, tp, bp);
        break;
      }
      case variant::adaptive:
        throw plait_bench::usage_error("option --variant: adaptive is not available for OpenMP");
    }
  }
  void reset_stats() {}
  void stats(plait_bench::Record&) const {}

 private:
  // The iterations [lo, hi) on this thread, told to the tracker as one chunk.
  template <class B>
  static void chunk(std::int64_t lo, std::int64_t hi, tracker* tp, B* bp) {
    tp->enter(omp_get_thread_num(), lo, hi);
    (*bp)(lo, hi);
  }
  // Iteration i on thread `who`, inside a construct that hides its chunks. The callers read
  // omp_get_thread_num() in the construct itself (in a taskloop gcc then reads it once per task).
  template <class B>
  static void iteration(int who, std::int64_t i, tracker* tp, B* bp) {
    tp->enter_iter(who, i);
    (*bp)(i, i + 1);
  }
  template <class B>
  static void recurse(std::int64_t lo, std::int64_t hi, std::int64_t g, tracker* tp, B* bp) {
    if (hi - lo <= g) {
      if (hi > lo) chunk(lo, hi, tp, bp);
      return;
    }
    const std::int64_t mid = lo + (hi - lo) / 2;
#pragma omp task firstprivate(lo, mid, g, tp, bp)
    recurse(lo, mid, g, tp, bp);
#pragma omp task firstprivate(mid, hi, g, tp, bp)
    recurse(mid, hi, g, tp, bp);
    // no taskwait: the barrier at the end of the parallel region waits for every descendant
  }

  options opt_;
  spec s_;
  int threads_ = 1;
};

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

}  // namespace loops
