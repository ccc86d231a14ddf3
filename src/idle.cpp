// Idle workers' sleep on a futex — and the wake-up that must not be lost.
//
// A worker that found nothing for a while (run_until, src/wait.cpp: spin, then yield until 1 ms
// idle) sleeps here on Pool::events until someone publishes work. Waiters inside tasks sleep on
// a latch instead (wait.cpp), and are woken here too when new work appears.
//
// The race to close is the classic one: a worker decides to sleep because it saw no work, while
// an owner publishes work and sees nobody asleep. Both sides are a store followed by a load of
// the other side's variable (a StoreLoad pattern), so both carry a seq_cst fence:
//
//   sleeper                                   publisher (notify_work)
//   ev = events.load()                        publish: store/RMW to ts (or push a root)
//   sleepers.fetch_add(1)                     fence(seq_cst)
//   fence(seq_cst)                            if (sleepers.load() > 0)
//   if (work visible in any ts / injection)       events.fetch_add(1); futex_wake(events, 1)
//       undo, don't sleep
//   futex_wait(events, ev)
//
// With both fences, at least one side sees the other's store: either the sleeper sees the work
// and stays up, or the publisher sees sleepers > 0 and bumps `events`. If that bump lands after
// the sleeper read `ev`, futex_wait returns at once (the word differs); if before, the sleeper
// already saw the published work. So no wake-up is lost. Work that is private to a busy owner is
// invisible to the check; for that the sleeper first sets the steal-request bit on every worker,
// so each busy owner publishes (and so wakes a sleeper) at its next spawn or join.
#include "hooks.hpp"

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

void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::uint64_t limit_ns) noexcept {
  timespec ts{static_cast<time_t>(limit_ns / 1'000'000'000u), static_cast<long>(limit_ns % 1'000'000'000u)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, limit_ns != 0 ? &ts : nullptr,
          nullptr, 0);
}
static void futex_wake(std::atomic<std::uint32_t>* addr, int n) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
}

static bool work_visible(const Worker* w) noexcept {
  const Pool* p = w->pool;
  // relaxed loads, ordered after the sleeper's seq_cst fence (see the essay above).
  if (w->mail.load(std::memory_order_relaxed) != nullptr) return true;
  if (p->inj_count.load(std::memory_order_relaxed) != 0) return true;
  if (p->ncompletions.load(std::memory_order_relaxed) != 0) return true;  // handed in (poll.cpp)
  if (p->shutdown.load(std::memory_order_relaxed)) return true;
  for (unsigned i = 0; i < p->n; ++i) {
    std::uint64_t v = p->workers[i].dq.ts.load(std::memory_order_relaxed);
    if (ts_tail(v) < ts_split(v)) return true;
  }
  return false;
}

void sleep_once(Worker* w) noexcept {
  Pool* p = w->pool;
  // Ask every busy owner to publish: its publish will wake us (see the essay).
  for (unsigned i = 0; i < p->n; ++i) {
    Worker* o = &p->workers[i];
    if (o != w) o->dq.request();
  }
  // acquire: nothing is read through it; it only has to be read before we announce ourselves.
  std::uint32_t ev = p->events.load(std::memory_order_acquire);
  p->sleepers.fetch_add(1, std::memory_order_seq_cst);
  store_load_fence();  // StoreLoad: sleepers++ before the checks
  at_point(protocol_point::sleep_check);
  if (!work_visible(w)) {
    hook::sleeping(w);
    // With pollers registered an idle worker wakes every poll period to run them (poll.cpp).
    futex_wait(&p->events, ev, sleep_limit_ns(p));
    hook::woken(w);
  }
  p->sleepers.fetch_sub(1, std::memory_order_relaxed);
}

void notify_work(Pool* p, Worker* by) noexcept {
  store_load_fence();  // StoreLoad: publish before reading sleepers
  if (p->sleepers.load(std::memory_order_relaxed) > 0) {
    // release: not needed for data (the work itself is published through ts / the queue lock);
    // the futex word only has to change.
    p->events.fetch_add(1, std::memory_order_release);
    futex_wake(&p->events, 1);
    if (by) PLAIT_COUNT(by, wakeups, 1);
  }
  // A latch waiter asleep may be able to run the new work too (src/wait.cpp: same pairing, with
  // latch_sleepers). relaxed: ordered by the fence above.
  if (latch_sleepers.load(std::memory_order_relaxed) > 0) wake_work_waiters();
}

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
  // at its mail (work_visible). Each worker must wake, not just anyone: wake every sleeper — once
  // for the whole batch (a wake-all per mail woke every sleeper n times: a team of 1000 took
  // 0.7 s to start).
  store_load_fence();
  if (p->sleepers.load(std::memory_order_relaxed) > 0) wake_all(p);
}

void wake_all(Pool* p) noexcept {
  p->events.fetch_add(1, std::memory_order_release);
  futex_wake(&p->events, INT_MAX);
}

}  // namespace plait::detail
