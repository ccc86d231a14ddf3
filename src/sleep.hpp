// Internal: the sleep module — every way a thread of the runtime sleeps and is woken
// (src/sleep.cpp; the protocols and their proofs are at the top of that file and in
// docs/design.md, "Sleeping and waking").
//
//   who sleeps                      on which word                 woken by
//   an idle worker                  its pool's `events`           new work of its pool: one per job
//   a latch waiter on a worker      its own slot's word           its latch's completion; new work
//                                                                 of its pool that its policy can run
//   a latch waiter that is no       a thread_local word           its latch's completion
//   worker (pool::run's caller)
//
// A latch's completion finds its waiters by the latch's address in the parking table: it wakes
// those threads and no other (a latch has one waiter, but a CountLatch of an OpenMP barrier has a
// team's). New work wakes the waiters of its own pool whose policy can take it: a join's waiter
// (leapfrog) only for its thief's publications, a group wait for any other worker's, pool::run's
// worker for roots; every waiter for a completion handed in from outside.
#pragma once

#include <plait/config.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace plait::detail {

class Pool;
struct Worker;

// What a latch waiter asleep on a worker can run (SleepSlot::wants): new work wakes only those
// that can take it. A leapfrogging join waits for one worker's publications: that worker's index
// + 1 in the low bits.
inline constexpr std::uint32_t want_any_publication = 1u << 31;  // a group wait: any other worker's slots
inline constexpr std::uint32_t want_roots = 1u << 30;            // a worker in pool::run of another pool
inline constexpr std::uint32_t want_publisher_mask = want_roots - 1;

// One per worker, on a line of its own: the futex word it sleeps on as a latch waiter and what it
// can run meanwhile (0 while it does not sleep as one).
struct alignas(cache_line) SleepSlot {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> wants{0};
};

// A pool's sleep state (Pool::sleep).
struct PoolSleep {
  // Idle workers: `events` is their futex word (every wake-up bumps it, so a sleeper that read the
  // old value cannot miss one); `idle_sleepers` counts those inside the idle sleep protocol.
  alignas(cache_line) std::atomic<std::uint32_t> events{0};
  alignas(cache_line) std::atomic<std::int32_t> idle_sleepers{0};
  // Latch waiters asleep on this pool's workers: bit i of word i / 64 is set while worker i sleeps
  // as one. New work reads the words (one load per 64 workers) and wakes the set bits whose
  // `wants` match.
  std::unique_ptr<std::atomic<std::uint64_t>[]> latch_asleep;
  unsigned latch_words = 0;
  std::unique_ptr<SleepSlot[]> slots;  // one per worker

  void init(unsigned workers);
};

// A latch waiter's entry in the parking table while it sleeps: the latch's address (the key the
// completion wakes by) and the thread's futex word. Lives on the waiter's stack; the table's
// bucket lock is held by whoever reads it.
struct Parked {
  const void* key = nullptr;
  std::atomic<std::uint32_t>* word = nullptr;
  Parked* next = nullptr;
  Parked* prev = nullptr;
};

// The futex word a latch waiter sleeps on: the worker's slot, or the calling thread's own.
std::atomic<std::uint32_t>* latch_word(Worker* w) noexcept;
// Into / out of the parking table (the bucket of e->key).
void park(Parked* e) noexcept;
void unpark(Parked* e) noexcept;
// A worker w about to sleep as a latch waiter that can run `wants` / done sleeping.
void announce_latch_sleeper(Worker* w, std::uint32_t wants) noexcept;
void retract_latch_sleeper(Worker* w) noexcept;

// The runtime's one futex wrapper (process-private futexes) and its one monotonic clock; the
// OpenMP locks (src/omp/api.cpp) and the trace's clock pairs (src/trace.cpp) use them too.
// futex_wait sleeps on *addr while it holds `expected`, until woken; limit_ns != 0: at most that
// long (the sleeps of a pool with pollers, poll.cpp). Counted in SleepCounts::futex_waits.
// futex_wake wakes up to n threads sleeping on *addr.
void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::uint64_t limit_ns) noexcept;
void futex_wake(std::atomic<std::uint32_t>* addr, int n) noexcept;
// CLOCK_MONOTONIC in nanoseconds.
std::uint64_t now_ns() noexcept;

// An idle worker's sleep on its pool's `events` word, if no work is visible after it asked every
// owner to publish.
void sleep_idle(Worker* w) noexcept;

// Called by whoever just made work visible. Each wakes one idle sleeper of the pool (if any) and
// the pool's latch waiters that can run the work.
void notify_published(Pool* p, Worker* by) noexcept;  // by published slots of its deque
void notify_injected(Pool* p) noexcept;               // a root queued on the pool
void notify_handed_in(Pool* p) noexcept;              // a completion handed in from outside
// Every sleeper of the pool, idle or in a latch wait (shutdown, a poller registered).
void wake_pool(Pool* p) noexcept;
// Every idle sleeper of the pool (mail for several workers at once).
void wake_idle(Pool* p) noexcept;
// Hands m to worker `to` (which must have no mail pending) and wakes it if it sleeps.
struct Mail;
void post_mail(Pool* p, Worker* to, Mail* m) noexcept;
// The same for `count` workers at once, with one wake-up for all of them.
void post_mails(Pool* p, Worker* const* to, Mail* const* m, unsigned count) noexcept;

// Process-wide counts of the sleep module's events (PLAIT_COUNTERS builds; zeros otherwise):
// what a test or a benchmark reads to see who was woken, and for what.
struct SleepCounts {
  std::uint64_t latch_completions = 0;  // completions that found a waiter marked asleep
  std::uint64_t latch_wakeups = 0;      // threads those completions woke
  std::uint64_t work_wakeups = 0;       // latch waiters woken for new work of their pool
  std::uint64_t idle_wakeups = 0;       // wake-ups of idle workers (futex wake calls)
  std::uint64_t futex_waits = 0;        // sleeps begun (every kind, the OpenMP locks' too)
  std::uint64_t futile_wakeups = 0;     // sleepers that woke and found nothing to run, latch pending
};
SleepCounts sleep_counts() noexcept;
// A waiter woke and its next look found nothing (run_until).
void count_futile_wakeup() noexcept;

}  // namespace plait::detail
