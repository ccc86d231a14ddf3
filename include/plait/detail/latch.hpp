// Internal: latches, the one completion abstraction of the runtime. Not part of the public API.
//
// Every wait in Plait waits for a latch:
//
//   OnceLatch   set once, with a small code: a spawn handle's outcome (value or exception), a root
//               task handed in by pool::run. Also what an external party (an MPI request, a
//               callback) completes later.
//   CountLatch  a count of unfinished tasks that reaches zero once per round: a task_group's
//               children, a loop's records, a data-flow region (through its task_group).
//
// and the one wait loop, run_until (src/wait.cpp), waits for either: it runs work by the waiter's
// policy and, when there is none for about a millisecond, sleeps until the latch completes or new
// work appears. A sleeping waiter marks the latch (in the same word as the state or count), so the
// completer learns in its completing RMW — the last access it makes to the latch — whether it
// must wake anyone: a completion without a sleeper costs what it always did.
//
//   waiter                                         completer
//   ev = its word.load (acquire)                   old = RMW(state or count)   (acq_rel)
//   park under the latch's address                 if old showed a mark and this RMW completed
//   old = RMW adding its mark  (seq_cst)               the latch: wake_latch_waiters(this)
//   if old shows complete: unpark, remove mark         (the threads parked under this address:
//   futex_wait(its word, ev)                            word++, futex wake; src/sleep.cpp)
//   unpark, remove its mark
//
// The RMWs on the latch word are totally ordered. If the completer's comes first, the waiter's
// RMW sees the latch complete and does not sleep. If the waiter's comes first, the completer sees
// the mark, finds the waiter parked and bumps its word after the waiter read `ev` (the waiter's
// load is sequenced before its RMW, which the completer's RMW reads from), so futex_wait returns
// at once or is woken (the proof of the parking step: src/sleep.cpp, S2). No wake-up is lost; the
// completer never touches the latch after its RMW: its address is only the parking table's key.
// A completion wakes its own waiters and no other thread.
//
// Marks. A OnceLatch has one waiter (a joiner, the caller of a root): its mark is one bit. A
// CountLatch may have many (every member of an OpenMP team waits for the team's tasks and for each
// barrier phase), so its mark is a count of sleeping waiters in the word's high bits: each waiter
// adds one before it sleeps and removes it after. One bit would lose a wake-up there — a waiter
// woken spuriously clears the bit while another still sleeps, and the completion then sees no mark.
//
// Lifetime. A latch may be destroyed once every waiter has returned from its wait (the completer
// is done with it at its RMW); with one waiter, as soon as that waiter sees it complete.
#pragma once

#include <plait/config.hpp>

#include <atomic>
#include <cstdint>

namespace plait::detail {

// Wakes the threads sleeping in a wait for the latch at `latch` (parked under that address), and
// no other: the completion that found a waiter marked asleep is the caller. The address is only a
// key; the latch may be gone. Out of line, src/sleep.cpp.
PLAIT_COLD void wake_latch_waiters(const void* latch) noexcept;

class OnceLatch {
 public:
  static constexpr std::uint8_t pending = 0;
  static constexpr std::uint8_t asleep = 0x80;

  // Completer: completes the latch with `code` (1..127). The latch may be destroyed by its waiter
  // as soon as this RMW is done; nothing below touches it.
  void set(std::uint8_t code) noexcept {
    PLAIT_ASSERT(code != pending && (code & asleep) == 0);
    // acq_rel: release publishes what the completer wrote before (a task's result) to the
    // waiter's acquire; acquire orders the waiter's `asleep` mark (and its read of the futex word
    // before it) before our wake-up.
    if (PLAIT_UNLIKELY(s_.exchange(code, std::memory_order_acq_rel) & asleep)) wake_latch_waiters(this);
  }
  // Whether the latch is complete. acquire: pairs with set's release.
  bool probe() const noexcept { return (s_.load(std::memory_order_acquire) & ~asleep) != pending; }
  // Whether a waiter has marked the latch asleep now (tests, diagnostics). relaxed.
  bool marked() const noexcept { return (s_.load(std::memory_order_relaxed) & asleep) != 0; }
  // The code, once complete. relaxed: the caller's probe (or its own set) already ordered it.
  std::uint8_t code() const noexcept { return static_cast<std::uint8_t>(s_.load(std::memory_order_relaxed) & ~asleep); }

  // Waiter, before sleeping: marks the latch; false when it is already complete (then disarm).
  bool arm() noexcept {
    // seq_cst: one total order with the completer's RMW (see the essay above).
    const std::uint8_t old = s_.fetch_or(asleep, std::memory_order_seq_cst);
    PLAIT_ASSERT((old & asleep) == 0);  // one waiter at a time
    return (old & ~asleep) == pending;
  }
  // Waiter, once it saw the latch complete and read what the completer published: makes the latch
  // pending again for reuse (a frame task's slot, plait/frame.hpp). The completer's set was its
  // last access. relaxed: the latch is the waiter's alone until it hands it to a new completer,
  // which a later release (the publication of the slot) orders.
  void reset() noexcept { s_.store(pending, std::memory_order_relaxed); }
  // Waiter, after sleeping (or when arm found the latch complete): clears the mark. relaxed: only
  // the mark changes; a completion's exchange already removed it, and clearing it again is a no-op.
  void disarm() noexcept { s_.fetch_and(static_cast<std::uint8_t>(~asleep), std::memory_order_relaxed); }

 private:
  std::atomic<std::uint8_t> s_{pending};
};

class CountLatch {
 public:
  CountLatch() noexcept = default;
  // A latch that starts at count n (no waiter): one store where reset would add a load in debug
  // builds.
  explicit CountLatch(std::int64_t n) noexcept : c_(n) {}
  // The word: the count of unfinished tasks in the low 48 bits, the number of waiters marked
  // asleep above it (bit 63 stays clear: the word never looks negative).
  static constexpr int sleeper_shift = 48;
  static constexpr std::int64_t sleeper = std::int64_t{1} << sleeper_shift;
  static constexpr std::int64_t count_mask = sleeper - 1;

  // Before the tasks that count down can run. relaxed: the push (or publish) that lets them run
  // orders it, and every change of the count is an RMW on one word, so the count cannot be seen
  // to reach zero while a counted task is outstanding.
  void add(std::int64_t n) noexcept { c_.fetch_add(n, std::memory_order_relaxed); }
  // The same, on a latch nobody waits for or counts down yet (a loop before its records exist, a
  // barrier phase that every member has left).
  void reset(std::int64_t n) noexcept {
    PLAIT_ASSERT((c_.load(std::memory_order_relaxed) & ~count_mask) == 0);  // no waiter marked
    c_.store(n, std::memory_order_relaxed);
  }

  // Completer: n counted tasks finished. The RMW is the last access to the latch. Returns whether
  // it completed the latch (the count reached zero).
  bool count_down(std::int64_t n) noexcept {
    // acq_rel: release publishes the finished tasks' effects to the waiter's acquire of zero;
    // acquire orders a sleeping waiter's mark before our wake-up (see the essay above).
    const std::int64_t old = c_.fetch_sub(n, std::memory_order_acq_rel);
    PLAIT_ASSERT((old & count_mask) >= n);
    // old == n: completed with nobody asleep (the common completion); otherwise the count part
    // equal to n means this RMW completed the latch and some waiter is marked.
    if (PLAIT_LIKELY(old == n)) return true;
    if (PLAIT_UNLIKELY((old & count_mask) == n)) {
      wake_latch_waiters(this);
      return true;
    }
    return false;
  }
  // Adds n (of either sign) and returns the new count: an owner that moves its own tally into the
  // latch (omp OwnedCount::flush) learns whether that completed it. acq_rel: as count_down (when
  // it completes the latch, the completions it read are ordered before what the caller does next).
  // Not for a latch with sleeping waiters that n < 0 could complete (nobody would wake them).
  std::int64_t add_fetch(std::int64_t n) noexcept {
    const std::int64_t now = c_.fetch_add(n, std::memory_order_acq_rel) + n;
    PLAIT_ASSERT(now >= 0);  // the count never goes below zero (and never borrows from the marks)
    return now & count_mask;
  }
  // The count, with acquire: pairs with count_down's release, so that when it reads a count that
  // includes a completion the completed task's effects are visible.
  std::int64_t count_acquire() const noexcept { return c_.load(std::memory_order_acquire) & count_mask; }
  // Whether the whole word (count and marks) is `v`: the count is v and no waiter is marked.
  // acquire: as count_acquire. One compare where count_acquire() == v masks first.
  bool word_is_acquire(std::int64_t v) const noexcept { return c_.load(std::memory_order_acquire) == v; }
  // Whether the count is zero. acquire: pairs with count_down's release.
  bool probe() const noexcept { return (c_.load(std::memory_order_acquire) & count_mask) == 0; }
  // The count without the marks (tests, diagnostics). relaxed.
  std::int64_t count() const noexcept { return c_.load(std::memory_order_relaxed) & count_mask; }
  // Waiters marked asleep now (tests, diagnostics). relaxed.
  std::int64_t sleepers() const noexcept { return c_.load(std::memory_order_relaxed) >> sleeper_shift; }

  // Waiter, before sleeping: adds its mark; false when the latch is already complete (then
  // disarm all the same).
  bool arm() noexcept {
    // seq_cst: as in OnceLatch::arm.
    return (c_.fetch_add(sleeper, std::memory_order_seq_cst) & count_mask) != 0;
  }
  // Waiter, after sleeping (or when arm found the latch complete): removes its mark. relaxed: only
  // the marks change, and a completion does not depend on them after its RMW.
  void disarm() noexcept { c_.fetch_sub(sleeper, std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> c_{0};
};

}  // namespace plait::detail
