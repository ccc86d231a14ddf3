// The one wait loop. Every waiter in the runtime waits here for a latch (include/plait/detail/
// latch.hpp), by a policy that says what work it may run meanwhile (the policy types and their
// table: src/wait.hpp).
//
// Between two looks for work the waiter pauses, in three phases: spin (Pool::spin_limit pauses:
// reacts within ~100 cycles), yield (sched_yield until 1 ms has passed: gives the core to runnable
// workers when there are more workers than cores), sleep (a futex: no CPU until woken). A thread
// that is no worker skips the yield phase (a third thread that keeps yielding on the workers'
// cores gets them preempted: docs/design.md, "The caller of a root"). With idle_policy::spin
// nothing sleeps.
//
// Sleeping is the sleep module's (src/sleep.cpp, S1-S3). Idle workers sleep on their pool's
// `events` word (woken one at a time by new work). A latch waiter sleeps on its own word, parked
// under its latch's address: the latch's completion wakes it and no other thread; new work of its
// pool wakes it only if its policy can run that work. Before it sleeps, a waiter on a worker
// publishes every private slot it holds (nobody could ask it for them while it sleeps: a group
// child sitting there would never run) and asks those it may take work from to publish theirs,
// as an idle worker does; it sleeps only if none of the work it may run is visible.
#include "hooks.hpp"
#include "sleep.hpp"
#include "wait.hpp"

#include <plait/detail/backoff.hpp>

#include <plait/task_group.hpp>

#include <sched.h>

namespace plait::detail {

static constexpr std::uint64_t yield_until_ns = 1'000'000;  // 1 ms of nothing to run, then sleep

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

// ---- the policies ---------------------------------------------------------------------------
// visible(): relaxed loads, ordered after the sleeper's seq_cst fence (sleep.cpp, S3).

bool IdleWait::look(Worker* w) const noexcept { return find_work(w); }

bool LeapfrogWait::look(Worker* w) const noexcept {
  // Everything on the thief's deque descends from the task it stole from us, so running it helps
  // our join and keeps our stack bounded by the spawn depth.
  if (steal_one(w, thief) != steal_result::success) return false;
  PLAIT_COUNT(w, leapfrogs, 1);
  return true;
}
bool LeapfrogWait::visible(const Worker*) const noexcept {
  const std::uint64_t v = thief->dq.ts.load(std::memory_order_relaxed);
  return ts_tail(v) < ts_split(v);
}
void LeapfrogWait::ask(Worker*) const noexcept { thief->dq.request(); }
std::uint32_t LeapfrogWait::wants() const noexcept { return thief->index + 1; }

bool HelpWait::look(Worker* w) const noexcept {
  Pool* p = w->pool;
  const unsigned n = p->n;
  // Oversubscribed: the last victim, then a random sample (Pool::look_attempts).
  if (PLAIT_UNLIKELY(p->look_attempts + 1 < n)) return steal_sampled(w);
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
bool HelpWait::visible(const Worker* w) const noexcept {
  // Not our own deque: we just published all of it, and we never steal from ourselves.
  const Pool* p = w->pool;
  for (unsigned i = 0; i < p->n; ++i) {
    if (&p->workers[i] == w) continue;
    const std::uint64_t v = p->workers[i].dq.ts.load(std::memory_order_relaxed);
    if (ts_tail(v) < ts_split(v)) return true;
  }
  return false;
}
void HelpWait::ask(Worker* w) const noexcept {
  for (unsigned i = 0; i < w->pool->n; ++i)
    if (&w->pool->workers[i] != w) w->pool->workers[i].dq.request();
}
std::uint32_t HelpWait::wants() const noexcept { return want_any_publication; }

bool RootsWait::look(Worker* w) const noexcept {
  // relaxed: a hint; take_injected re-checks under the lock.
  return w->pool->roots.count.load(std::memory_order_relaxed) != 0 && take_injected(w);
}
bool RootsWait::visible(const Worker* w) const noexcept {
  return w->pool->roots.count.load(std::memory_order_relaxed) != 0;
}
std::uint32_t RootsWait::wants() const noexcept { return want_roots; }

// ---- the loop -------------------------------------------------------------------------------

// A completion handed in from outside (poll.cpp) is work for any waiter of the pool. relaxed: as
// visible(), ordered after the sleeper's fence.
static bool external_visible(const Worker* w) noexcept {
  return w->pool->ext.ncompletions.load(std::memory_order_relaxed) != 0;
}

// A latch waiter sleeps until its latch completes or new work it can run is published (or
// spuriously): sleep.cpp, S2 and S3.
template <class Policy>
static void sleep_on_latch(Worker* w, const latch_ref& l, const Policy& pol) noexcept {
  if constexpr (Policy::on_worker) {
    // Nothing private may stay hidden while we sleep: publish it all (wakes an idle sleeper).
    supply_thieves(w);
    // Ask those we may steal from to publish: their publication wakes us (notify_published).
    pol.ask(w);
  }
  std::atomic<std::uint32_t>* const word = latch_word(w);
  // acquire: if this reads a wake-up's bump, what the waker did before it is visible below.
  const std::uint32_t ev = word->load(std::memory_order_acquire);
  Parked entry;
  entry.key = l.key();
  entry.word = word;
  park(&entry);  // S2: in the table before the mark, so a completer that reads the mark finds us
  if (!l.arm()) {  // completed meanwhile
    unpark(&entry);
    l.disarm();
    return;
  }
  if constexpr (Policy::on_worker) announce_latch_sleeper(w, pol.wants());  // S3 (seq_cst RMW)
  store_load_fence();
  at_point(protocol_point::sleep_check);
  bool idle = !l.probe();
  if constexpr (Policy::on_worker) idle = idle && !pol.visible(w) && !external_visible(w);
  if (idle) {
    if constexpr (Policy::on_worker) {
      hook::sleeping(w);
      // With pollers registered a waiting worker wakes every poll period to run them (poll.cpp).
      futex_wait(word, ev, sleep_limit_ns(w->pool));
      hook::woken(w);
    } else {
      futex_wait(word, ev, 0);
    }
  }
  if constexpr (Policy::on_worker) retract_latch_sleeper(w);
  unpark(&entry);
  l.disarm();
  at_point(protocol_point::latch_woken);
}

// A waiting worker pushes and pops nothing, so it would never serve a thief's request for the
// private slots it still holds (earlier spawns of the waiting task, slots of frames it
// interrupted). Serve it here: one relaxed load of a line the owner reads anyway. Only when there
// is something private to publish: otherwise the request stays pending for the next push or pop.
static void serve_waiting(Worker* w) noexcept {
  // relaxed: a hint, as on the push path; serve() does the synchronising exchanges.
  if (PLAIT_UNLIKELY(w->dq.req.load(std::memory_order_relaxed) != 0) && w->dq.head > w->dq.split) serve_request(w);
}

template <class Policy>
void run_until(Worker* w, const latch_ref& l, Policy pol) noexcept {
  constexpr bool idle_wait = std::is_same_v<Policy, IdleWait>;
  PLAIT_ASSERT((w == nullptr) == !Policy::on_worker);
  Pool* const p = w != nullptr ? w->pool : nullptr;
  // relaxed: a tuning value (Pool::spin_limit).
  const unsigned spin_limit = p != nullptr ? p->spin_limit.load(std::memory_order_relaxed) : 2048;
  const bool may_sleep = p == nullptr || *p->opts.idle == idle_policy::sleep;  // resolved: always set
  unsigned spins = 0;
  std::uint64_t since = 0;
  bool woke = false;  // the last pause was a sleep: a look that finds nothing after it was futile
  for (;;) {
    if (l.probe()) return;
    if constexpr (Policy::on_worker) {
      if (pol.look(w)) {
        spins = 0;
        woke = false;
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
          woke = false;
          continue;
        }
      }
      if constexpr (idle_wait) {
        hook::idle_begin(w);  // the clock is read only on the busy -> idle transition
        // acquire: pairs with the release store in ~Pool; nothing else to read, but harmless.
        if (p->shutdown.load(std::memory_order_acquire)) return;
      } else {
        serve_waiting(w);
      }
    }
    if (PLAIT_UNLIKELY(woke)) {
      count_futile_wakeup();
      woke = false;
    }
    at_point(protocol_point::wait_pause);
    // Spin phase.
    if (spins < spin_limit) {
      if (idle_wait && !may_sleep) {
        for (int i = 0; i < 32; ++i) cpu_relax();  // idle_policy::spin: poll forever
        continue;
      }
      cpu_relax();
      if (++spins == spin_limit) since = now_ns();
      continue;
    }
    // Yield phase (not for a thread that is no worker).
    if (Policy::on_worker && (!may_sleep || now_ns() - since < yield_until_ns)) {
      sched_yield();
      continue;
    }
    // Sleep. An idle worker starts its phases again after a wake-up. A latch waiter stays in the
    // sleep phase: it looks for work once and sleeps again unless it found some (a wake-up for new
    // work of its kind may have been taken by another worker first; spinning and yielding for 1 ms
    // after each would burn a core).
    if constexpr (idle_wait) {
      sleep_idle(w);
      spins = 0;
    } else {
      sleep_on_latch(w, l, pol);
    }
    woke = true;
  }
}

template void run_until<IdleWait>(Worker*, const latch_ref&, IdleWait) noexcept;
template void run_until<LeapfrogWait>(Worker*, const latch_ref&, LeapfrogWait) noexcept;
template void run_until<HelpWait>(Worker*, const latch_ref&, HelpWait) noexcept;
template void run_until<RootsWait>(Worker*, const latch_ref&, RootsWait) noexcept;
template void run_until<BlockWait>(Worker*, const latch_ref&, BlockWait) noexcept;

}  // namespace plait::detail
