// Per-task tracing: event buffers per worker, task ids, the clock, and writing the trace file.
//
// Switched on by pool_options::trace_path or PLAIT_TRACE=path (".json": Chrome trace events for
// ui.perfetto.dev / chrome://tracing; ".csv": study 002's table). Off, it costs nothing on the
// fast paths: a tracing pool keeps every worker's push_limit at 0 and pop_limit at "requested",
// the values that already send spawn and join to the slow paths, and only the slow paths look at
// Worker::trace. So the spawn/join fast paths are the same instructions with tracing compiled in.
//
// Events per worker (owner-only chunked buffers, no locks, no atomics): spawn (new task id, slot
// kind), task_begin (id, creating worker, label), task_end, steal (victim, task id), steal_fail
// (victim; only the first of a run of failures, or an idle spin would write millions),
// idle_begin/idle_end (the worker found no task), sleep/wake (futex), and the DAG's complete,
// wait_begin/wait_end and df_submit/df_edge/df_run (src/trace_dag.cpp resolves them). Task ids are (creating worker + 1) << 40 | sequence,
// so the creator travels with the id, also through chunk steals that re-push tasks.
//
// Clock: the TSC (rdtsc, ~7 ns here), converted to ns when the trace is written from two
// (TSC, CLOCK_MONOTONIC) pairs taken at start and at the end, and clamped to be non-decreasing per
// worker. docs/tracing.md has the formats and the tools.
#include "pool_impl.hpp"
#include "trace_writer.hpp"

#include <plait/detail/backoff.hpp>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace plait::detail {

static std::uint64_t trace_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return now_ns();
#endif
}

void trace_init(Pool* p) {
  if (p->trace.path.empty()) return;
  std::string err;
  if (!trace::check_trace_path(p->trace.path, &err)) {
    // The program still runs, untraced; it says so once.
    std::fprintf(stderr, "plait: cannot write trace %s: %s; tracing is off\n", p->trace.path.c_str(), err.c_str());
    p->trace.path.clear();
    return;
  }
  p->trace.labels.assign(1, std::string());
  p->trace.label_keys.assign(1, nullptr);
  for (unsigned i = 0; i < p->n; ++i) {
    auto* b = new TraceBuf;
    p->workers[i].trace = b;
    // Both limits at their "go slow" values for the pool's whole life (settle keeps them there).
    p->workers[i].dq.go_slow = true;
    p->workers[i].dq.push_limit.store(0, std::memory_order_relaxed);
    p->workers[i].dq.pop_limit.store(pop_limit_requested, std::memory_order_relaxed);
  }
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  p->trace.unix0 = static_cast<std::uint64_t>(rt.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(rt.tv_nsec);
  p->trace.mono0 = now_ns();
  p->trace.tsc0 = trace_ticks();
}

void trace_event(Worker* w, trace::ev k, std::uint64_t task, std::uint32_t other, std::uint32_t label,
                 std::uint64_t aux) noexcept {
  TraceBuf* b = w->trace;
  // acquire: pairs with the release below and in write_out; a writer copying the buffer holds it.
  for (Backoff<trace_buffer_spins> bo; b->busy.exchange(true, std::memory_order_acquire);) bo.pause();
  try {
    b->append(trace::Event{trace_ticks(), task, other, label, k, aux});
  } catch (...) {
    // Out of memory: drop the event rather than the program.
  }
  // release: our append happens-before the next holder's reads.
  b->busy.store(false, std::memory_order_release);
}

std::uint64_t trace_new_id(Worker* w) noexcept {
  return (static_cast<std::uint64_t>(w->index + 1) << 40) | ++w->trace->seq;
}

void trace_task_begin(Worker* w, std::uint64_t id, std::uint32_t label) noexcept {
  trace_event(w, trace::ev::task_begin, id, trace_creator(id), label);
  try {
    w->trace->open.push_back(id);
  } catch (...) {
  }
}

void trace_task_end(Worker* w) noexcept {
  TraceBuf* b = w->trace;
  if (b == nullptr || b->open.empty()) return;
  std::uint64_t id = b->open.back();
  b->open.pop_back();
  trace_event(w, trace::ev::task_end, id, 0, 0);
}

void trace_on_push(Worker* w, Slot& s, std::uintptr_t tagged) noexcept {
  TraceBuf* b = w->trace;
  if (b->forward_id != 0) {  // a chunk steal re-pushing a stolen task: same id, no spawn event
    s.trace_id = b->forward_id;
    s.trace_label = b->forward_label;
    b->forward_id = 0;
    return;
  }
  s.trace_id = trace_new_id(w);
  s.trace_label = b->next_label;
  b->next_label = 0;
  const bool joinable = static_cast<slot_kind>(tagged & 1) == slot_kind::joinable;  // as Slot::kind()
  trace_event(w, trace::ev::spawn, s.trace_id, joinable ? 1 : 0, s.trace_label);
}

void trace_complete(Worker* w, const void* latch) noexcept {
  trace_event(w, trace::ev::complete, 0, 0, 0, reinterpret_cast<std::uintptr_t>(latch));
}

void trace_wait(Worker* w, bool begin, std::uint64_t key, std::uint32_t key_kind) noexcept {
  trace_event(w, begin ? trace::ev::wait_begin : trace::ev::wait_end, 0, key_kind, 0, key);
}

void trace_df(Worker* w, trace::ev k, const void* node, const void* pred) noexcept {
  trace_event(w, k, reinterpret_cast<std::uintptr_t>(node), 0, 0,
              reinterpret_cast<std::uintptr_t>(pred != nullptr ? pred : node));
}

static void write_out(Pool* p, const std::string& path, std::string* err, bool* ok) {
  std::uint64_t tsc1 = trace_ticks(), mono1 = now_ns();
  double ns_per_tick = tsc1 > p->trace.tsc0 ? static_cast<double>(mono1 - p->trace.mono0) /
                                                   static_cast<double>(tsc1 - p->trace.tsc0)
                                             : 1.0;
  trace::Trace t;
  t.runtime = "plait";
  {
    FILE* f = std::fopen("/proc/self/comm", "r");
    char buf[64] = {0};
    if (f != nullptr) {
      if (std::fgets(buf, sizeof buf, f) != nullptr) {
        t.program = buf;
        while (!t.program.empty() && (t.program.back() == '\n' || t.program.back() == '\r')) t.program.pop_back();
      }
      std::fclose(f);
    }
  }
  t.t0_unix_ns = p->trace.unix0;
  {
    std::lock_guard<std::mutex> lk(p->trace.mu);
    t.labels = p->trace.labels;
  }
  t.workers.resize(p->n);
  for (unsigned i = 0; i < p->n; ++i) {
    TraceBuf* b = p->workers[i].trace;
    auto& out = t.workers[i];
    // acquire/release: see trace_event. Copy under the flag, convert outside it.
    for (Backoff<trace_buffer_spins> bo; b->busy.exchange(true, std::memory_order_acquire);) bo.pause();
    try {
      b->copy_to(out);
    } catch (...) {
      b->busy.store(false, std::memory_order_release);
      throw;
    }
    b->busy.store(false, std::memory_order_release);
    std::uint64_t last = 0;
    for (trace::Event& e : out) {
      std::uint64_t dt = e.t_ns > p->trace.tsc0 ? e.t_ns - p->trace.tsc0 : 0;
      std::uint64_t ns = static_cast<std::uint64_t>(static_cast<double>(dt) * ns_per_tick);
      if (ns < last) ns = last;  // per-worker monotonic even if the TSC wobbles across CPUs
      last = ns;
      e.t_ns = ns;
    }
  }
  *ok = trace::write_trace(t, path, err);
}

void trace_write_now(Pool* p) noexcept {
  if (p->trace.path.empty()) return;
  std::string err;
  bool ok = false;
  try {
    write_out(p, p->trace.path, &err, &ok);
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!ok) std::fprintf(stderr, "plait: cannot write trace %s: %s\n", p->trace.path.c_str(), err.c_str());
}

void trace_finish(Pool* p) noexcept {
  if (p->trace.path.empty()) return;
  trace_write_now(p);
  for (unsigned i = 0; i < p->n; ++i) {
    delete p->workers[i].trace;
    p->workers[i].trace = nullptr;
  }
}

}  // namespace plait::detail

namespace plait {

bool pool::tracing() const noexcept { return !impl_->trace.path.empty(); }

void pool::write_trace(const std::string& path) const {
  detail::Pool* p = impl_.get();
  if (p->trace.path.empty())
    throw std::logic_error("plait::pool::write_trace: this pool does not trace (set pool_options::trace_path or PLAIT_TRACE)");
  std::string err;
  bool ok = false;
  detail::write_out(p, path, &err, &ok);
  if (!ok) throw std::runtime_error("plait: cannot write trace " + path + ": " + err);
}

void label_next_task(const char* label) noexcept {
  detail::Worker* w = detail::current_worker();
  if (w == nullptr || w->trace == nullptr || label == nullptr) return;
  detail::Pool* p = w->pool;
  std::uint32_t idx = 0;
  {
    std::lock_guard<std::mutex> lk(p->trace.mu);
    for (std::size_t i = 1; i < p->trace.label_keys.size(); ++i)
      if (p->trace.label_keys[i] == label) idx = static_cast<std::uint32_t>(i);
    if (idx == 0) {
      try {
        p->trace.label_keys.push_back(label);
        p->trace.labels.emplace_back(label);
        idx = static_cast<std::uint32_t>(p->trace.labels.size() - 1);
      } catch (...) {
        return;
      }
    }
  }
  w->trace->next_label = idx;
}

}  // namespace plait
