// plait::parallel_for / parallel_for_chunks / parallel_reduce over 64-bit integer ranges, with the
// partitioners of study 002's loop-to-task comparison.
//
//   plait::parallel_for(0, n, [&](std::int64_t i) { y[i] += a * x[i]; });            // adaptive
//   plait::parallel_for(0, n, body, plait::taskloop_grainsize(64));                  // taskloop linear
//   double s = plait::parallel_reduce(0, n, 0.0,
//       [&](std::int64_t lo, std::int64_t hi, double acc) { for (auto i = lo; i < hi; ++i) acc += x[i]; return acc; },
//       std::plus<>{}, plait::adaptive_partition(), plait::reduce_mode::deterministic);
//
// Partitioners (how [begin, end) becomes tasks):
//   static_partition()        one contiguous block per worker (worksharing `schedule(static)`)
//   dynamic_partition(c)      one task per worker; each grabs c iterations at a time from a shared
//                             counter until none are left (`schedule(dynamic, c)`)
//   guided_partition(m)       like dynamic, grabbing max(m, remaining / (2 * workers)) at a time
//   taskloop_grainsize(g)     taskloop linear: the calling task creates floor(n / g) tasks (at least
//                             one) of n / tasks iterations, the remainder spread one each over the
//                             first tasks (OpenMP/LLVM rules: every task gets >= g and < 2g)
//   taskloop_num_tasks(t)     taskloop linear with min(t, n) tasks, spread the same way
//   recursive_partition(g)    taskloop recursive (as LLVM): while more than 10 tasks per worker
//                             would be created, spawn a task for the upper half of the task count;
//                             the rest is created linearly with grain g
//   adaptive_partition()      the default: lazy splitting. The range runs in timed batches on one
//                             worker; between batches it checks whether a thief asked this worker
//                             for work (the deque's request flag, one relaxed load) and only then
//                             splits off the upper half as a stealable task. No grain to tune.
//
// Rules: an empty range is a no-op; end < begin throws std::invalid_argument. Called outside a
// pool the loop runs on plait::default_pool(). The first exception a body throws cancels the
// chunks not yet started and is rethrown; later ones are dropped.
//
// reduce_mode::deterministic: the range is cut into fixed blocks whose size depends only on
// end - begin; each block is folded from `identity` and the block results are combined left to
// right. The partitioner then only decides how blocks are scheduled, so the result is bitwise the
// same for every worker count, steal policy and partitioner.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/worker.hpp>
#include <plait/pool.hpp>
#include <plait/spawn.hpp>
#include <plait/task_group.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

namespace plait {

class partitioner {
 public:
  enum class kind : std::uint8_t { static_, dynamic, guided, grainsize, num_tasks, recursive, adaptive };

  kind type() const noexcept { return kind_; }
  std::int64_t param() const noexcept { return param_; }
  std::string name() const;  // "static", "dynamic:4", ... (parse_partitioner's syntax)

  friend partitioner static_partition() noexcept;
  friend partitioner dynamic_partition(std::int64_t chunk);
  friend partitioner guided_partition(std::int64_t min_chunk);
  friend partitioner taskloop_grainsize(std::int64_t grain);
  friend partitioner taskloop_num_tasks(std::int64_t ntasks);
  friend partitioner recursive_partition(std::int64_t grain);
  friend partitioner adaptive_partition() noexcept;

 private:
  partitioner(kind k, std::int64_t p) noexcept : kind_(k), param_(p) {}
  // A partitioner whose parameter must be at least 1 (`what` names it in the error).
  static partitioner positive(kind k, std::int64_t p, const char* what);
  kind kind_;
  std::int64_t param_;
};

namespace detail {
[[noreturn]] PLAIT_COLD void bad_partitioner_arg(const char* what, std::int64_t v);
[[noreturn]] PLAIT_COLD void bad_range(const char* what, std::int64_t b, std::int64_t e);
unsigned workers_of(const Worker* w) noexcept;  // the size of w's pool
}  // namespace detail

inline partitioner static_partition() noexcept { return {partitioner::kind::static_, 0}; }
inline partitioner partitioner::positive(kind k, std::int64_t p, const char* what) {
  if (p < 1) detail::bad_partitioner_arg(what, p);
  return {k, p};
}
inline partitioner dynamic_partition(std::int64_t chunk) {
  return partitioner::positive(partitioner::kind::dynamic, chunk, "dynamic_partition: chunk");
}
inline partitioner guided_partition(std::int64_t min_chunk) {
  return partitioner::positive(partitioner::kind::guided, min_chunk, "guided_partition: min_chunk");
}
inline partitioner taskloop_grainsize(std::int64_t grain) {
  return partitioner::positive(partitioner::kind::grainsize, grain, "taskloop_grainsize: grain");
}
inline partitioner taskloop_num_tasks(std::int64_t ntasks) {
  return partitioner::positive(partitioner::kind::num_tasks, ntasks, "taskloop_num_tasks: num_tasks");
}
inline partitioner recursive_partition(std::int64_t grain) {
  return partitioner::positive(partitioner::kind::recursive, grain, "recursive_partition: grain");
}
inline partitioner adaptive_partition() noexcept { return {partitioner::kind::adaptive, 0}; }

// "static", "dynamic:C", "guided:C", "grainsize:G", "num_tasks:N", "recursive:G", "adaptive".
// Throws std::invalid_argument (one line: what was given and what is accepted).
partitioner parse_partitioner(std::string_view spec);

enum class reduce_mode { fast, deterministic };

namespace detail {

// Adaptive batches aim at this many ticks (~2-4 us at 2-4 GHz): long enough that the demand check
// and the timestamps cost < 1 %, short enough that a thief waits at most one batch for a split.
inline constexpr std::uint64_t adaptive_batch_ticks = 8192;

// True when a thief asked this worker for work since its last spawn/join (SplitDeque::request set the
// request bit; settle() clears it). It lies on the line of the fast-path limits, which this worker
// reads anyway. relaxed: a hint, as everywhere else.
PLAIT_INLINE bool work_requested(const Worker* w) noexcept { return w->dq.req.load(std::memory_order_relaxed) != 0; }

// What every loop shares: the first exception, and cancellation of chunks not yet started.
struct loop_errors {
  // 0: no error; 1: the first error is being stored; 2: `error` is set.
  std::atomic<int> state{0};
  std::exception_ptr error;
  void record(std::exception_ptr e) noexcept {
    int expected = 0;
    // acq_rel: exactly one winner moves 0 -> 1 and then stores `error`.
    if (state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      error = std::move(e);
      // release: `error` is visible to whoever reads state == 2 (acquire) — also a subtree of a
      // recursive loop that rethrows while other tasks still run.
      state.store(2, std::memory_order_release);
    }
  }
  bool canceled() const noexcept { return state.load(std::memory_order_relaxed) != 0; }
  void rethrow() {
    int s = state.load(std::memory_order_acquire);
    if (s == 0) return;
    while (s != 2) s = state.load(std::memory_order_acquire);  // the winner is between its two stores
    std::rethrow_exception(error);
  }
};

// ---- Recursive schedules (adaptive, recursive's upper part): fork-join on spawn handles ----------

template <class T, class Fold, class Combine>
struct rec_loop {
  Fold& fold;        // (lo, hi, T) -> T
  Combine& combine;  // (T, T) -> T
  const T& identity;
  loop_errors& err;

  // Lazy splitting: timed batches; split only when a thief asked us for work.
  T adaptive(std::int64_t lo, std::int64_t hi) {
    Worker* w = tl_worker;
    T acc = identity;
    std::int64_t batch = 1;
    while (lo < hi) {
      if (hi - lo > 1 && work_requested(w)) {
        std::int64_t mid = lo + (hi - lo) / 2;
        auto h = plait::spawn([this, mid, hi] { return adaptive(mid, hi); });
        acc = adaptive_from(lo, mid, std::move(acc));
        T right = h.join();
        return combine(std::move(acc), std::move(right));
      }
      std::int64_t e = hi - lo > batch ? lo + batch : hi;
      if (PLAIT_UNLIKELY(err.canceled())) return acc;
      std::uint64_t t0 = ticks();
      acc = fold(lo, e, std::move(acc));
      std::uint64_t dt = ticks() - t0;
      lo = e;
      // Double the batch while batches are short, halve it when one was long.
      if (dt < adaptive_batch_ticks / 2 && batch < (std::int64_t{1} << 40))
        batch *= 2;
      else if (dt > adaptive_batch_ticks * 2 && batch > 1)
        batch /= 2;
    }
    return acc;
  }
  T adaptive_from(std::int64_t lo, std::int64_t hi, T acc) { return combine(std::move(acc), adaptive(lo, hi)); }
};

// ---- Task-indexed schedules: static, dynamic, guided, taskloop linear ---------------------------
// Tasks are records in one array (one allocation per loop, none per task), pushed as detached
// slots on the calling worker's deque; the caller runs one itself and then waits like a
// task_group (runs its own records, then helps). Record j folds into acc[j]; the results are
// combined in record order.

template <class T, class Fold>
struct indexed_loop;

template <class T, class Fold>
struct alignas(16) loop_rec {
  indexed_loop<T, Fold>* loop;
  std::int64_t lo, hi;  // taskloop: the task's range; worksharing: unused
  std::size_t idx;
};

template <class T, class Fold>
struct indexed_loop {
  indexed_loop(Fold& f, const T& id, loop_errors& e, partitioner::kind k) : fold(f), identity(id), err(e), kind(k) {}
  Fold& fold;
  const T& identity;
  loop_errors& err;
  partitioner::kind kind;
  std::int64_t begin = 0, n = 0, chunk = 1;
  unsigned parts = 1;
  std::atomic<std::int64_t> next{0};     // dynamic/guided: first iteration not yet handed out
  CountLatch pending;  // records not yet finished
  // One result per record, each on its own cache line (records finish on different workers; also
  // keeps std::vector<bool>'s packed bits away from concurrent writers).
  struct alignas(cache_line) cell {
    T v;
  };
  std::vector<cell> acc;

  void run_record(loop_rec<T, Fold>* r, Worker* w) noexcept {
    T a = identity;
    const frame_guard fg = guard_frame(w);  // a body joining a handle of the loop's caller
    try {
      switch (kind) {
        case partitioner::kind::dynamic:
          for (;;) {
            if (err.canceled()) break;
            // relaxed: the counter only hands out disjoint index ranges; no data flows through it.
            std::int64_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
            if (lo >= n) break;
            std::int64_t hi = n - lo > chunk ? lo + chunk : n;
            a = fold(begin + lo, begin + hi, std::move(a));
          }
          break;
        case partitioner::kind::guided: {
          std::int64_t lo = next.load(std::memory_order_relaxed);
          for (;;) {
            if (err.canceled() || lo >= n) break;
            std::int64_t rem = n - lo;
            std::int64_t c = rem / (2 * static_cast<std::int64_t>(parts));
            if (c < chunk) c = chunk;
            if (c > rem) c = rem;
            // relaxed: as above; on failure lo is reloaded and the chunk recomputed.
            if (!next.compare_exchange_weak(lo, lo + c, std::memory_order_relaxed)) continue;
            a = fold(begin + lo, begin + lo + c, std::move(a));
            lo = next.load(std::memory_order_relaxed);
          }
          break;
        }
        default:  // static block or taskloop task: a fixed range
          if (!err.canceled() && r->lo < r->hi) a = fold(r->lo, r->hi, std::move(a));
          break;
      }
    } catch (...) {
      err.record(std::current_exception());
    }
    check_frame(w, fg);
    acc[r->idx].v = std::move(a);
  }

  static void exec(void* p, Worker* w) noexcept {
    auto* r = static_cast<loop_rec<T, Fold>*>(p);
    indexed_loop* self = r->loop;
    self->run_record(r, w);
    // acq_rel (inside defer_done): release publishes acc[idx] and any recorded error to the
    // waiter's acquire of 0; that RMW is the record's last access to the loop (the waiter may
    // return right after). Records run back to back on one worker share one RMW.
    defer_done(w, &self->pending, &exec, [](void* d) { return &static_cast<loop_rec<T, Fold>*>(d)->loop->pending; });
  }

  // Runs records [0, count): pushes 1..count-1 (newest = highest index, so thieves take the
  // lowest indices first and the caller pops from the top), runs record 0, then waits.
  void run_all(std::vector<loop_rec<T, Fold>>& recs) {
    Worker* w = tl_worker;
    std::size_t count = recs.size();
    acc.assign(count, cell{identity});
    // Set before any record is published (the pushes below are the publication).
    pending.reset(static_cast<std::int64_t>(count));
    std::uint32_t floor = w->dq.head;
    for (std::size_t j = count; j-- > 1;) {
      if (PLAIT_UNLIKELY(!push(w, &exec, &recs[j], slot_kind::detached))) exec(&recs[j], w);
    }
    exec(&recs[0], w);
    group_wait(w, &pending, floor);
  }
};

// Per-task ranges of a linear taskloop: `tasks` tasks over n iterations, the remainder spread
// one each over the first tasks (OpenMP's rule).
inline std::int64_t taskloop_tasks(partitioner p, std::int64_t n) {
  if (p.type() == partitioner::kind::grainsize) {
    std::int64_t t = n / p.param();
    return t < 1 ? 1 : t;
  }
  return p.param() < n ? p.param() : n;
}

template <class T, class Fold>
void fill_linear(std::vector<loop_rec<T, Fold>>& recs, indexed_loop<T, Fold>* loop, std::int64_t lo,
                 std::int64_t n, std::int64_t tasks, std::size_t first_idx) {
  std::int64_t base = n / tasks, extra = n % tasks;
  std::int64_t at = lo;
  for (std::int64_t j = 0; j < tasks; ++j) {
    std::int64_t len = base + (j < extra ? 1 : 0);
    recs.push_back({loop, at, at + len, first_idx + static_cast<std::size_t>(j)});
    at += len;
  }
}

// A linear taskloop creates at most this many task records at once. Past it (num_tasks(2^40), or
// grainsize 1 over 10^9 iterations) the tasks are created and run window by window, in order: the
// records of one window (~100 bytes each with the result cell: 6.5 MiB) are reused, so memory stays
// bounded whatever the task count, while each window still holds thousands of tasks per worker.
inline constexpr std::int64_t taskloop_window = std::int64_t{1} << 16;

// Tasks [0, tasks) of a linear taskloop over [begin, begin + n), window by window. Task j gets
// the same range as without windows (OpenMP's rule: the remainder spread one each over the first
// tasks); within a window fill_linear reproduces it, since the longer tasks come first there too.
// Results are combined in task order.
template <class T, class Fold, class Combine>
T run_windows(std::int64_t begin, std::int64_t n, std::int64_t tasks, const T& identity, Fold& fold, Combine& combine,
              partitioner p, loop_errors& err) {
  const std::int64_t q = n / tasks, extra = n % tasks;
  auto start = [&](std::int64_t j) { return begin + j * q + (j < extra ? j : extra); };
  T r = identity;
  std::vector<loop_rec<T, Fold>> recs;
  for (std::int64_t j0 = 0; j0 < tasks && !err.canceled(); j0 += taskloop_window) {
    const std::int64_t j1 = tasks - j0 > taskloop_window ? j0 + taskloop_window : tasks;
    indexed_loop<T, Fold> loop{fold, identity, err, p.type()};
    loop.begin = start(j0);
    loop.n = start(j1) - start(j0);
    recs.clear();
    fill_linear(recs, &loop, loop.begin, loop.n, j1 - j0, 0);
    loop.run_all(recs);
    for (auto& a : loop.acc) r = combine(std::move(r), std::move(a.v));
  }
  err.rethrow();
  return r;
}

template <class T, class Fold, class Combine>
T run_indexed(std::int64_t begin, std::int64_t n, const T& identity, Fold& fold, Combine& combine, partitioner p,
              loop_errors& err) {
  Worker* w = tl_worker;
  unsigned workers = workers_of(w);
  indexed_loop<T, Fold> loop{fold, identity, err, p.type()};
  loop.begin = begin;
  loop.n = n;
  std::vector<loop_rec<T, Fold>> recs;
  switch (p.type()) {
    case partitioner::kind::static_: {
      std::int64_t parts = static_cast<std::int64_t>(workers) < n ? static_cast<std::int64_t>(workers) : n;
      fill_linear(recs, &loop, begin, n, parts, 0);
      break;
    }
    case partitioner::kind::dynamic:
    case partitioner::kind::guided: {
      loop.chunk = p.param();
      loop.parts = workers;
      std::int64_t per = (n + loop.chunk - 1) / loop.chunk;  // no more tasks than chunks
      std::int64_t parts = static_cast<std::int64_t>(workers) < per ? static_cast<std::int64_t>(workers) : per;
      for (std::int64_t j = 0; j < parts; ++j) recs.push_back({&loop, 0, 0, static_cast<std::size_t>(j)});
      break;
    }
    default: {  // grainsize, num_tasks
      const std::int64_t tasks = taskloop_tasks(p, n);
      if (tasks > taskloop_window) return run_windows(begin, n, tasks, identity, fold, combine, p, err);
      fill_linear(recs, &loop, begin, n, tasks, 0);
      break;
    }
  }
  loop.run_all(recs);
  err.rethrow();
  T r = identity;
  for (auto& a : loop.acc) r = combine(std::move(r), std::move(a.v));
  return r;
}

// taskloop recursive (LLVM's scheme): split the task count in half, spawning the upper half, while
// more than `min_tasks` tasks remain; then create the rest linearly.
template <class T, class Fold, class Combine>
T run_recursive(std::int64_t lo, std::int64_t hi, const T& identity, Fold& fold, Combine& combine,
                std::int64_t grain, std::int64_t min_tasks, loop_errors& err) {
  std::int64_t n = hi - lo;
  std::int64_t tasks = n / grain < 1 ? 1 : n / grain;
  if (tasks > min_tasks) {
    std::int64_t mid = lo + (tasks / 2) * (n / tasks) + (tasks / 2 < n % tasks ? tasks / 2 : n % tasks);
    auto h = plait::spawn(
        [&, mid, hi] { return run_recursive(mid, hi, identity, fold, combine, grain, min_tasks, err); });
    T left = run_recursive(lo, mid, identity, fold, combine, grain, min_tasks, err);
    T right = h.join();
    return combine(std::move(left), std::move(right));
  }
  return run_indexed(lo, n, identity, fold, combine, taskloop_grainsize(grain), err);
}

template <class T, class Fold, class Combine>
T run_loop(std::int64_t begin, std::int64_t end, const T& identity, Fold& fold, Combine& combine, partitioner p) {
  std::int64_t n = end - begin;
  loop_errors err;
  T r = identity;
  switch (p.type()) {
    case partitioner::kind::adaptive: {
      rec_loop<T, Fold, Combine> rl{fold, combine, identity, err};
      try {
        r = rl.adaptive(begin, end);
      } catch (...) {
        err.record(std::current_exception());
      }
      break;
    }
    case partitioner::kind::recursive: {
      std::int64_t min_tasks = 10 * static_cast<std::int64_t>(workers_of(tl_worker));
      try {
        r = run_recursive(begin, end, identity, fold, combine, p.param(), min_tasks, err);
      } catch (...) {
        err.record(std::current_exception());
      }
      break;
    }
    default:
      return run_indexed(begin, n, identity, fold, combine, p, err);
  }
  err.rethrow();
  return r;
}

// Checks the range, moves onto a pool when called from outside one, and returns false for an
// empty range.
inline bool loop_prologue(const char* what, std::int64_t begin, std::int64_t end) {
  if (PLAIT_UNLIKELY(end < begin)) bad_range(what, begin, end);
  // end - begin must fit in int64 (the loops compute lengths and midpoints in int64).
  if (PLAIT_UNLIKELY(static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin) >
                     static_cast<std::uint64_t>(INT64_MAX)))
    bad_range(what, begin, end);
  return end > begin;
}

struct no_value {};

// Blocks for deterministic reductions: a size that depends only on n (about 4096 blocks).
inline std::int64_t deterministic_block(std::int64_t n) {
  std::int64_t b = (n + 4095) / 4096;
  return b < 1 ? 1 : b;
}

}  // namespace detail

template <class Body>
void parallel_for_chunks(std::int64_t begin, std::int64_t end, Body&& body, partitioner p = adaptive_partition()) {
  if (!detail::loop_prologue("plait::parallel_for_chunks", begin, end)) return;
  if (detail::current_worker() == nullptr) {
    default_pool().run([&] { parallel_for_chunks(begin, end, body, p); });
    return;
  }
  auto fold = [&body](std::int64_t lo, std::int64_t hi, detail::no_value v) {
    body(lo, hi);
    return v;
  };
  auto combine = [](detail::no_value a, detail::no_value) { return a; };
  const detail::no_value none{};
  (void)detail::run_loop(begin, end, none, fold, combine, p);
}

template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, Body&& body, partitioner p = adaptive_partition()) {
  if (!detail::loop_prologue("plait::parallel_for", begin, end)) return;
  parallel_for_chunks(
      begin, end,
      [&body](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) body(i);
      },
      p);
}

template <class T, class Body, class Combine>
T parallel_reduce(std::int64_t begin, std::int64_t end, T identity, Body&& body, Combine&& combine,
                  partitioner p = adaptive_partition(), reduce_mode m = reduce_mode::fast) {
  if (!detail::loop_prologue("plait::parallel_reduce", begin, end)) return identity;
  if (detail::current_worker() == nullptr)
    return default_pool().run([&] { return parallel_reduce(begin, end, identity, body, combine, p, m); });
  if (m == reduce_mode::fast) {
    auto fold = [&body](std::int64_t lo, std::int64_t hi, T acc) -> T { return body(lo, hi, std::move(acc)); };
    return detail::run_loop(begin, end, identity, fold, combine, p);
  }
  // Deterministic: fixed blocks, each folded from identity, combined left to right.
  std::int64_t n = end - begin;
  std::int64_t bs = detail::deterministic_block(n);
  std::int64_t nb = (n + bs - 1) / bs;
  struct alignas(cache_line) cell {
    T v;
  };
  std::vector<cell> part(static_cast<std::size_t>(nb), cell{identity});
  parallel_for_chunks(
      0, nb,
      [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b) {
          std::int64_t lo = begin + b * bs;
          std::int64_t hi = end - lo > bs ? lo + bs : end;
          part[static_cast<std::size_t>(b)].v = body(lo, hi, T(identity));
        }
      },
      p);
  T r = std::move(identity);
  for (auto& x : part) r = combine(std::move(r), std::move(x.v));
  return r;
}

}  // namespace plait
