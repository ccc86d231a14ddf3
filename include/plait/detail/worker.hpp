// Internal: a worker's state (its split deque, allocator caches, trace buffer, batched completion,
// RNG, idle clock, counters) and the inline spawn/join paths on top of the deque. Not part of the
// public API. The deque itself is include/plait/detail/split_deque.hpp.
#pragma once

#include <plait/config.hpp>
#include <plait/counters.hpp>
#include <plait/detail/latch.hpp>
#include <plait/detail/split_deque.hpp>

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace plait::detail {

struct VictimOrder;

// A cheap timestamp (TSC ticks, ~7 ns to read here; only ratios to a threshold matter): sizes the
// adaptive loop batches (parallel_for.hpp) and tells coarse task_group children from fine ones
// (group_wait in src/worker.cpp).
PLAIT_INLINE std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

class Pool;
struct TraceBuf;

// What the owner learns when it takes its newest slot back. `traced`: ours, like local, but the
// pool is tracing — the caller runs the task and then calls trace_task_end (the task_begin event
// is already recorded). Only returned while tracing, so the fast path compares with `local` only.
enum class pop_result { local, stolen, traced };

// Adds n to the calling worker's counter `field` (a name from PLAIT_COUNTER_LIST). Off
// (PLAIT_COUNTERS=0) it is an unevaluated sizeof: no instruction, neither w nor n is evaluated,
// and a name that is not in the list still fails to compile, as it does with counters on.
#if PLAIT_COUNTERS
#define PLAIT_COUNT(w, field, n) \
  (w)->ctr.field.store((w)->ctr.field.load(std::memory_order_relaxed) + (n), std::memory_order_relaxed)
#else
#define PLAIT_COUNT(w, field, n) ((void)sizeof(::plait::detail::AtomicCounters::field))
#endif

// PLAIT_COUNT(w, field, 1) for the spawn fast paths, in one instruction instead of three. gcc and
// clang do not fold a relaxed atomic load and store into one memory increment, so on x86-64 it is
// written as one `incq` on the counter's word. That is the same access as the load and store: only
// the owner writes the counter, and an aligned 8-byte store is single-copy atomic on x86-64, so a
// relaxed load by another thread (pool::counters) sees the old or the new value, never a torn one.
// The asm names the word as its memory operand, so the compiler neither drops nor moves it across
// other accesses of that word. ThreadSanitizer builds and other targets: PLAIT_COUNT.
#if PLAIT_COUNTERS && defined(__x86_64__) && !defined(PLAIT_TSAN)
#define PLAIT_COUNT_ONE(w, field) \
  __asm__ volatile("incq %0" : "+m"(*reinterpret_cast<std::uint64_t*>(&(w)->ctr.field)))
#else
#define PLAIT_COUNT_ONE(w, field) PLAIT_COUNT(w, field, 1)
#endif

// Task-record allocator (include/plait/detail/task_alloc.hpp, src/task_alloc.cpp): a free block
// links to the next one in its list; the first block of a batch handed to the pool's depot also
// links to the next batch. Blocks are at least 64 bytes, so both links fit.
struct FreeBlock {
  FreeBlock* next;
  FreeBlock* next_batch;
};
// One size class of a worker's cache: `head` holds n blocks (n < the class's batch size), `full`
// holds either nothing or exactly one batch. Owner-only.
struct AllocCache {
  FreeBlock* head = nullptr;
  FreeBlock* full = nullptr;
  std::uint32_t n = 0;
};
inline constexpr unsigned alloc_classes = 4;  // blocks of 64, 128, 256 and 512 bytes

// The runtime's copy of worker_counters, expanded from the same list (PLAIT_COUNTER_LIST in
// counters.hpp): one atomic per counter, with the public field's name, so PLAIT_COUNT(w, name, n)
// and the snapshot in pool::counters() match by name. Written by the owning worker only (relaxed
// load + store); read by anyone (relaxed).
struct AtomicCounters {
#define PLAIT_ATOMIC_COUNTER_(name, description) std::atomic<std::uint64_t> name{0};
  PLAIT_COUNTER_LIST(PLAIT_ATOMIC_COUNTER_)
#undef PLAIT_ATOMIC_COUNTER_
};
// PLAIT_COUNT_ONE writes a counter as a plain 8-byte word.
static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t) && std::atomic<std::uint64_t>::is_always_lock_free);

// A task handed to one particular worker (the OpenMP front door's implicit tasks: thread i of a
// team must be worker i). The worker runs exec(data, w) when it next looks for work.
struct Mail {
  exec_fn exec;
  void* data;
};

struct Worker {
  // Lines 1-3: the deque (thief-visible line, limits line, owner line).
  SplitDeque dq;

  // ---- Owner-only state. Thieves read only `index` (constant) and `pool` (constant).
  alignas(cache_line) unsigned index = 0;
  Pool* pool = nullptr;    // null only for no_worker
  std::uint64_t rng = 0;
  unsigned last_victim = 0;
  // Pinned workers: the others nearest first, in rings (src/topology.hpp); null: the flat order.
  const VictimOrder* vorder = nullptr;
  TraceBuf* trace = nullptr;  // this worker's event buffer while the pool traces, else null
  std::uint64_t idle_from_ns = 0;  // when the current idle period began (0: busy)
  // Batched completion counts (see defer_done below): while a drain loop runs this worker's own
  // slots back to back (defer_ok), a child whose next slot is a sibling of the same group adds
  // its decrement here instead of doing the RMW; the last of the run does one RMW for all.
  bool defer_ok = false;
  CountLatch* defer_ctr = nullptr;
  std::int64_t defer_n = 0;
  // Free task records by size class (task_alloc.hpp): task_group children are allocated here by
  // the worker that adds them and freed by the worker that ran them.
  AllocCache acache[alloc_classes];
  // task_group::run runs a child at once instead of pushing it while this worker holds at least
  // this many private slots (pool_options::group_throttle; ~0u: never).
  std::uint32_t throttle = ~0u;
  // ---- Written by other threads (the block above is the owner's alone).
  // A task for this worker alone, or null: other threads post it (post_mail in src/sleep.cpp,
  // a release store), the owner takes it when it looks for work.
  std::atomic<Mail*> mail{nullptr};

  alignas(cache_line) AtomicCounters ctr;
};

PLAIT_COLD [[noreturn]] void frame_misuse(const char* what);

// Stops the program when the worker is running frame code (its deque's head is head_in_frame,
// split_deque.hpp); `what` names the construct used there. Every slow path of the worker that
// reads the head calls it before using it.
PLAIT_INLINE void frame_check(const Worker* w, const char* what) {
  if (PLAIT_UNLIKELY(w->dq.head == head_in_frame)) frame_misuse(what);
}

// A join by a task other than the spawner. A task_group child (or loop record, or data-flow task)
// that runs in place on its creator's worker — popped by a wait, run at once by a full deque or
// the throttle — starts with the deque's head where its creator left it: when the creator's
// newest slot is a spawn handle, the child's head equals that handle's top, and the handle's
// join passes its one compare as if the child had spawned it (the closure then runs once, on that
// worker, while the spawner is suspended beneath: the join the spawner would have made). Legal
// code never pops a joinable slot below the task it runs (only that slot's own join pops it, and
// drains stop at joinable slots), so such a join shows when the child ends: the head is below
// where it started, or the joinable slot below its start holds something else. guard_frame at the
// child's start and check_frame at its end catch it (a message, then abort) when PLAIT_CHECK_JOINS
// is on: in debug builds, or defined to 1 by the user. Off, they are nothing: the check costs
// about 16 instructions per child (flatloop, a million empty group children: 461.3 M -> 477.3 M
// instructions, +3.5 %; health with the fine cut-off +1.6 %), which release builds do not pay for
// a misuse whose one unchecked form behaves as the legal join (docs/design.md, "Mixing").
#ifndef PLAIT_CHECK_JOINS
#ifdef NDEBUG
#define PLAIT_CHECK_JOINS 0
#else
#define PLAIT_CHECK_JOINS 1
#endif
#endif
struct frame_guard {
#if PLAIT_CHECK_JOINS
  std::uint32_t h0;       // the head when the task started
  std::uintptr_t below;   // own[h0 - 1].tagged when that slot is joinable, else 0: nothing to check
#endif
};
PLAIT_COLD [[noreturn]] void frame_escaped(Worker* w, std::uint32_t h0);
PLAIT_INLINE frame_guard guard_frame([[maybe_unused]] const Worker* w) noexcept {
#if PLAIT_CHECK_JOINS
  const std::uint32_t h = w->dq.head;
  std::uintptr_t below = 0;
  // (head_in_frame is above every index; a task never starts in frame mode, but stay inside own[].)
  if (h > w->dq.base && h != head_in_frame) {
    const Slot& s = w->dq.own[h - 1];
    if (s.kind() == slot_kind::joinable) below = s.tagged;
  }
  return {h, below};
#else
  return {};
#endif
}
PLAIT_INLINE void check_frame([[maybe_unused]] Worker* w, [[maybe_unused]] frame_guard g) noexcept {
#if PLAIT_CHECK_JOINS
  if (PLAIT_UNLIKELY(g.below != 0) &&
      PLAIT_UNLIKELY(w->dq.head < g.h0 || w->dq.own[g.h0 - 1].tagged != g.below))
    frame_escaped(w, g.h0);
#endif
}

// What tl_worker points at on threads that are no worker: its push_limit is 0, so a spawn there
// reaches push_slow, which refuses it; spawn then throws. This keeps a null test off the fast path.
extern constinit Worker no_worker;

// The worker the calling thread is, or null outside every pool. initial-exec: one %fs-relative
// load on the fast path, never a call to __tls_get_addr; constinit: no TLS-init wrapper check.
extern constinit thread_local Worker* tl_worker __attribute__((tls_model("initial-exec")));

// The calling thread's worker, or null on a thread that is no worker.
PLAIT_INLINE Worker* current_worker() noexcept {
  Worker* w = tl_worker;
  return w == &no_worker ? nullptr : w;
}

// The worker's side of the deque's slow paths, out of line (src/steal.cpp): the deque's slow
// path, then the hooks (counters, trace events, waking a sleeper for what it published).
// Deliberately noinline but not [[gnu::cold]]: gcc 12 treats every path that may reach a cold
// call as unlikely, which moved the spawn fast path into .text.cold when push() called a cold
// function. push_slow returns the index of the pushed slot, or no_slot when it pushed nothing
// (deque full, or no worker).
PLAIT_NOINLINE std::uint32_t push_slow(Worker* w, exec_fn exec, std::uintptr_t tagged) noexcept;
PLAIT_NOINLINE pop_result pop_slow(Worker* w) noexcept;
// Publishes private slots for a pending steal request, outside a push or pop (task_group's throttle).
PLAIT_NOINLINE void serve_request(Worker* w) noexcept;
PLAIT_COLD [[noreturn]] void lifo_violation(Worker* w, std::uint32_t h, const void* expected);
PLAIT_COLD [[noreturn]] void not_a_worker(const char* what);
// Tracing (src/trace.cpp): closes the task whose begin pop_slow recorded (pop_result::traced).
PLAIT_COLD void trace_task_end(Worker* w) noexcept;
// Tracing: the running task counts down `latch` (the DAG's join edge; defer_done).
PLAIT_COLD void trace_complete(Worker* w, const void* latch) noexcept;

// The push fast path's writes, for a private slot h == head below push_limit: the slot, the new
// head, the counter. Shared by push() and spawn_handle's constructor.
PLAIT_INLINE void write_private(Worker* w, std::uint32_t h, exec_fn exec, std::uintptr_t tagged) noexcept {
  w->dq.write_private(h, exec, tagged);
  PLAIT_COUNT_ONE(w, spawns);
}

// The throttle (pool_options::group_throttle): the worker already holds this many unstarted
// private tasks of its own, so a new task_group child (or OpenMP task) runs at once instead.
// (head < split when thieves took every shared slot and we popped below them.)
PLAIT_INLINE bool over_throttle(const Worker* w) noexcept {
  return w->dq.head > w->dq.split && w->dq.head - w->dq.split >= w->throttle;
}

// Owner: push a slot. Returns false when the slot could not be pushed: the deque is full (the
// caller then runs the task itself at once: a full deque degrades to serial execution, never
// aborts) or the thread is no worker (w == &no_worker; the caller throws).
PLAIT_INLINE bool push(Worker* w, exec_fn exec, void* data, slot_kind kind) noexcept {
  const std::uint32_t h = w->dq.head;
  const std::uintptr_t tagged = reinterpret_cast<std::uintptr_t>(data) | static_cast<std::uintptr_t>(kind);
  if (PLAIT_UNLIKELY(!w->dq.push_fast_ok(h))) return push_slow(w, exec, tagged) != no_slot;
  write_private(w, h, exec, tagged);
  return true;
}

// Owner: take the newest slot back. `local` means the caller owns it and runs it inline.
PLAIT_INLINE pop_result pop(Worker* w) noexcept {
  if (PLAIT_LIKELY(w->dq.pop_private())) return pop_result::local;
  return pop_slow(w);
}

// Completion of a task_group child (or a loop record) whose group counter is `ctr`. Two
// sibling tasks that run back to back on one worker need not each do an RMW on the group's counter
// — a line that the group's waiter and every other worker finishing siblings also write. If the
// next slot on our deque is private (no thief can take it), lies in the current frame and holds a
// sibling (`next_ctr` gives its counter, null if it is no sibling), and we are inside a drain loop
// (defer_ok: the loop pops that slot next and flushes when it stops), the decrement is added to
// defer_n. Otherwise one count_down covers this task and every deferred one of the same latch.
// The latch cannot reach zero early: it only ever counts down tasks that finished, and the waiter
// cannot see zero while a deferred sibling is still to run. count_down's release publishes the
// effects of every task counted in n (all ran on this worker, before the RMW).
template <class NextCtr>
PLAIT_INLINE void defer_done(Worker* w, CountLatch* ctr, exec_fn self_exec, NextCtr next_ctr) noexcept {
  // Tracing records which latch the task counts down: the wait on it is where the task joins.
  if (PLAIT_UNLIKELY(w->trace != nullptr)) trace_complete(w, ctr);
  if (w->defer_ok && w->dq.head > w->dq.base && w->dq.head - 1 >= w->dq.split) {
    const Slot& nx = w->dq.own[w->dq.head - 1];
    if (nx.exec == self_exec && next_ctr(nx.data()) == ctr) {
      if (w->defer_ctr != ctr) {
        if (w->defer_ctr != nullptr) w->defer_ctr->count_down(w->defer_n);
        w->defer_ctr = ctr;
        w->defer_n = 0;
      }
      ++w->defer_n;
      return;
    }
  }
  std::int64_t n = 1;
  if (w->defer_ctr == ctr) {
    n += w->defer_n;
    w->defer_ctr = nullptr;
    w->defer_n = 0;
  }
  ctr->count_down(n);
}

// Applies any deferred decrement now (drain loops call it when they stop).
PLAIT_INLINE void flush_deferred(Worker* w) noexcept {
  if (w->defer_ctr != nullptr) {
    w->defer_ctr->count_down(w->defer_n);
    w->defer_ctr = nullptr;
    w->defer_n = 0;
  }
}

}  // namespace plait::detail
