// Internal: the per-worker split deque and its inline fast paths. Not part of the public API.
//
// The deque is Lace's split deque (van Dijk & van de Pol), written from the paper's description.
// Slots live in one array per worker. Indices only grow upward from 0:
//
//      0 ......... tail ............ split ............ head ...... capacity
//      | stolen     | shared: thieves  | private: owner   | free
//      |            | may take these   | only, no atomics |
//
//   * `head` and the owner's copy of `split` are plain fields that only the owner touches.
//   * `ts` packs (tail << 32 | split) in one 64-bit atomic. Thieves claim slot `tail` with one CAS
//     that moves tail to tail+1 while checking that split did not move; the owner moves split with
//     an atomic RMW on the same word, so every change of the shared region is one linearisable
//     operation on one location (no mixed-size accesses, no fences on the fast path).
//   * spawn (push) writes a private slot and bumps head: no atomic RMW, no fence.
//   * join (pop) of a private slot decrements head: no atomic RMW, no fence. Only when the slot
//     is below split (it was made shared) does the owner go to the slow path and take it back
//     with a CAS, or learn that it was stolen.
//   * Thieves that find nothing shared set a request bit; the owner sees it at its next spawn or
//     join and publishes half of its private slots (moves split up).
//
// docs/design.md has the invariants and the argument for every memory order used here.
#pragma once

#include <plait/config.hpp>
#include <plait/counters.hpp>

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace plait::detail {

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

struct Worker;
class Pool;
struct TraceBuf;

// A stolen task is run through this pointer: exec(data, worker that runs it).
using exec_fn = void (*)(void* data, Worker* w);

enum class slot_kind : std::uintptr_t {
  joinable = 0,  // a spawn handle on the spawner's stack; joined LIFO
  detached = 1,  // a task_group child (heap record); nobody joins the slot itself
};

struct Slot {
  exec_fn exec;
  // The task's data pointer with its slot_kind in bit 0 (data is at least 8-byte aligned), so a
  // push writes two words, not three.
  std::uintptr_t tagged;
  // 0 while unclaimed. A thief writes its worker index + 1 (release) once it has read exec and
  // data; until then the owner must not reuse the slot. The owner puts 0 back when it pops the
  // stolen slot, so every slot at or above head holds 0 and push() need not write it.
  std::atomic<std::uint32_t> thief;
  // Written only while tracing (push_slow), read by whoever runs the slot; otherwise unused. They
  // keep the slot at 32 bytes: two per cache line.
  std::uint32_t trace_label;
  std::uint64_t trace_id;

  void* data() const noexcept { return reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}); }
  slot_kind kind() const noexcept { return static_cast<slot_kind>(tagged & 1); }
};
static_assert(sizeof(Slot) == 32, "a deque slot is 32 bytes");

// Request bits (Worker::req), set by thieves.
inline constexpr std::uint32_t req_steal = 1;  // a thief found nothing shared: publish more

// Worker::pop_limit while a request is pending: no index reaches it, so every pop goes slow.
inline constexpr std::uint32_t pop_limit_requested = 0xffffffffu;

// What the owner learns when it takes its newest slot back. `traced`: ours, like local, but the
// pool is tracing — the caller runs the task and then calls trace_task_end (the task_begin event
// is already recorded). Only returned while tracing, so the fast path compares with `local` only.
enum class pop_result { local, stolen, traced };
// What a thief learns from one attempt.
enum class steal_result { success, empty, contended };

inline constexpr std::uint64_t ts_pack(std::uint32_t tail, std::uint32_t split) {
  return (static_cast<std::uint64_t>(tail) << 32) | split;
}
inline constexpr std::uint32_t ts_tail(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
inline constexpr std::uint32_t ts_split(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

// Adds n to the calling worker's counter `field` (a name from PLAIT_COUNTER_LIST). Off
// (PLAIT_COUNTERS=0) it is an unevaluated sizeof: no instruction, neither w nor n is evaluated,
// and a name that is not in the list still fails to compile, as it does with counters on.
#if PLAIT_COUNTERS
#define PLAIT_COUNT(w, field, n) \
  (w)->ctr.field.store((w)->ctr.field.load(std::memory_order_relaxed) + (n), std::memory_order_relaxed)
#else
#define PLAIT_COUNT(w, field, n) ((void)sizeof(::plait::detail::AtomicCounters::field))
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

struct Worker {
  // ---- Line 1: read by thieves on every attempt. `dq` never changes after start-up.
  alignas(cache_line) std::atomic<std::uint64_t> ts{0};  // tail<<32 | split
  Slot* dq = nullptr;

  // ---- Line 2: the owner's fast-path limits and the request bits. The owner reads the limits on
  // every spawn/join (the line stays in its cache, shared); a thief writes here only to ask for
  // work, and only when no request is pending, so the line moves rarely.
  //   push fast path  iff head <  push_limit   (capacity; 0 while a request or a reset is due)
  //   pop fast path   iff head-1 >= pop_limit  (split;    ~0 while a request is due)
  // One compare per operation thus covers "deque full", "thief asked" and "slot is shared".
  alignas(cache_line) std::atomic<std::uint32_t> push_limit{0};
  std::atomic<std::uint32_t> pop_limit{0};
  std::atomic<std::uint32_t> req{0};

  // ---- Line 3+: owner-only state. Thieves never read these.
  alignas(cache_line) Slot* odq = nullptr;  // the owner's copy of dq: push/pop never touch line 1
  std::uint32_t head = 0;
  std::uint32_t split = 0;  // equals ts_split(ts) whenever the owner is between operations
  std::uint32_t capacity = 0;
  std::uint32_t base = 0;  // head when the task now running on this worker started; pops stop here
  bool allstolen = true;   // every shared slot was stolen: the next push makes its slot shared
  bool take_one = false;   // pop_slow takes back only the popped slot, not the newer half (group_wait, coarse children)
  unsigned index = 0;
  Pool* pool = nullptr;    // null only for no_worker
  std::uint64_t rng = 0;
  unsigned last_victim = 0;
  unsigned last_thief = 0;  // pop_slow: the mark (index+1) of the thief of the slot just popped
  TraceBuf* trace = nullptr;  // this worker's event buffer while the pool traces, else null
  std::uint64_t idle_from_ns = 0;  // worker_main: when the current idle period began (0: busy)
  // Batched completion counts (see defer_done below): while a drain loop runs this worker's own
  // slots back to back (defer_ok), a child whose next slot is a sibling of the same group adds
  // its decrement here instead of doing the RMW; the last of the run does one RMW for all.
  bool defer_ok = false;
  std::atomic<std::int64_t>* defer_ctr = nullptr;
  std::int64_t defer_n = 0;
  // Free task records by size class (task_alloc.hpp): task_group children are allocated here by
  // the worker that adds them and freed by the worker that ran them.
  AllocCache acache[alloc_classes];
  // task_group::run runs a child at once instead of pushing it while this worker holds at least
  // this many private slots (pool_options::group_throttle; ~0u: never).
  std::uint32_t throttle = ~0u;

  alignas(cache_line) AtomicCounters ctr;
};

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

// Slow paths, out of line (src/deque.cpp). Deliberately noinline but not [[gnu::cold]]: gcc 12
// treats every path that may reach a cold call as unlikely, which moved the spawn fast path into
// .text.cold when push() called a cold function.
// push_slow returns the index of the pushed slot, or no_slot when it pushed nothing.
inline constexpr std::uint32_t no_slot = ~std::uint32_t{0};
PLAIT_NOINLINE std::uint32_t push_slow(Worker* w, exec_fn exec, std::uintptr_t tagged) noexcept;
PLAIT_NOINLINE pop_result pop_slow(Worker* w, std::uint32_t h) noexcept;
// Publishes private slots for a pending steal request, outside a push or pop (task_group's throttle).
PLAIT_NOINLINE void serve_request(Worker* w) noexcept;
PLAIT_COLD [[noreturn]] void lifo_violation(Worker* w, std::uint32_t h, const void* expected);
PLAIT_COLD [[noreturn]] void not_a_worker(const char* what);
// Tracing (src/trace.cpp): closes the task whose begin pop_slow recorded (pop_result::traced).
PLAIT_COLD void trace_task_end(Worker* w) noexcept;

// The push fast path's writes, for a private slot h == head below push_limit: the slot, the new
// head, the counter. Shared by push() and spawn_handle's constructor.
PLAIT_INLINE void write_private(Worker* w, std::uint32_t h, exec_fn exec, std::uintptr_t tagged) noexcept {
  Slot& s = w->odq[h];
  PLAIT_ASSERT(s.thief.load(std::memory_order_relaxed) == 0);  // invariant 5: free slots hold no mark
  // Plain stores: the slot is private (h >= split); it becomes visible to thieves only through
  // the release RMW/store on `ts` that publishes it (push_slow / pop_slow), which orders them.
  s.exec = exec;
  s.tagged = tagged;
  w->head = h + 1;
  PLAIT_COUNT(w, spawns, 1);
}

// Owner: push a slot. Returns false when the slot could not be pushed: the deque is full (the
// caller then runs the task itself at once: a full deque degrades to serial execution, never
// aborts) or the thread is no worker (w == &no_worker; the caller throws).
PLAIT_INLINE bool push(Worker* w, exec_fn exec, void* data, slot_kind kind) noexcept {
  std::uint32_t h = w->head;
  std::uintptr_t tagged = reinterpret_cast<std::uintptr_t>(data) | static_cast<std::uintptr_t>(kind);
  // relaxed: a request is a hint; reading it late only delays publication by one spawn.
  if (PLAIT_UNLIKELY(h >= w->push_limit.load(std::memory_order_relaxed))) return push_slow(w, exec, tagged) != no_slot;
  write_private(w, h, exec, tagged);
  return true;
}

// Owner: take the newest slot back. `local` means the caller owns it and runs it inline.
PLAIT_INLINE pop_result pop(Worker* w) noexcept {
  PLAIT_ASSERT(w->head > w->base);  // invariant 6: no pop below the frame's base
  std::uint32_t h = w->head - 1;
  w->head = h;
  // relaxed: pop_limit is the owner's split unless a thief raised it to ask for work; a late read
  // only delays publication. The split test alone decides ownership (split only moves by us).
  if (PLAIT_LIKELY(h >= w->pop_limit.load(std::memory_order_relaxed))) return pop_result::local;
  return pop_slow(w, h);
}

// Completion of a task_group child (or a loop record) whose group counter is `ctr`. Two
// sibling tasks that run back to back on one worker need not each do an RMW on the group's counter
// — a line that the group's waiter and every other worker finishing siblings also write. If the
// next slot on our deque is private (no thief can take it), lies in the current frame and holds a
// sibling (`next_ctr` gives its counter, null if it is no sibling), and we are inside a drain loop
// (defer_ok: the loop pops that slot next and flushes when it stops), the decrement is added to
// defer_n. Otherwise one fetch_sub covers this task and every deferred one of the same counter.
// The counter cannot reach zero early: it only ever receives decrements of tasks that finished,
// and the waiter cannot see zero while a deferred sibling is still to run. acq_rel: the release
// publishes the effects of every task counted in n (all ran on this worker, before the RMW).
template <class NextCtr>
PLAIT_INLINE void defer_done(Worker* w, std::atomic<std::int64_t>* ctr, exec_fn self_exec, NextCtr next_ctr) noexcept {
  if (w->defer_ok && w->head > w->base && w->head - 1 >= w->split) {
    const Slot& nx = w->odq[w->head - 1];
    if (nx.exec == self_exec && next_ctr(nx.data()) == ctr) {
      if (w->defer_ctr != ctr) {
        if (w->defer_ctr != nullptr) w->defer_ctr->fetch_sub(w->defer_n, std::memory_order_acq_rel);
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
  ctr->fetch_sub(n, std::memory_order_acq_rel);
}

// Applies any deferred decrement now (drain loops call it when they stop).
PLAIT_INLINE void flush_deferred(Worker* w) noexcept {
  if (w->defer_ctr != nullptr) {
    // acq_rel: as in defer_done.
    w->defer_ctr->fetch_sub(w->defer_n, std::memory_order_acq_rel);
    w->defer_ctr = nullptr;
    w->defer_n = 0;
  }
}

}  // namespace plait::detail
