// Internal: the hooks — what the runtime records or signals at named points of its protocols, kept
// out of the protocol code so that the deque and the wait loop read as the algorithm. Three
// clients: the counters (PLAIT_COUNT: compiled out with PLAIT_COUNTERS=0), the trace (a branch on
// Worker::trace, which is null unless the pool traces; tracing pools also keep the deque in
// go_slow mode, so the spawn/join fast paths never reach a hook), and the wake-up of sleeping
// workers for newly published work. Stress mode and the litmus tests hook in one level lower, at
// the deque's protocol points (at_point in include/plait/detail/split_deque.hpp).
//
// Every hook is inline and costs, when its client is off, one predictable branch on a slow path.
#pragma once

#include "pool_impl.hpp"

#include <atomic>

namespace plait::detail {

// The StoreLoad fence of the sleep protocols (src/sleep.cpp: idle workers, latch waiters, mail). gcc's
// ThreadSanitizer does not model std::atomic_thread_fence (gcc refuses it with -Wtsan), so that
// tree uses a seq_cst RMW on one process-wide word instead: every such fence is then an RMW in
// one total order, which gives at least the fence's ordering (tsan_fence_word, src/sleep.cpp).
// clang's ThreadSanitizer accepts the fence.
#if defined(PLAIT_TSAN) && defined(__GNUC__) && !defined(__clang__)
extern std::atomic<unsigned> tsan_fence_word;
inline void store_load_fence() noexcept { tsan_fence_word.fetch_add(0, std::memory_order_seq_cst); }
#else
inline void store_load_fence() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

}  // namespace plait::detail

namespace plait::detail::hook {

PLAIT_COLD void published_slow(Worker* w) noexcept;  // steal.cpp

// After any slow deque operation of the owner: the deque published slots (SplitDeque::fresh), so
// count the publications and wake a sleeping worker to take them.
PLAIT_INLINE void published(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(w->dq.fresh != 0)) published_slow(w);
}

// A slot is about to be pushed on the slow path (before it can become shared): while tracing it
// gets its task id and label. `tagged` is what the slot will hold (its kind: the DAG's join rule).
PLAIT_INLINE void pushing(Worker* w, Slot& s, std::uintptr_t tagged) noexcept {
  if (PLAIT_UNLIKELY(tracing(w))) trace_on_push(w, s, tagged);
}

// The owner took slot s back (a slow pop): `traced` when the pool traces (its task_begin is
// recorded here, the caller records the end), else `local`. A tombstone's task was traced where
// it ran.
PLAIT_INLINE pop_result popped(Worker* w, const Slot& s) noexcept {
  if (PLAIT_LIKELY(!tracing(w))) return pop_result::local;
  if (s.exec == &tombstone_exec) return pop_result::local;
  trace_task_begin(w, s.trace_id, s.trace_label);
  return pop_result::traced;
}

// A steal attempt on v found nothing or lost the race.
PLAIT_INLINE void steal_failed(Worker* self, Worker* v) noexcept {
  PLAIT_COUNT(self, steal_failures, 1);
  if (PLAIT_UNLIKELY(tracing(self))) trace_steal_failed(self, v);
}

// A worker found nothing to do and starts (or goes on) waiting: the idle clock starts.
PLAIT_INLINE void idle_begin(Worker* w) noexcept {
  if (w->idle_from_ns != 0) return;
  w->idle_from_ns = now_ns();
  if (PLAIT_UNLIKELY(tracing(w))) trace_event(w, trace::ev::idle_begin, 0, 0, 0);
}

// A worker is about to sleep on the futex, and has woken.
PLAIT_INLINE void sleeping(Worker* w) noexcept {
  PLAIT_COUNT(w, sleeps, 1);
  if (PLAIT_UNLIKELY(tracing(w))) trace_event(w, trace::ev::sleep, 0, 0, 0);
}
PLAIT_INLINE void woken(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(tracing(w))) trace_event(w, trace::ev::wake, 0, 0, 0);
}

}  // namespace plait::detail::hook
