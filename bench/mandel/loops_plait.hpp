// Plait executor for the loop benchmarks (see loops.hpp).
//   puretask-single     one task: plait::task_group, g.run(chunk) per chunk, g.wait()
//   puretask-parallel   plait::parallel_for over the chunk indices (static_partition) whose bodies
//                       g.run(chunk) into one task_group; then g.wait()
//   taskloop-linear     parallel_for_chunks with taskloop_grainsize(G) / taskloop_num_tasks(N)
//   taskloop-recursive  parallel_for_chunks with recursive_partition(G)
//   ws-static/dynamic/guided  static_partition() / dynamic_partition(C) / guided_partition(C)
//   adaptive            adaptive_partition()
// --steal one|chunk:K|half|adaptive sets pool_options::steal (default: PLAIT_STEAL, else one).
#pragma once

#include <plait/plait.hpp>

#if __has_include(<plait/parallel_for.hpp>)
#include <plait/parallel_for.hpp>
#define PLAIT_BENCH_HAVE_LOOPS 1
#else
#define PLAIT_BENCH_HAVE_LOOPS 0
#endif

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/plait_counters.hpp"
#include "mandel/loops.hpp"
#include "mandel/loops_task_group.hpp"

namespace loops {

#ifdef PLAIT_HAS_STEAL_POLICIES
// `o` are resolved options (pool::options()): the policy is always set there.
inline std::string steal_name(const plait::pool_options& o) {
  switch (o.steal.value()) {
    case plait::steal_policy::one:
      return "one";
    case plait::steal_policy::chunk:
      return "chunk:" + std::to_string(o.steal_chunk);
    case plait::steal_policy::half:
      return "half";
    case plait::steal_policy::adaptive:
      return "adaptive";
  }
  return "?";
}
#endif

struct exec_plait {
  static constexpr const char* name = "plait";

  explicit exec_plait(plait_bench::Cli& cli) {
#if PLAIT_BENCH_HAVE_LOOPS
    opt_.add(cli, {});
#else
    opt_.add(cli, {"puretask-single"});
#endif
    cli.add_string("steal", &steal_,
                   "steal policy: one, chunk:K (K in 1..1048576), half, adaptive (default: PLAIT_STEAL, else one)");
  }

  void start(const plait_bench::Cli& cli) {
    s_ = opt_.get(cli);
    plait::pool_options o{};
    o.num_workers = static_cast<decltype(o.num_workers)>(cli.threads);
    if (!steal_.empty()) set_steal(o, steal_);
    pool_ = std::make_unique<plait::pool>(o);
    slots_ = static_cast<int>(pool_->num_workers());
  }
  const spec& get() const { return s_; }
  int slots() const { return slots_; }

  template <class F>
  void run(std::int64_t n, tracker& tr, F&& body) {
    auto chunk = [&tr, &body](std::int64_t lo, std::int64_t hi) {
      tr.enter(plait::this_worker_index(), lo, hi);
      body(lo, hi);
    };
    const spec s = s_;
#if PLAIT_BENCH_HAVE_LOOPS
    // every variant but the puretask ones is one parallel_for_chunks with the variant's partition
    auto chunks = [&](auto partition) { plait::parallel_for_chunks(0, n, chunk, partition); };
#endif
    pool_->run([&] {
      switch (s.v) {
        case variant::puretask_single: chunk_tasks_single<plait::task_group>(chunk, n, s.grain); break;
#if PLAIT_BENCH_HAVE_LOOPS
        case variant::puretask_parallel: {
          plait::task_group g;
          plait::parallel_for(
              0, fixed_chunks(n, s.grain), [&](std::int64_t k) { run_chunk(g, chunk, k, n, s.grain); },
              plait::static_partition());
          g.wait();
          break;
        }
        case variant::taskloop_linear:
          chunks(s.num_tasks > 0 ? plait::taskloop_num_tasks(s.num_tasks) : plait::taskloop_grainsize(s.grain));
          break;
        case variant::taskloop_recursive: chunks(plait::recursive_partition(s.grain)); break;
        case variant::ws_static: chunks(plait::static_partition()); break;
        case variant::ws_dynamic: chunks(plait::dynamic_partition(s.chunk)); break;
        case variant::ws_guided: chunks(plait::guided_partition(s.chunk)); break;
        case variant::adaptive: chunks(plait::adaptive_partition()); break;
#endif
        default:
          throw plait_bench::usage_error("variant " + loops::name(s.v) + " is not available in this build");
      }
    });
  }

  void reset_stats() { base_ = pool_->total_counters(); }
  void stats(plait_bench::Record& rec) const {
    const plait::worker_counters c = pool_->total_counters() - base_;
    plait_bench::put_counters(rec, c);  // every counter, and idle_ms
    // the loop study's names: moved_tasks as the other runtimes write it, steal_ops for steal_chunks
    rec.stat("moved_tasks", static_cast<unsigned long long>(c.steals));
    rec.stat("steal_ops", static_cast<unsigned long long>(c.steal_chunks));
#ifdef PLAIT_HAS_STEAL_POLICIES
    rec.stat("steal", steal_name(pool_->options()));
#else
    rec.stat("steal", std::string("one"));
#endif
  }

 private:
  static void set_steal(plait::pool_options& o, const std::string& v) {
    const std::string accepted = "accepted: one, chunk:K (K in 1..1048576), half, adaptive";
#ifdef PLAIT_HAS_STEAL_POLICIES
    if (v == "one") {
      o.steal = plait::steal_policy::one;
    } else if (v == "half") {
      o.steal = plait::steal_policy::half;
    } else if (v == "adaptive") {
      o.steal = plait::steal_policy::adaptive;
    } else if (v.rfind("chunk:", 0) == 0) {
      const std::string k = v.substr(6);
      char* end = nullptr;
      errno = 0;
      const unsigned long long x = (k.empty() || k[0] < '0' || k[0] > '9') ? 0 : std::strtoull(k.c_str(), &end, 10);
      if (x < 1 || x > (1ULL << 20) || errno != 0 || end == nullptr || *end != '\0')
        throw plait_bench::usage_error("option --steal: '" + v + "' is malformed; " + accepted);
      o.steal = plait::steal_policy::chunk;
      o.steal_chunk = static_cast<std::size_t>(x);
    } else {
      throw plait_bench::usage_error("option --steal: unknown policy '" + v + "'; " + accepted);
    }
#else
    (void)o;
    if (v != "one")
      throw plait_bench::usage_error("option --steal: '" + v + "' needs a runtime with chunked stealing; this build has only 'one'");
#endif
  }

  options opt_;
  spec s_;
  std::string steal_;
  std::unique_ptr<plait::pool> pool_;
  int slots_ = 1;
  plait::worker_counters base_{};
};

}  // namespace loops
