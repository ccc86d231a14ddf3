// Internal: the split deque, one per worker. Not part of the public API.
//
// Lace's split deque (van Dijk & van de Pol), written from the paper's description. Slots live in
// one array; indices only grow upward from 0:
//
//      0 ......... tail ............ split ............ head ...... capacity
//      | stolen     | shared: thieves  | private: owner   | free
//      |            | may take these   | only, no atomics |
//
// The type has two halves, used by two kinds of threads:
//
//   owner half (one thread)  write_private + head bump (spawn), pop_private (join), and the slow
//                            paths push_slow / take_back / serve / top_up / supply_all / reclaim;
//   thief half (any thread)  try_claim (take the k oldest shared slots with one CAS), release
//                            (hand a claimed slot back to the owner once read), request (ask the
//                            owner to publish).
//
//   * `head` and the owner's copy of `split` are plain fields that only the owner touches.
//   * `ts` packs (tail << 32 | split) in one 64-bit atomic. Thieves claim slots [tail, tail+k) with
//     one CAS that moves tail while checking that split did not move; the owner moves split with an
//     atomic RMW on the same word, so every change of the shared region is one linearisable
//     operation on one location (no mixed-size accesses, no fences on the fast path).
//   * push writes a private slot and bumps head: no atomic RMW, no fence. pop of a private slot
//     decrements head: no atomic RMW, no fence. Only when the slot is below split (it was made
//     shared) does the owner go to the slow path and take it back with a CAS, or learn that it was
//     stolen.
//   * Thieves that find nothing shared set a request bit; the owner sees it at its next push or pop
//     (the limits below send both to the slow path) and publishes half of its private slots.
//
// The deque knows nothing of pools, counters or traces. What the layers above need to know comes
// back in return values and in `fresh` (how many publications since the owner last collected
// them: the worker then wakes a sleeper); the named protocol points (at_point) are the hooks that
// stress mode and the litmus tests use to widen race windows. docs/design.md ("The split deque")
// has the invariants, numbered as in the PLAIT_ASSERTs below, and the argument for every memory
// order.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/latch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

namespace plait::detail {

struct Worker;

// A slot's task is run through this pointer: exec(data, worker that runs it).
using exec_fn = void (*)(void* data, Worker* w);

enum class slot_kind : std::uintptr_t {
  joinable = 0,  // a spawn handle on the spawner's stack, or a frame task (plait/frame.hpp); joined LIFO
  detached = 1,  // a task_group child (heap record); nobody joins the slot itself
};

// Bytes of a slot's payload: a frame task's arguments, then its result or exception (plait/frame.hpp).
inline constexpr std::size_t payload_size = 24;

struct Slot {
  exec_fn exec;
  // The task's data pointer with its slot_kind in bit 0 (data is at least 8-byte aligned), so a
  // push writes two words, not three.
  std::uintptr_t tagged;
  // 0 while unclaimed. A thief writes its mark (worker index + 1) with release once it has read
  // exec and data; until then the owner must not reuse the slot. The owner puts 0 back when it
  // pops the stolen slot, so every slot at or above head holds 0 and a push need not write it.
  std::atomic<std::uint32_t> thief;
  // Written only while tracing, read by whoever runs the slot; otherwise unused.
  std::uint32_t trace_label;
  std::uint64_t trace_id;
  // A frame task's record (plait/frame.hpp, SplitDeque::write_frame). The owner writes the
  // arguments into `payload` and points `tagged` at the slot itself, so a frame spawn keeps
  // nothing of its own in memory. A thief reads the arguments through the data pointer like any
  // task's data, writes the result (or an exception_ptr) over them and sets `done` (OnceLatch:
  // release). The owner keeps the slot reserved until it has read them, then resets `done`: every
  // free slot holds a pending latch (the mapping starts zeroed), so a frame spawn need not write
  // it. Closure spawns and task_group children leave both untouched.
  alignas(8) unsigned char payload[payload_size];
  OnceLatch done;

  void* data() const noexcept { return reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}); }
  slot_kind kind() const noexcept { return static_cast<slot_kind>(tagged & 1); }
};
static_assert(sizeof(Slot) == 64, "a deque slot is 64 bytes: one per cache line");
static_assert(sizeof(OnceLatch) == 1 && std::is_trivially_destructible_v<OnceLatch>);

// `x < limit.load(relaxed)` and `x >= limit.load(relaxed)`, for the frame fast paths. gcc
// keeps an atomic load out of other instructions (a mov, then the compare), and with any compare
// it can see through it also loses the shrink-wrapping of a frame function's leaf call; on x86-64
// each test here is one cmp with the limit as its memory operand and the branch on its flags. The
// same access as the relaxed load: one aligned 4-byte read of the word. The contract of the asm,
// operand by operand:
//   * `%k[x]`: the low 32 bits of x's register. x may be wider than the limit (a frame's 64-bit
//     head): only its low half is compared, which is all of it (heads stay below capacity <= 2^30).
//   * `[lim] "m"` / `"m"(*this)`: the limit as the compare's memory operand, so the read is the
//     asm's and is done each time the asm runs (asm goto is volatile: never dropped, merged or
//     hoisted out of a loop).
//   * "memory": the compiler must assume the asm reads and writes any memory, so no load or store
//     of the fast path moves across the compare, no value read before it is reused after it, and
//     no store is sunk past it onto one of its two edges. This is stronger than the relaxed load it
//     stands for (which orders nothing) and gives the compiler no freedom the load would not: the
//     tests in split_deque_test.cpp (DequeLimits) check each helper against the plain compare at
//     every boundary and that a limit another thread changes is seen by a looping reader. With it
//     the frame functions compile to the same instructions (bench/fib/plait_frame.cpp, objdump).
//   * "cc": the flags.
//   below_limit(x, limit)    x < limit; the branch is taken when it is not (a push's slow path)
//   limit_reached(x, limit)  x >= limit; the branch is taken when it is not (a pop's slow path)
// (The jump of an asm goto cannot be inverted by the compiler, so each test has the form whose
// fall-through is the fast path.) ThreadSanitizer builds use the load (the tool does not see
// inside asm); so do the closure paths (push_fast_ok, pop_private), where the asm would save 2 of
// about 41 instructions per spawn and join.
// Both compares are limit_compare<Below>: Below, x < limit (below_limit); !Below, x >= limit
// (limit_reached).
#if defined(__x86_64__) && !defined(PLAIT_TSAN)
template <bool Below, class X>
PLAIT_INLINE bool limit_compare(X x, const std::atomic<std::uint32_t>& limit) noexcept {
  static_assert(std::is_unsigned_v<X> && sizeof(X) >= 4);
  if constexpr (Below)
    __asm__ goto("cmpl %[lim], %k[x]\n\tjae %l[no]" : : [x] "r"(x), [lim] "m"(limit) : "cc", "memory" : no);
  else
    __asm__ goto("cmpl %[lim], %k[x]\n\tjb %l[no]" : : [x] "r"(x), [lim] "m"(limit) : "cc", "memory" : no);
  return true;
no:
  return false;
}
#else
template <bool Below, class X>
PLAIT_INLINE bool limit_compare(X x, const std::atomic<std::uint32_t>& limit) noexcept {
  const std::uint32_t l = limit.load(std::memory_order_relaxed);
  return Below ? static_cast<std::uint32_t>(x) < l : static_cast<std::uint32_t>(x) >= l;
}
#endif
template <class X>
PLAIT_INLINE bool below_limit(X x, const std::atomic<std::uint32_t>& limit) noexcept {
  return limit_compare<true>(x, limit);
}
template <class X>
PLAIT_INLINE bool limit_reached(X x, const std::atomic<std::uint32_t>& limit) noexcept {
  return limit_compare<false>(x, limit);
}

inline constexpr std::uint64_t ts_pack(std::uint32_t tail, std::uint32_t split) {
  return (static_cast<std::uint64_t>(tail) << 32) | split;
}
inline constexpr std::uint32_t ts_tail(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
inline constexpr std::uint32_t ts_split(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

// Request bits (SplitDeque::req), set by thieves.
inline constexpr std::uint32_t req_steal = 1;  // a thief found nothing shared: publish more

// pop_limit while a request is pending (or always, in go_slow mode): no index reaches it, so
// every pop goes slow.
inline constexpr std::uint32_t pop_limit_requested = 0xffffffffu;

// push_slow's answer when it pushed nothing (the deque is full).
inline constexpr std::uint32_t no_slot = ~std::uint32_t{0};

// `head` while frame code (plait/frame.hpp) runs on the owner: the frame functions carry the head
// in a register and do not write it back on their fast paths. No index reaches this value
// (capacity <= 2^30), so every push of code that is not frame-aware fails its push_limit compare
// and reaches a slow path, and a closure join fails its compare with the handle's top; the worker's
// slow paths that read the head then stop the program (frame_check, worker.hpp). The frame's own
// slow paths store the exact head before they call any slow path of the deque.
inline constexpr std::uint32_t head_in_frame = 0xffffff00u;

// What a thief learns from one attempt.
enum class steal_result { success, empty, contended };

// ---- Hooks at named protocol points ---------------------------------------------------------
// Every place where the interleaving of owner and thieves matters calls at_point with its name
// just before the racing access. Off (no hook installed) it is one load of a global and a branch,
// on slow paths only. PLAIT_STRESS=1 installs a random sched_yield (src/stress.cpp); the litmus
// tests install their own to force an order.
enum class protocol_point : std::uint8_t {
  publish,        // owner: before the RMW that moves split up
  reset,          // owner: before the store that starts a new shared region after all-stolen
  take_back,      // owner: before the CAS that moves split down over the slot it pops
  reclaim,        // owner: before the CAS that takes a buried slot back (group wait)
  steal,          // thief: between reading tail/split and its CAS
  wait_mark,      // owner: waiting for the mark of the thief of a slot it popped
  sleep_check,    // a would-be sleeper: after announcing itself, before it looks for work
  wait_pause,     // a waiter (join, group wait, idle worker) between two looks for work
  latch_woken,    // a latch waiter back from its sleep, its mark removed, before it looks again
  hand_in,        // a thread handing a completion to a pool: after it is visible, before the wake-up
};
using protocol_hook = void (*)(protocol_point) noexcept;
extern protocol_hook g_protocol_hook;  // null: off
PLAIT_INLINE void at_point(protocol_point p) noexcept {
  if (PLAIT_UNLIKELY(g_protocol_hook != nullptr)) g_protocol_hook(p);
}

// How many of `avail` (>= 1) shared slots one claim takes: the thief's steal policy, capped by
// `room` (what fits in half of the thief's free slots). Never 0, never above avail.
struct claim_rule {
  enum class kind : std::uint8_t { one, chunk, half, share } how = kind::one;
  std::uint32_t chunk = 1;    // kind::chunk: this many
  std::uint32_t workers = 1;  // kind::share: avail / workers once avail >= 2 * workers, else 1
  std::uint32_t room = ~0u;
  PLAIT_INLINE std::uint32_t amount(std::uint32_t avail) const noexcept {
    std::uint32_t k;
    switch (how) {
      case kind::chunk: k = chunk; break;
      case kind::half: k = (avail + 1) / 2; break;
      case kind::share: k = avail >= 2 * workers ? avail / workers : 1; break;
      default: return 1;
    }
    if (k > avail) k = avail;
    if (k > room) k = room;
    return k < 1 ? 1 : k;
  }
};

// What try_claim got: on success, slots [first, first + k) are the thief's; it must read each
// and then release() it.
struct claim {
  steal_result result;
  std::uint32_t first = 0;
  std::uint32_t k = 0;
};

class SplitDeque {
 public:
  // ---- Line 1: read by thieves on every attempt. `slots` never changes after init.
  alignas(cache_line) std::atomic<std::uint64_t> ts{0};  // tail<<32 | split
  Slot* slots = nullptr;

  // ---- Line 2: the owner's fast-path limits and the request bits. The owner reads the limits on
  // every push/pop (the line stays in its cache, shared); a thief writes here only to ask for
  // work, and only when no request is pending, so the line moves rarely.
  //   push fast path  iff head <  push_limit   (capacity; 0 while a request or a reset is due)
  //   pop fast path   iff head-1 >= pop_limit  (split;    ~0 while a request is due)
  // One compare per operation thus covers "deque full", "thief asked" and "slot is shared".
  alignas(cache_line) std::atomic<std::uint32_t> push_limit{0};
  std::atomic<std::uint32_t> pop_limit{0};
  std::atomic<std::uint32_t> req{0};

  // ---- Line 3: owner-only state. Thieves never read these.
  alignas(cache_line) Slot* own = nullptr;  // the owner's copy of `slots`: push/pop never touch line 1
  std::uint32_t head = 0;
  std::uint32_t split = 0;  // equals ts_split(ts) whenever the owner is between operations
  std::uint32_t capacity = 0;
  std::uint32_t base = 0;   // head when the task now running on this deque's owner started; pops stop here
  std::uint32_t fresh = 0;  // publications since the owner last collected them (the worker wakes a sleeper)
  std::uint32_t last_thief = 0;  // take_back: the mark of the thief of the slot just found stolen
  bool allstolen = true;    // every shared slot was stolen: the next push makes its slot shared
  bool take_one = false;    // take_back takes back only the popped slot, not the newer half
  bool go_slow = false;     // keep both limits at their "go slow" values (tracing)

  // Owner (before any other use): the deque's memory, `capacity` slots of zeroed memory.
  void init(Slot* mem, std::uint32_t cap) noexcept {
    slots = own = mem;
    capacity = cap;
  }

  // ---- Owner half, fast paths --------------------------------------------------------------

  // Writes a private slot h == head below push_limit and bumps head.
  PLAIT_INLINE void write_private(std::uint32_t h, exec_fn exec, std::uintptr_t tagged) noexcept {
    Slot& s = own[h];
    PLAIT_ASSERT(s.thief.load(std::memory_order_relaxed) == 0);  // invariant 5: free slots hold no mark
    // Plain stores: the slot is private (h >= split); it becomes visible to thieves only through
    // the release RMW/store on `ts` that publishes it (publish / push_slow), which orders them.
    s.exec = exec;
    s.tagged = tagged;
    head = h + 1;
  }

  // Whether a push of slot `h` (== head) may take the fast path. relaxed: a request is a hint;
  // reading it late only delays publication by one push.
  PLAIT_INLINE bool push_fast_ok(std::uint32_t h) const noexcept {
    return h < push_limit.load(std::memory_order_relaxed);
  }

  // Takes the newest slot off: true when it was private (the caller owns it); false when the
  // caller must call take_back(head) to learn whether it is ours (or, having changed nothing else,
  // put head back and leave the slot to a slow path that pops it again).
  PLAIT_INLINE bool pop_private() noexcept {
    PLAIT_ASSERT(head > base);  // invariant 6: no pop below the frame's base
    const std::uint32_t h = head - 1;
    head = h;
    // relaxed: pop_limit is the owner's split unless a thief raised it to ask for work; a late
    // read only delays publication. The split test alone decides ownership (split only moves by us).
    return h >= pop_limit.load(std::memory_order_relaxed);
  }

  // ---- Owner half, frame fast paths (plait/frame.hpp) -----------------------------------------
  // The frame keeps the head h in a register while `head` holds head_in_frame: these neither read
  // nor write `head`. h is 64 bits wide (it travels in a register pair with the worker); its
  // value stays below capacity.

  // Whether a frame push of slot h may take the fast path: h < push_limit, as push_fast_ok, with
  // the deque's address and a constant offset as the operand (an operand naming the limit gives
  // the compiler an address, &push_limit, to compute once and keep in a callee-saved register
  // across the recursion).
  PLAIT_INLINE bool frame_push_ok(std::uint64_t h) const noexcept {
#if defined(__x86_64__) && !defined(PLAIT_TSAN)
    __asm__ goto("cmpl %c[off](%[dq]), %k[h]\n\tjae %l[no]"
                 :
                 : [h] "r"(h), [dq] "r"(this), [off] "i"(offsetof(SplitDeque, push_limit)), "m"(*this)
                 : "cc", "memory"
                 : no);
    return true;
  no:
    return false;
#else
    return below_limit(h, push_limit);
#endif
  }

  // A frame push of slot h below push_limit (frame_push_ok): the arguments into the payload, the
  // slot's data pointer at the slot itself. `thief` is 0 and `done` pending (free-slot
  // invariants), so neither is written. Plain stores: the slot is private; the release RMW or
  // store on `ts` that publishes it (publish, push_slow) orders them before a thief's reads.
  template <class Args>
  PLAIT_INLINE Slot& write_frame(std::uint64_t h, exec_fn exec, const Args& a) noexcept {
    static_assert(sizeof(Args) <= payload_size && alignof(Args) <= 8 && std::is_trivially_copyable_v<Args>);
    Slot& s = own[h];
    PLAIT_ASSERT(s.thief.load(std::memory_order_relaxed) == 0);  // invariant 5
    PLAIT_ASSERT(!s.done.probe());
    ::new (static_cast<void*>(s.payload)) Args(a);
    s.exec = exec;
    s.tagged = reinterpret_cast<std::uintptr_t>(&s);  // slot_kind::joinable (slots are 8-byte aligned)
    return s;
  }

  // Whether a frame pop of slot h (the head after the pop) may take the fast path: h >= pop_limit.
  PLAIT_INLINE bool frame_pop_ok(std::uint64_t h) const noexcept { return limit_reached(h, pop_limit); }

  // The frame's sync of slot h found it stolen (take_back returned false; head == h). The thief
  // writes the result into slot h, so the slot stays reserved while the owner waits: hold_stolen
  // moves head to h + 1, above it; release_stolen (after the result was read) puts the deque back
  // in the all-stolen state at head h.
  void hold_stolen(std::uint32_t h) noexcept;
  void release_stolen(std::uint32_t h) noexcept;

  // ---- Owner half, slow paths (src/split_deque.cpp) ------------------------------------------

  // A push that push_fast_ok refused: pushes at head (publishing it at once after all-stolen) and
  // returns its index, or no_slot when the deque is full. Serves a pending request.
  PLAIT_NOINLINE std::uint32_t push_slow(exec_fn exec, std::uintptr_t tagged) noexcept;
  // A pop that pop_private refused, of slot h (== head, already decremented): true when the slot
  // is ours, false when a thief took it (its mark is then in last_thief, and the slot is free).
  PLAIT_NOINLINE bool take_back(std::uint32_t h) noexcept;
  // Serves a pending request outside a push or pop (publishes below head).
  PLAIT_NOINLINE void serve() noexcept;
  // Entering a group wait whose children above `floor` were partly published while added:
  // publish half of the private ones (the newest stays private).
  void top_up(std::uint32_t floor) noexcept;
  // Publishes every private slot (coarse children: no thief waits for one we hold).
  void supply_all() noexcept;
  // Makes slot i (below the newest, at or above base) private, taking it back from the shared
  // part if need be. False when a thief claimed it first.
  bool reclaim(std::uint32_t i) noexcept;
  // Debug builds: asserts the invariants of docs/design.md. Owner, between operations.
  void check_invariants() const noexcept;

  // ---- Thief half (any thread) ---------------------------------------------------------------

  // Claims the oldest shared slots, as many as `amount` says. On empty, asks the owner to publish
  // (request); on emptying the shared part, asks for the next refill at once.
  claim try_claim(const claim_rule& rule) noexcept;
  // The claimed slot i was read: the owner may reuse it. release: the reads happen-before the
  // owner's reuse (it acquires the mark in take_back).
  void release(std::uint32_t i, std::uint32_t mark) noexcept { slots[i].thief.store(mark, std::memory_order_release); }
  // Asks the owner to publish at its next push or pop (no-op while a request is pending).
  void request() noexcept;

 private:
  void publish(std::uint32_t grow) noexcept;
  bool publish_half(std::uint32_t limit) noexcept;
  void settle(std::uint32_t protect) noexcept;
};

}  // namespace plait::detail
