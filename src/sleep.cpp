// The sleep module: every sleep of the runtime and every wake-up, and the wake-ups that must not
// be lost (src/sleep.hpp has the map: who sleeps on which word, woken by what).
//
// Three protocols, one pattern. A thread decides to sleep because it saw nothing to do, while
// another thread makes something to do and must learn whether anyone sleeps. Both sides are a
// store followed by a load of the other side's variable (StoreLoad), so both carry a seq_cst
// fence (store_load_fence), and the sleeper reads its futex word before it announces itself, so
// that a wake-up after the announcement changes the word it will wait on:
//
//   sleeper                                   waker
//   ev = word.load()          (acquire)       make the thing visible
//   announce itself           (seq_cst RMW)   fence(seq_cst)
//   fence(seq_cst)                            read the announcements
//   if the thing is visible: undo, return     if announced: word.fetch_add(1); futex_wake(word)
//   futex_wait(word, ev)
//
// With both fences at least one side sees the other's store: the sleeper sees the thing and
// stays up, or the waker sees the announcement and bumps the word — after the sleeper read `ev`
// (the read is sequenced before the announcement the waker saw), so futex_wait returns at once
// or is woken. No wake-up is lost. The three:
//
// S1 Idle workers (sleep_idle). Announcement: idle_sleepers++; the thing: work visible in the
//    pool (any deque's published slots, a root, a handed-in completion, a mail, shutdown). Word:
//    the pool's `events`, shared: a new job wakes one sleeper (FUTEX_WAKE 1: the kernel picks
//    the longest sleeper), so n publications wake at most n workers, not n times all of them.
//    Work that is private to a busy owner is invisible to the check: the sleeper first asks
//    every owner to publish (the steal-request bit), and their publication wakes a sleeper.
//
// S2 Latch waiters and their latch (latch.hpp's essay has the latch's side). Announcement: the
//    waiter's mark in the latch word (its arm RMW, seq_cst), made after it entered the parking
//    table under the latch's address (park). The completer's RMW on the latch word reads the mark
//    (the RMWs on one word are totally ordered: if it does not read it, the waiter's arm reads the
//    latch complete and does not sleep); it then calls wake_latch_waiters(latch address). Whether
//    that finds the waiter's entry: park's unlock of the bucket is sequenced before the arm (a
//    release RMW), the completer's RMW reads from it or from a later RMW of its release sequence
//    with acquire, and then locks the bucket — so the bucket's lock order puts park first, and
//    the completer sees the entry and bumps its word under the lock. The waiter leaves the table
//    (unpark, under the same lock) before it returns, so the entry on its stack and the word are
//    never touched after; the latch itself is only an address to the completer after its RMW
//    (the latch may be gone by then: its waiter may have seen it complete and freed it).
//
// S3 Latch waiters on workers and new work. A latch waiter on a worker can run some work of its
//    pool while it waits (its policy, wait.cpp): it sleeps until its latch completes or such work
//    appears. Announcement: its `wants` (what it can run) stored in its slot, then its bit set in
//    the pool's latch_asleep words (seq_cst RMW); the thing: work of its kind visible. The waker
//    (notify_*) reads the words with acquire after its fence: a bit it reads comes with the
//    `wants` stored before it (release sequence of the RMW), and wakes the waiter if its wants
//    match what was made visible. A waiter that does not match could not have run the work (its
//    look after a wake-up would not take it): nothing is lost by leaving it asleep.
//
// What the counters measure (sleep_counts, PLAIT_COUNTERS builds): the test "a completion wakes
// its own waiter and no other" reads latch_wakeups against latch_completions, and futile_wakeups
// (a waiter woke, looked, found nothing, and its latch was still pending).
#include "hooks.hpp"
#include "sleep.hpp"

#include <plait/detail/backoff.hpp>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace plait::detail {

std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// ---- counters -------------------------------------------------------------------------------

#if PLAIT_COUNTERS
namespace {
struct AtomicSleepCounts {
  std::atomic<std::uint64_t> latch_completions{0}, latch_wakeups{0}, work_wakeups{0}, idle_wakeups{0},
      futex_waits{0}, futile_wakeups{0};
};
AtomicSleepCounts g_counts;
}  // namespace
// relaxed: statistics, read by tests after the threads they count have synchronised with them.
#define PLAIT_SLEEP_COUNT(field, k) g_counts.field.fetch_add((k), std::memory_order_relaxed)
SleepCounts sleep_counts() noexcept {
  SleepCounts c;
  c.latch_completions = g_counts.latch_completions.load(std::memory_order_relaxed);
  c.latch_wakeups = g_counts.latch_wakeups.load(std::memory_order_relaxed);
  c.work_wakeups = g_counts.work_wakeups.load(std::memory_order_relaxed);
  c.idle_wakeups = g_counts.idle_wakeups.load(std::memory_order_relaxed);
  c.futex_waits = g_counts.futex_waits.load(std::memory_order_relaxed);
  c.futile_wakeups = g_counts.futile_wakeups.load(std::memory_order_relaxed);
  return c;
}
#else
#define PLAIT_SLEEP_COUNT(field, k) ((void)0)
SleepCounts sleep_counts() noexcept { return {}; }
#endif

void count_futile_wakeup() noexcept { PLAIT_SLEEP_COUNT(futile_wakeups, 1); }

// ---- futex ----------------------------------------------------------------------------------

void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::uint64_t limit_ns) noexcept {
  PLAIT_SLEEP_COUNT(futex_waits, 1);
  timespec ts{static_cast<time_t>(limit_ns / 1'000'000'000u), static_cast<long>(limit_ns % 1'000'000'000u)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, limit_ns != 0 ? &ts : nullptr,
          nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* addr, int n) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
}

// Bumps the word and wakes up to n threads sleeping on it. release: pairs with the sleeper's
// acquire load of the word: if it read this bump, what the waker did before is visible to it.
static void bump_and_wake(std::atomic<std::uint32_t>* word, int n) noexcept {
  word->fetch_add(1, std::memory_order_release);
  futex_wake(word, n);
}

void PoolSleep::init(unsigned workers) {
  latch_words = (workers + 63) / 64;
  latch_asleep = std::make_unique<std::atomic<std::uint64_t>[]>(latch_words);
  for (unsigned i = 0; i < latch_words; ++i) latch_asleep[i].store(0, std::memory_order_relaxed);
  slots = std::make_unique<SleepSlot[]>(workers);
}

// ---- S1: idle workers -----------------------------------------------------------------------

static bool work_visible(const Worker* w) noexcept {
  const Pool* p = w->pool;
  // relaxed loads, ordered after the sleeper's seq_cst fence (S1).
  if (w->mail.load(std::memory_order_relaxed) != nullptr) return true;
  if (p->roots.count.load(std::memory_order_relaxed) != 0) return true;
  if (p->ext.ncompletions.load(std::memory_order_relaxed) != 0) return true;  // handed in (poll.cpp)
  if (p->shutdown.load(std::memory_order_relaxed)) return true;
  for (unsigned i = 0; i < p->n; ++i) {
    std::uint64_t v = p->workers[i].dq.ts.load(std::memory_order_relaxed);
    if (ts_tail(v) < ts_split(v)) return true;
  }
  return false;
}

void sleep_idle(Worker* w) noexcept {
  Pool* p = w->pool;
  // Ask every busy owner to publish: its publication will wake us (S1).
  for (unsigned i = 0; i < p->n; ++i) {
    Worker* o = &p->workers[i];
    if (o != w) o->dq.request();
  }
  // acquire: nothing is read through it; it only has to be read before we announce ourselves.
  const std::uint32_t ev = p->sleep.events.load(std::memory_order_acquire);
  p->sleep.idle_sleepers.fetch_add(1, std::memory_order_seq_cst);
  store_load_fence();  // StoreLoad: the announcement before the checks
  at_point(protocol_point::sleep_check);
  if (!work_visible(w)) {
    hook::sleeping(w);
    // With pollers registered an idle worker wakes every poll period to run them (poll.cpp).
    futex_wait(&p->sleep.events, ev, sleep_limit_ns(p));
    hook::woken(w);
  }
  // relaxed: only a hint for the wakers; a late decrement costs one needless wake-up.
  p->sleep.idle_sleepers.fetch_sub(1, std::memory_order_relaxed);
}

// After the waker's fence: one idle sleeper, if any.
static void wake_one_idle(Pool* p, Worker* by) noexcept {
  // relaxed: ordered by the caller's fence (S1).
  if (p->sleep.idle_sleepers.load(std::memory_order_relaxed) > 0) {
    PLAIT_SLEEP_COUNT(idle_wakeups, 1);
    bump_and_wake(&p->sleep.events, 1);
    if (by) PLAIT_COUNT(by, wakeups, 1);
  }
}

void wake_idle(Pool* p) noexcept {
  PLAIT_SLEEP_COUNT(idle_wakeups, 1);
  bump_and_wake(&p->sleep.events, INT_MAX);
}

// ---- S3: latch waiters of a pool, for new work ----------------------------------------------

void announce_latch_sleeper(Worker* w, std::uint32_t wants) noexcept {
  PoolSleep& s = w->pool->sleep;
  // relaxed: published by the seq_cst RMW below (S3).
  s.slots[w->index].wants.store(wants, std::memory_order_relaxed);
  // seq_cst: the announcement of S3, before the sleeper's fence; release for the wants above.
  s.latch_asleep[w->index / 64].fetch_or(std::uint64_t{1} << (w->index % 64), std::memory_order_seq_cst);
}

void retract_latch_sleeper(Worker* w) noexcept {
  PoolSleep& s = w->pool->sleep;
  // relaxed: a waker that still reads the bit wakes us once more for nothing.
  s.latch_asleep[w->index / 64].fetch_and(~(std::uint64_t{1} << (w->index % 64)), std::memory_order_relaxed);
  s.slots[w->index].wants.store(0, std::memory_order_relaxed);
}

// After the waker's fence: the pool's latch waiters whose wants match `match`.
template <class Match>
static void wake_latch_sleepers_if(Pool* p, Worker* by, Match match) noexcept {
  PoolSleep& s = p->sleep;
  for (unsigned k = 0; k < s.latch_words; ++k) {
    // acquire: a bit read here comes with the wants its waiter stored before setting it (S3).
    std::uint64_t bits = s.latch_asleep[k].load(std::memory_order_acquire);
    while (bits != 0) {
      const unsigned i = k * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
      bits &= bits - 1;
      // relaxed: ordered by the acquire above.
      const std::uint32_t wants = s.slots[i].wants.load(std::memory_order_relaxed);
      if (wants == 0 || !match(wants)) continue;
      PLAIT_SLEEP_COUNT(work_wakeups, 1);
      bump_and_wake(&s.slots[i].word, 1);
      if (by) PLAIT_COUNT(by, wakeups, 1);
    }
  }
}

void notify_published(Pool* p, Worker* by) noexcept {
  store_load_fence();  // StoreLoad: the publication before reading the announcements
  wake_one_idle(p, by);
  const std::uint32_t mine = by->index + 1;
  wake_latch_sleepers_if(p, by, [mine](std::uint32_t wants) {
    // A group wait runs any worker's slots but its own (which it just published before sleeping).
    return (wants & want_publisher_mask) == mine || ((wants & want_any_publication) != 0);
  });
}

void notify_injected(Pool* p) noexcept {
  store_load_fence();  // StoreLoad: the root queued before reading the announcements
  wake_one_idle(p, nullptr);
  wake_latch_sleepers_if(p, nullptr, [](std::uint32_t wants) { return (wants & want_roots) != 0; });
}

void notify_handed_in(Pool* p) noexcept {
  store_load_fence();  // StoreLoad: the completion queued before reading the announcements
  wake_one_idle(p, nullptr);
  // Every latch waiter runs handed-in completions (run_until's external progress).
  wake_latch_sleepers_if(p, nullptr, [](std::uint32_t) { return true; });
}

void wake_pool(Pool* p) noexcept {
  store_load_fence();
  wake_idle(p);
  wake_latch_sleepers_if(p, nullptr, [](std::uint32_t) { return true; });
}

// ---- S2: the parking table ------------------------------------------------------------------

namespace {

// Buckets of latch waiters by latch address. 256 buckets: a collision costs one futile wake-up,
// and a process has at most as many sleeping latch waiters as threads.
constexpr unsigned park_buckets = 256;

struct alignas(cache_line) Bucket {
  std::atomic<bool> locked{false};
  Parked* head = nullptr;

  void lock() noexcept {
    // acquire: pairs with unlock's release; the list is read and written under the lock.
    Backoff<spin_lock_spins> b;
    while (locked.exchange(true, std::memory_order_acquire)) {
      while (locked.load(std::memory_order_relaxed)) b.pause();
    }
  }
  void unlock() noexcept { locked.store(false, std::memory_order_release); }
};

Bucket g_park[park_buckets];

Bucket& bucket_of(const void* key) noexcept {
  // Fibonacci hashing of the address, without its low bits (latches are at least 1-byte apart,
  // usually 8 or more).
  const std::uint64_t a = reinterpret_cast<std::uintptr_t>(key) >> 3;
  return g_park[(a * 0x9E3779B97F4A7C15ull) >> 56];
}

// The futex word of a thread that is no worker, for its latch waits.
thread_local std::atomic<std::uint32_t> tl_latch_word{0};

}  // namespace

std::atomic<std::uint32_t>* latch_word(Worker* w) noexcept {
  return w != nullptr ? &w->pool->sleep.slots[w->index].word : &tl_latch_word;
}

void park(Parked* e) noexcept {
  Bucket& b = bucket_of(e->key);
  b.lock();
  e->prev = nullptr;
  e->next = b.head;
  if (b.head != nullptr) b.head->prev = e;
  b.head = e;
  b.unlock();
}

void unpark(Parked* e) noexcept {
  Bucket& b = bucket_of(e->key);
  b.lock();
  if (e->prev != nullptr) {
    e->prev->next = e->next;
  } else {
    PLAIT_ASSERT(b.head == e);
    b.head = e->next;
  }
  if (e->next != nullptr) e->next->prev = e->prev;
  b.unlock();
}

// The completer of a latch whose RMW found a waiter marked asleep (latch.hpp): wakes the threads
// parked under its address, and no other. The wake-up is made under the bucket lock: the waiter
// leaves the table only after, so its entry and word are alive (S2).
void wake_latch_waiters(const void* latch) noexcept {
  PLAIT_SLEEP_COUNT(latch_completions, 1);
  Bucket& b = bucket_of(latch);
  b.lock();
  for (Parked* e = b.head; e != nullptr; e = e->next) {
    if (e->key != latch) continue;
    PLAIT_SLEEP_COUNT(latch_wakeups, 1);
    bump_and_wake(e->word, 1);
  }
  b.unlock();
}

// ---- mail -----------------------------------------------------------------------------------

#if defined(PLAIT_TSAN) && defined(__GNUC__) && !defined(__clang__)
std::atomic<unsigned> tsan_fence_word{0};
#endif

void post_mail(Pool* p, Worker* to, Mail* m) noexcept { post_mails(p, &to, &m, 1); }

void post_mails(Pool* p, Worker* const* to, Mail* const* m, unsigned count) noexcept {
  for (unsigned i = 0; i < count; ++i) {
    PLAIT_ASSERT(to[i]->mail.load(std::memory_order_relaxed) == nullptr);
    // release: the mail's task data, written before, is visible to the worker's acquire exchange.
    to[i]->mail.store(m[i], std::memory_order_release);
  }
  // StoreLoad: the mails before reading sleepers, paired with the sleeper's fence before it looks
  // at its mail (work_visible). Each worker must wake, not just anyone: wake every idle sleeper —
  // once for the whole batch (a wake-all per mail woke every sleeper n times: a team of 1000 took
  // 0.7 s to start).
  store_load_fence();
  if (p->sleep.idle_sleepers.load(std::memory_order_relaxed) > 0) wake_idle(p);
}

}  // namespace plait::detail
