// External progress: polling services and completions handed in from outside the pool.
//
// A task completed by something outside the runtime (an MPI request, an I/O completion, another
// thread) needs two things from the pool: someone must look now and then whether the outside
// has progressed (a poller), and when another thread fulfils an event, the work that completes
// it (releasing data-flow successors) must run on a worker. Both are served by the workers when
// they look for work (run_until: idle, group and join waits) and, for pollers, when a busy worker
// enters a group wait; nothing here runs a thread of its own.
//
// Pollers. pool::add_poller registers a std::function; the list is guarded by poll_mu, which is
// also held while the pollers run. So pollers run one caller at a time (a poller needs no lock of
// its own against itself: the MPI front end relies on it), remove_poller returns only when no
// call is in progress, and a poller may add or remove pollers itself (the calling thread already
// holds the mutex: tl_polling says so). A worker that finds the mutex taken does not wait: the
// other one is polling. The pollers run at most once per poll_period_ns per pool (next_poll_ns).
// Idle and waiting workers look at every failed look for work and sleep at most one period
// while pollers exist (sleep_limit_ns), so a pool with an idle or waiting worker polls about once
// per period. A busy worker looks when it enters a group wait (group_wait) and in
// plait::poll_services(); a task that runs long without either delays polling while no worker
// is idle or waiting.
//
// Completions. hand_completion (a thread that is no worker of the pool) appends (fn, arg) under
// done_mu, bumps ncompletions, and wakes the pool as new work does (notify_handed_in: one idle
// worker and every latch waiter of the pool). The sleepers' checks include ncompletions
// (sleep.cpp work_visible, wait.cpp external_visible) under the same StoreLoad pairing as
// published work: the hand-in's bump is a seq_cst RMW before notify_handed_in's fence, the
// sleeper's announcement a seq_cst RMW before its fence, so either the sleeper sees the
// completion or the hand-in sees the sleeper.
//
// The pool's lifetime. The completion is visible once done_mu is unlocked, but the hand-in still
// has to wake a sleeper (notify_handed_in reads and writes the pool) after that. In the gap a worker
// may run the completion, the group's wait return, and the pool's owner destroy the pool: the
// wake-up would then touch freed memory. A wake-up before the completion is visible would be lost
// instead (the sleeper could check before the completion is there). So the hand-in pins the pool:
// `handing` counts the threads inside hand_completion, and ~Pool waits for it to read zero before
// it frees anything. Why ~Pool cannot miss a hand-in that is still running:
//   H1 the hand-in's increment is sequenced before its unlock of done_mu;
//   H2 the worker that runs the completion locks done_mu after that unlock (synchronizes-with), and
//      everything the region's owner sees after the completion ran (the group's count given back
//      with release, read with acquire by its wait) happens after that lock;
//   H3 so ~Pool's acquire load of `handing` happens after the increment and reads it or a later
//      value (coherence); it reads zero only after the matching decrement, whose release orders
//      every access of notify_handed_in before the load (and so before the free).
// A hand-in to a pool whose owner does not wait for the completion is a misuse that no protocol
// can save (the event outlived its region); the data-flow group and the OpenMP task waits both
// wait for it.
#include "hooks.hpp"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace plait::detail {

// The pool whose poll_mu this thread holds while its pollers run (a poller that adds or removes
// pollers must not lock it again).
static thread_local const Pool* tl_polling = nullptr;

static void run_pollers(Pool* p) noexcept {
  tl_polling = p;
  // Index loop: a poller may remove itself or others (the vector shrinks under us).
  for (std::size_t i = 0; i < p->ext.pollers.size(); ++i) {
    try {
      // Copy: the poller may remove itself (destroying the stored function) while it runs.
      std::function<void()> fn = p->ext.pollers[i].fn;
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "plait: a poller threw (%s); pollers must not throw\n", e.what());
      std::abort();
    } catch (...) {
      std::fprintf(stderr, "plait: a poller threw; pollers must not throw\n");
      std::abort();
    }
  }
  tl_polling = nullptr;
}

bool run_external(Worker* w) noexcept {
  Pool* const p = w->pool;
  bool ran = false;
  // acquire: pairs with hand_completion's release RMW: the completion's arguments are visible.
  if (p->ext.ncompletions.load(std::memory_order_acquire) != 0) {
    std::vector<std::pair<void (*)(void*), void*>> todo;
    {
      std::lock_guard<std::mutex> lk(p->ext.done_mu);
      todo.swap(p->ext.completions);
      // relaxed: the mutex orders the list; the counter is the lock-free hint.
      p->ext.ncompletions.store(0, std::memory_order_relaxed);
    }
    for (auto& [fn, arg] : todo) fn(arg);
    ran = !todo.empty();
  }
  // relaxed: a hint; the mutex orders the list.
  if (p->ext.npollers.load(std::memory_order_relaxed) != 0 && tl_polling != p) {
    const std::uint64_t now = now_ns();
    // relaxed: a rate limit, not a synchronisation; two workers that both read an old value
    // meet at the try_lock below.
    if (now >= p->ext.next_poll_ns.load(std::memory_order_relaxed) && p->ext.poll_mu.try_lock()) {
      p->ext.next_poll_ns.store(now + p->ext.period_ns, std::memory_order_relaxed);
      run_pollers(p);
      p->ext.poll_mu.unlock();
    }
  }
  return ran;
}

void hand_completion(Pool* p, void (*fn)(void*), void* arg) {
  // relaxed: ordered before the unlock below, which is what ~Pool's acquire load rests on (H1-H3
  // at the top).
  p->ext.handing.fetch_add(1, std::memory_order_relaxed);
  try {
    std::lock_guard<std::mutex> lk(p->ext.done_mu);
    p->ext.completions.emplace_back(fn, arg);
    // seq_cst: the hand-in's side of the StoreLoad pairing with sleepers (see the top); release
    // for run_external's acquire.
    p->ext.ncompletions.fetch_add(1, std::memory_order_seq_cst);
  } catch (...) {
    // release: nothing of ours is visible; the pool may go.
    p->ext.handing.fetch_sub(1, std::memory_order_release);
    throw;
  }
  at_point(protocol_point::hand_in);
  notify_handed_in(p);
  // notify_handed_in wakes an idle worker only when one is asleep; a worker spinning or yielding sees
  // the counter at its next look.
  // release: every access above happens before ~Pool's acquire load that reads zero (H3); this is
  // the hand-in's last access to *p.
  p->ext.handing.fetch_sub(1, std::memory_order_release);
}

void wait_hand_ins(Pool* p) noexcept {
  // acquire: pairs with hand_completion's release decrement (H3 at the top). The wait is a few
  // instructions of the other thread (a futex wake at most): yield, do not sleep.
  while (p->ext.handing.load(std::memory_order_acquire) != 0) sched_yield();
}

std::uint64_t sleep_limit_ns(const Pool* p) noexcept {
  // relaxed: a hint; a poller registered just after this read is served at the next wake-up.
  return p->ext.npollers.load(std::memory_order_relaxed) != 0 ? p->ext.period_ns : 0;
}

}  // namespace plait::detail

namespace plait {

pool::poller_id pool::add_poller(std::function<void()> fn) {
  if (!fn) throw std::invalid_argument("plait::pool::add_poller: an empty function");
  detail::Pool* p = impl_.get();
  const bool locked_here = detail::tl_polling != p;
  if (locked_here) p->ext.poll_mu.lock();
  const poller_id id = p->ext.next_id++;
  try {
    p->ext.pollers.push_back({id, std::move(fn)});
  } catch (...) {
    if (locked_here) p->ext.poll_mu.unlock();
    throw;
  }
  // relaxed: the mutex orders the list; the count is the wait loop's hint.
  p->ext.npollers.store(static_cast<std::uint32_t>(p->ext.pollers.size()), std::memory_order_relaxed);
  if (locked_here) p->ext.poll_mu.unlock();
  // Sleepers sleep without a limit while there is no poller: wake them to start polling.
  detail::wake_pool(p);
  return id;
}

bool pool::remove_poller(poller_id id) {
  detail::Pool* p = impl_.get();
  const bool locked_here = detail::tl_polling != p;
  if (locked_here) p->ext.poll_mu.lock();  // waits for a call in progress (by another thread) to end
  bool found = false;
  for (std::size_t i = 0; i < p->ext.pollers.size(); ++i) {
    if (p->ext.pollers[i].id == id) {
      p->ext.pollers.erase(p->ext.pollers.begin() + static_cast<std::ptrdiff_t>(i));
      found = true;
      break;
    }
  }
  // relaxed: as in add_poller.
  p->ext.npollers.store(static_cast<std::uint32_t>(p->ext.pollers.size()), std::memory_order_relaxed);
  if (locked_here) p->ext.poll_mu.unlock();
  return found;
}

void poll_services() noexcept {
  detail::Worker* w = detail::current_worker();
  if (w != nullptr) detail::poll_if_due(w);
}

void serve_thieves() noexcept {
  detail::Worker* w = detail::current_worker();
  if (w == nullptr) return;
  detail::frame_check(w, "plait::serve_thieves");
  // relaxed: a hint, as on the push path; serve_request does the synchronising exchanges.
  if (w->dq.req.load(std::memory_order_relaxed) != 0 && w->dq.head > w->dq.split) detail::serve_request(w);
}

}  // namespace plait
