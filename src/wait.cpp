// The one wait loop. Every waiter in the runtime waits here for a latch (include/plait/detail/
// latch.hpp), by a policy that says what work it may run meanwhile:
//
//   policy    who                                      runs meanwhile                 ends when
//   idle      a worker with no task (worker_main)      roots, then any victim's tasks  pool shutdown
//   leapfrog  a join whose task was stolen             tasks of the thief only         latch set
//   help      a task_group wait, after its own slots   any victim's tasks              count zero
//   roots     a worker of another pool in pool::run    its own pool's roots            latch set
//   block     a thread that is no worker               nothing                         latch set
//
// Between two looks for work the waiter pauses, in three phases: spin (Pool::spin_limit pauses:
// reacts within ~100 cycles), yield (sched_yield until 1 ms has passed: gives the core to runnable
// workers when there are more workers than cores), sleep (a futex: no CPU until woken). A thread
// that is no worker skips the yield phase (a third thread that keeps yielding on the workers'
// cores gets them preempted: docs/design.md, "The caller of a root"). With idle_policy::spin
// nothing sleeps.
//
// Sleeping. Idle workers sleep on their pool's `events` word (src/idle.cpp: woken one at a time by
// new work). Latch waiters sleep on the process-wide latch word below, and are woken by the
// latch's completion (the `asleep` mark, latch.hpp) or by any new work (notify_work wakes them
// all: a waiter may be able to run it). Before it sleeps, a waiter on a worker publishes every
// private slot it holds (nobody could ask it for them while it sleeps: a group child sitting
// there would never run) and asks the workers it may steal from to publish theirs, as an idle
// worker does; it sleeps only if none of the work it may run is visible (the same store-fence-load
// pairing as idle workers, with latch_sleepers in the place of sleepers).
#include "hooks.hpp"

#include <plait/detail/backoff.hpp>

#include <plait/task_group.hpp>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace plait::detail {

static constexpr std::uint64_t yield_until_ns = 1'000'000;  // 1 ms of nothing to run, then sleep

// The futex words of latch waiters (all pools): workers that wait (woken by completions and by new
// work), and threads that are no worker (woken by completions only: they cannot run work, and a
// wake-up per publication would keep them spinning on the workers' cores). latch_sleepers counts
// the workers asleep on theirs, for notify_work.
alignas(cache_line) static std::atomic<std::uint32_t> latch_events{0};
alignas(cache_line) static std::atomic<std::uint32_t> block_events{0};
alignas(cache_line) std::atomic<std::int32_t> latch_sleepers{0};

static void bump_and_wake(std::atomic<std::uint32_t>* word) noexcept {
  // release: pairs with the sleeper's acquire load of the word: if the sleeper read this bump,
  // what the waker published before it is visible to the sleeper's checks.
  word->fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void wake_latch_sleepers() noexcept {
  bump_and_wake(&latch_events);
  bump_and_wake(&block_events);
}

void wake_work_waiters() noexcept { bump_and_wake(&latch_events); }

bool latch_ref::probe() const noexcept {
  if (once != nullptr) return once->probe();
  if (count != nullptr) return count->probe();
  return false;
}
bool latch_ref::arm() const noexcept {
  if (once != nullptr) return once->arm();
  if (count != nullptr) return count->arm();
  return true;
}
void latch_ref::disarm() const noexcept {
  if (once != nullptr) once->disarm();
  if (count != nullptr) count->disarm();
}

// Work that a waiter of this policy may run, visible without asking anyone: relaxed loads,
// ordered after the sleeper's seq_cst fence.
static bool runnable_visible(const Worker* w, wait_policy pol, const Worker* thief) noexcept {
  switch (pol) {
    case wait_policy::leapfrog: {
      const std::uint64_t v = thief->dq.ts.load(std::memory_order_relaxed);
      return ts_tail(v) < ts_split(v);
    }
    case wait_policy::help: {
      // Not our own deque: we just published all of it, and we never steal from ourselves.
      const Pool* p = w->pool;
      for (unsigned i = 0; i < p->n; ++i) {
        if (&p->workers[i] == w) continue;
        const std::uint64_t v = p->workers[i].dq.ts.load(std::memory_order_relaxed);
        if (ts_tail(v) < ts_split(v)) return true;
      }
      return false;
    }
    case wait_policy::roots: return w->pool->inj_count.load(std::memory_order_relaxed) != 0;
    default: return false;
  }
}

// A completion handed in from outside (poll.cpp) is work for any waiter of the pool. relaxed:
// as above, ordered after the sleeper's fence.
static bool external_visible(const Worker* w) noexcept {
  return w->pool->ncompletions.load(std::memory_order_relaxed) != 0;
}


// A waiter sleeps until its latch completes or new work is published (or spuriously).
static void sleep_on_latch(Worker* w, const latch_ref& l, wait_policy pol, Worker* thief) noexcept {
  if (w != nullptr) {
    // Nothing private may stay hidden while we sleep: publish it all (wakes an idle sleeper).
    supply_thieves(w);
    // Ask those we may steal from to publish: their publication wakes us (notify_work).
    if (pol == wait_policy::leapfrog) {
      thief->dq.request();
    } else if (pol == wait_policy::help) {
      for (unsigned i = 0; i < w->pool->n; ++i)
        if (&w->pool->workers[i] != w) w->pool->workers[i].dq.request();
    }
  }
  std::atomic<std::uint32_t>* const word = w != nullptr ? &latch_events : &block_events;
  // acquire: if this reads a wake-up's bump, what the waker published before it is visible below.
  const std::uint32_t ev = word->load(std::memory_order_acquire);
  if (!l.arm()) {  // completed meanwhile
    l.disarm();
    return;
  }
  // seq_cst: the sleeper's side of the StoreLoad pairing with notify_work (announce, then look).
  if (w != nullptr) latch_sleepers.fetch_add(1, std::memory_order_seq_cst);
  store_load_fence();
  at_point(protocol_point::sleep_check);
  if (!l.probe() && (w == nullptr || (!runnable_visible(w, pol, thief) && !external_visible(w)))) {
    if (w != nullptr) hook::sleeping(w);
    // With pollers registered a waiting worker wakes every poll period to run them (poll.cpp).
    futex_wait(word, ev, w != nullptr ? sleep_limit_ns(w->pool) : 0);
    if (w != nullptr) hook::woken(w);
  }
  // relaxed: only a hint for notify_work; a late decrement costs one needless wake-up.
  if (w != nullptr) latch_sleepers.fetch_sub(1, std::memory_order_relaxed);
  l.disarm();
  at_point(protocol_point::latch_woken);
}

// One look for work by the policy; true when it ran something.
static bool look(Worker* w, wait_policy pol, Worker* thief) noexcept {
  switch (pol) {
    case wait_policy::idle: return find_work(w);
    case wait_policy::leapfrog:
      // Everything on the thief's deque descends from the task it stole from us, so running it
      // helps our join and keeps our stack bounded by the spawn depth.
      if (steal_one(w, thief) != steal_result::success) return false;
      PLAIT_COUNT(w, leapfrogs, 1);
      return true;
    case wait_policy::help: {
      Pool* p = w->pool;
      const unsigned n = p->n;
      if (PLAIT_UNLIKELY(p->look_attempts + 1 < n)) {
        // Oversubscribed: the last victim, then a random sample (Pool::look_attempts).
        unsigned v = w->last_victim;
        for (unsigned k = 0; k < p->look_attempts; ++k) {
          if (v != w->index && steal_one(w, &p->workers[v]) == steal_result::success) {
            w->last_victim = v;
            return true;
          }
          v = next_random(w) % n;
        }
        return false;
      }
      for (unsigned k = 0; k + 1 < n; ++k) {
        unsigned v = (w->last_victim + k) % n;
        if (v == w->index) v = (v + 1) % n;
        if (v != w->index && steal_one(w, &p->workers[v]) == steal_result::success) {
          w->last_victim = v;
          return true;
        }
      }
      return false;
    }
    case wait_policy::roots:
      // relaxed: a hint; take_injected re-checks under the lock.
      return w->pool->inj_count.load(std::memory_order_relaxed) != 0 && take_injected(w);
    default: return false;
  }
}

// A waiting worker pushes and pops nothing, so it would never serve a thief's request for the
// private slots it still holds (earlier spawns of the waiting task, slots of frames it
// interrupted). Serve it here: one relaxed load of a line the owner reads anyway. Only when there
// is something private to publish: otherwise the request stays pending for the next push or pop.
static void serve_waiting(Worker* w) noexcept {
  // relaxed: a hint, as on the push path; serve() does the synchronising exchanges.
  if (PLAIT_UNLIKELY(w->dq.req.load(std::memory_order_relaxed) != 0) && w->dq.head > w->dq.split) serve_request(w);
}

void run_until(Worker* w, const latch_ref& l, wait_policy pol, Worker* thief) noexcept {
  PLAIT_ASSERT((w == nullptr) == (pol == wait_policy::block));
  PLAIT_ASSERT((thief != nullptr) == (pol == wait_policy::leapfrog));
  Pool* const p = w != nullptr ? w->pool : nullptr;
  // relaxed: a tuning value (Pool::spin_limit).
  const unsigned spin_limit = p != nullptr ? p->spin_limit.load(std::memory_order_relaxed) : 2048;
  const bool may_sleep = p == nullptr || *p->opts.idle == idle_policy::sleep;  // resolved: always set
  unsigned spins = 0;
  std::uint64_t since = 0;
  for (;;) {
    if (l.probe()) return;
    if (w != nullptr) {
      if (look(w, pol, thief)) {
        spins = 0;
        continue;
      }
      // Outside progress: completions handed in by other threads, pollers when due (poll.cpp).
      // What they release (data-flow successors) lands on our own deque, where no policy but
      // idle looks: run it here.
      if (PLAIT_UNLIKELY(external_pending(p))) {
        const std::uint32_t h = w->dq.head;
        const bool ran = run_external(w);
        if (w->dq.head > h) drain_own(w, nullptr, h);
        if (ran || w->dq.head != h) {
          spins = 0;
          continue;
        }
      }
      if (pol == wait_policy::idle) {
        hook::idle_begin(w);  // the clock is read only on the busy -> idle transition
        // acquire: pairs with the release store in ~Pool; nothing else to read, but harmless.
        if (p->shutdown.load(std::memory_order_acquire)) return;
      } else {
        serve_waiting(w);
      }
    }
    at_point(protocol_point::wait_pause);
    // Spin phase.
    if (spins < spin_limit) {
      if (pol == wait_policy::idle && !may_sleep) {
        for (int i = 0; i < 32; ++i) cpu_relax();  // idle_policy::spin: poll forever
        continue;
      }
      cpu_relax();
      if (++spins == spin_limit) since = now_ns();
      continue;
    }
    // Yield phase (not for a thread that is no worker).
    if (w != nullptr && (!may_sleep || now_ns() - since < yield_until_ns)) {
      sched_yield();
      continue;
    }
    // Sleep. An idle worker starts its phases again after a wake-up. A latch waiter stays in the
    // sleep phase: it looks for work once and sleeps again unless it found some (wake-ups of latch
    // waiters are broad — every publication, every completion that found a sleeper — so most are
    // for someone else, and a waiter that spun and yielded for 1 ms after each would burn a core).
    if (pol == wait_policy::idle) {
      sleep_once(w);
      spins = 0;
    } else {
      sleep_on_latch(w, l, pol, thief);
    }
  }
}

}  // namespace plait::detail
