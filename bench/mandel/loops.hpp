// Loop-to-task variants shared by the loop benchmarks (bench/mandel, bench/flatloop): study 002,
// "Task self-scheduling in OpenMP" (Giger 2021), section 1.3.
//
// A loop over [0, n) is turned into tasks in one of these ways (--variant):
//   puretask-single     one thread creates one task per chunk of --grain G iterations (Listing 1)
//   puretask-parallel   a parallel loop (static) over the chunks; each iteration creates that chunk's task
//   taskloop-linear     taskloop: one task creates all tasks, --grain G (grainsize) or --num-tasks N,
//                       chunk sizes by the OpenMP rule (N/G tasks, the remainder spread over the first ones)
//   taskloop-recursive  the range is halved recursively (a task per half) until a piece has <= G iterations
//   ws-static           worksharing, one contiguous block per worker
//   ws-dynamic          worksharing, workers grab --chunk C iterations at a time
//   ws-guided           worksharing, guided self-scheduling with minimum chunk C
//   adaptive            the runtime's own default splitting, no tuning (Plait adaptive_partition,
//                       oneTBB auto_partitioner)
// Each runtime's executor (loops_<rt>.hpp) says which of these it has; asking for another one is
// bad input (exit 2).
//
// Instrumentation (the "affinity" of section 5.2): every executed chunk [lo, hi) is announced with
// tracker::enter(worker, lo, hi) before its body runs. Each worker remembers its previous chunk.
// Chunks i and i+1 (consecutive in the loop) "ran back to back on the same worker" when one worker
// ran one of them directly after the other: forward (the previous chunk ended at lo) or backward
// (the previous chunk started at hi: LIFO execution of a block of consecutive tasks). So
//   affinity = (chunk boundaries b > 0 whose two chunks ran back to back) / (chunk boundaries b > 0).
// This is the study's per-chunk (worker, per-worker sequence number) comparison, kept in two words
// per worker and one byte per iteration index. "runs" counts the ascending contiguous pieces each
// worker ran. When a construct hides its chunk boundaries and no rule gives them (OpenMP worksharing
// static/guided, whose bodies see single iterations), tasks/affinity are left out; only runs is
// reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/driver.hpp"

namespace loops {

enum class variant {
  puretask_single,
  puretask_parallel,
  taskloop_linear,
  taskloop_recursive,
  ws_static,
  ws_dynamic,
  ws_guided,
  adaptive,
};

inline const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> v = {"puretask-single", "puretask-parallel", "taskloop-linear",
                                             "taskloop-recursive", "ws-static", "ws-dynamic",
                                             "ws-guided", "adaptive"};
  return v;
}

inline variant parse_variant(const std::string& s) {
  const auto& v = variant_names();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] == s) return static_cast<variant>(i);
  std::string all;
  for (const auto& n : v) all += (all.empty() ? "" : ", ") + n;
  throw plait_bench::usage_error("option --variant: unknown variant '" + s + "'; accepted: " + all);
}

inline std::string name(variant v) { return variant_names()[static_cast<std::size_t>(v)]; }

// What the command line asked for.
struct spec {
  variant v = variant::puretask_single;
  std::int64_t grain = 1;      // puretask-*, taskloop-linear, taskloop-recursive
  std::int64_t num_tasks = 0;  // taskloop-linear only; 0 = use grain
  std::int64_t chunk = 1;      // ws-dynamic, ws-guided
};

// Registers --variant/--grain/--num-tasks/--chunk. `accepted` lists the variants this runtime has
// (all, for an empty list); the default is puretask-single.
struct options {
  std::string variant_s = "puretask-single";
  long long grain = 1, num_tasks = 0, chunk = 1;
  std::vector<std::string> accepted;

  void add(plait_bench::Cli& cli, std::vector<std::string> acc) {
    accepted = acc.empty() ? variant_names() : std::move(acc);
    cli.add_string("variant", &variant_s, "how the loop becomes tasks (docs/loops.md)", accepted);
    cli.add_int("grain", &grain, 1, 1LL << 40,
                "G: iterations per task (puretask-*, taskloop-linear grainsize, taskloop-recursive leaf size)");
    cli.add_int("num-tasks", &num_tasks, 0, 1LL << 40, "N: taskloop-linear num_tasks(N) instead of --grain (0: off)");
    cli.add_int("chunk", &chunk, 1, 1LL << 40, "C: ws-dynamic chunk / ws-guided minimum chunk");
  }

  // After cli.parse(): checks the combinations.
  spec get(const plait_bench::Cli& cli) const {
    spec s;
    s.v = parse_variant(variant_s);
    if (std::find(accepted.begin(), accepted.end(), variant_s) == accepted.end())
      throw plait_bench::usage_error("option --variant: '" + variant_s + "' is not available for this runtime");
    s.grain = grain;
    s.num_tasks = num_tasks;
    s.chunk = chunk;
    if (cli.given("num-tasks") && s.v != variant::taskloop_linear)
      throw plait_bench::usage_error("option --num-tasks: only taskloop-linear takes a task count");
    if (cli.given("num-tasks") && s.num_tasks < 1)
      throw plait_bench::usage_error("option --num-tasks: must be 1.." + std::to_string(1LL << 40));
    if (cli.given("num-tasks") && cli.given("grain"))
      throw plait_bench::usage_error("options --grain and --num-tasks: give one of them, not both");
    const bool takes_grain = s.v == variant::puretask_single || s.v == variant::puretask_parallel ||
                             s.v == variant::taskloop_linear || s.v == variant::taskloop_recursive;
    if (cli.given("grain") && !takes_grain)
      throw plait_bench::usage_error("option --grain: variant " + variant_s +
                                     " takes no grain (puretask-*, taskloop-* do)");
    const bool takes_chunk = s.v == variant::ws_dynamic || s.v == variant::ws_guided;
    if (cli.given("chunk") && !takes_chunk)
      throw plait_bench::usage_error("option --chunk: variant " + variant_s + " takes no chunk (ws-dynamic, ws-guided do)");
    return s;
  }
};

// ---- chunk rules ------------------------------------------------------------------------------

// Chunk k of [0, n) cut into pieces of g (the last one shorter).
inline std::int64_t fixed_chunks(std::int64_t n, std::int64_t g) { return n <= 0 ? 0 : (n + g - 1) / g; }

// OpenMP taskloop (libgomp and libomp agree): with grainsize G there are max(1, n / G) tasks, with
// num_tasks N there are min(N, n); each task gets q = n / tasks iterations and the first n % tasks
// tasks one more.
struct taskloop_rule {
  std::int64_t n = 0, tasks = 0, q = 0, r = 0;
  static taskloop_rule make(std::int64_t n, const spec& s) {
    taskloop_rule t;
    t.n = n;
    if (n <= 0) return t;
    if (s.num_tasks > 0)
      t.tasks = std::min(s.num_tasks, n);
    else
      t.tasks = std::max<std::int64_t>(1, n / s.grain);
    t.q = n / t.tasks;
    t.r = n % t.tasks;
    return t;
  }
  std::int64_t lo(std::int64_t k) const { return k * q + std::min(k, r); }
  std::int64_t hi(std::int64_t k) const { return lo(k + 1); }
};

// Leaves of the recursive halving of [lo, hi) down to pieces of <= g, in order.
inline void recursive_leaves(std::int64_t lo, std::int64_t hi, std::int64_t g,
                             std::vector<std::pair<std::int64_t, std::int64_t>>& out) {
  if (hi - lo <= g) {
    if (hi > lo) out.emplace_back(lo, hi);
    return;
  }
  const std::int64_t mid = lo + (hi - lo) / 2;
  recursive_leaves(lo, mid, g, out);
  recursive_leaves(mid, hi, g, out);
}

// ---- the tracker --------------------------------------------------------------------------------

class tracker {
 public:
  // n iterations, `slots` worker indices 0..slots-1 (an index outside is folded into the last slot).
  void reset(std::int64_t n, int slots) {
    n_ = n;
    const auto sz = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
    start_.assign(sz, 0);
    bound_.assign(sz, 0);
    hit_.assign(sz, 0);
    w_.assign(static_cast<std::size_t>(slots) + 1, per_worker{});
    los_.clear();
    expected_ = false;
  }

  // Chunk boundaries known in advance by rule (OpenMP taskloop and dynamic schedules, whose bodies
  // see single iterations): ascending chunk starts, the first one 0. Call after reset(), before the run.
  void expect(std::vector<std::int64_t> los) {
    los_ = std::move(los);
    for (std::int64_t b : los_) bound_[static_cast<std::size_t>(b)] = 1;
    expected_ = true;
  }

  // A chunk [lo, hi) is about to run on worker `who`.
  void enter(int who, std::int64_t lo, std::int64_t hi) {
    per_worker& w = slot(who);
    const auto l = static_cast<std::size_t>(lo);
    if (w.prev_hi == lo) {
      hit_[l] = 1;  // the chunk ending at lo ran just before, on this worker
    } else {
      start_[l] = 1;
      if (w.prev_lo == hi) hit_[static_cast<std::size_t>(hi)] = 1;  // the chunk starting at hi did (LIFO order)
    }
    bound_[l] = 1;
    w.prev_lo = lo;
    w.prev_hi = hi;
    ++w.chunks;
  }

  // Iteration i is about to run on worker `who`, inside a construct that hides its chunks. With
  // expect()ed boundaries the chunks are recovered (a chunk starts at each boundary); without, only
  // contiguous runs are counted and tasks/affinity stay unknown.
  void enter_iter(int who, std::int64_t i) {
    if (expected_) {
      if (bound_[static_cast<std::size_t>(i)]) {
        auto it = std::upper_bound(los_.begin(), los_.end(), i);
        enter(who, i, it == los_.end() ? n_ : *it);
      }
      return;
    }
    per_worker& w = slot(who);
    if (w.prev_hi != i) start_[static_cast<std::size_t>(i)] = 1;
    w.prev_hi = i + 1;
    w.hidden = true;
  }

  struct result {
    std::int64_t tasks = -1;   // chunks executed (-1: unknown)
    std::int64_t runs = 0;     // contiguous ascending pieces per worker
    double affinity = -1;      // -1: unknown
    std::int64_t workers_used = 0;
  };

  result summary() const {
    result r;
    bool hidden = false;
    std::int64_t chunks = 0;
    for (const auto& w : w_) {
      r.workers_used += w.prev_hi >= 0 ? 1 : 0;
      hidden = hidden || w.hidden;
      chunks += w.chunks;
    }
    for (std::int64_t i = 0; i < n_; ++i) r.runs += start_[static_cast<std::size_t>(i)];
    if (hidden) return r;
    r.tasks = chunks;
    std::int64_t bounds = 0, hits = 0;
    for (std::int64_t i = 1; i < n_; ++i) {
      if (!bound_[static_cast<std::size_t>(i)]) continue;
      ++bounds;
      hits += hit_[static_cast<std::size_t>(i)];
    }
    r.affinity = bounds > 0 ? static_cast<double>(hits) / static_cast<double>(bounds) : 1.0;
    return r;
  }

  void stats(plait_bench::Record& rec) const {
    const result r = summary();
    if (r.tasks >= 0) rec.stat("tasks", static_cast<long long>(r.tasks));
    rec.stat("runs", static_cast<long long>(r.runs));
    if (r.affinity >= 0) rec.stat("affinity", r.affinity);
    rec.stat("workers_used", static_cast<long long>(r.workers_used));
  }

 private:
  struct alignas(64) per_worker {
    std::int64_t prev_lo = -1, prev_hi = -1;
    std::int64_t chunks = 0;
    bool hidden = false;
  };
  per_worker& slot(int who) {
    std::size_t i = who < 0 ? w_.size() - 1 : static_cast<std::size_t>(who);
    return w_[std::min(i, w_.size() - 1)];
  }
  std::int64_t n_ = 0;
  std::vector<unsigned char> start_, bound_, hit_;
  std::vector<per_worker> w_;
  std::vector<std::int64_t> los_;
  bool expected_ = false;
};

}  // namespace loops
