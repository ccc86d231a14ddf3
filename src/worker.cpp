// A worker's life: look for work (root tasks handed in by pool::run, then other workers' shared
// slots), run it, and go idle when there is none (run_until with IdleWait, src/wait.cpp).
// Also the two ways a worker waits inside a task: joining a stolen spawn (leapfrogging) and
// task_group::wait (its own children first, then helping).
#include "hooks.hpp"

#include <plait/spawn.hpp>
#include <plait/task_group.hpp>

#include <sched.h>

namespace plait::detail {

unsigned next_random(Worker* w) noexcept {
  // xorshift64*: per-worker, owner-only state.
  std::uint64_t x = w->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  w->rng = x;
  return static_cast<unsigned>((x * 0x2545F4914F6CDD1DULL) >> 32);
}

bool take_injected(Worker* w) noexcept {
  Pool* p = w->pool;
  Injected* job = nullptr;
  {
    std::lock_guard<std::mutex> lk(p->roots.mu);
    if (p->roots.q.empty()) return false;
    job = p->roots.q.front();
    p->roots.q.pop_front();
    // relaxed: the mutex orders the queue; the counter is only a hint for lock-free polling.
    p->roots.count.fetch_sub(1, std::memory_order_relaxed);
  }
  PLAIT_COUNT(w, injected, 1);
  end_idle(w);
  if (tracing(w))
    run_stolen_traced(w, job->exec, job->data, trace_new_id(w), 0);
  else
    run_stolen(w, job->exec, job->data);
  // The root's result (written by exec above) is published by the latch; the job lives on the
  // caller's stack and may be gone right after.
  job->done.set(1);
  return true;
}

// Pinned workers (src/topology.hpp): the last victim that had work, then the rings nearest first
// (the same core's other PUs, the NUMA node, the package, the rest), each from a random start;
// one round is n-1 attempts (plus the last victim), as in the flat order.
PLAIT_NOINLINE static bool find_work_near(Worker* w, const VictimOrder& o) noexcept {
  Pool* p = w->pool;
  const unsigned last = w->last_victim;
  if (last != w->index && steal_one(w, &p->workers[last]) == steal_result::success) return true;
  std::uint32_t begin = 0;
  for (std::uint32_t end : o.ring_end) {
    const std::uint32_t len = end - begin;
    if (len != 0) {
      const std::uint32_t start = static_cast<std::uint32_t>(next_random(w) % len);
      for (std::uint32_t k = 0; k < len; ++k) {
        const std::uint32_t v = o.victims[begin + (start + k) % len];
        if (v == last) continue;
        if (steal_one(w, &p->workers[v]) == steal_result::success) {
          w->last_victim = v;
          return true;
        }
      }
    }
    begin = end;
  }
  return false;
}

bool find_work(Worker* w) noexcept {
  Pool* p = w->pool;
  // relaxed: a hint; the exchange below acquires.
  if (PLAIT_UNLIKELY(w->mail.load(std::memory_order_relaxed) != nullptr)) {
    // acquire: pairs with post_mail's release store: the task's data is visible.
    Mail* m = w->mail.exchange(nullptr, std::memory_order_acquire);
    end_idle(w);
    run_stolen(w, m->exec, m->data);
    return true;
  }
  // relaxed: a hint; take_injected re-checks under the lock.
  if (p->roots.count.load(std::memory_order_relaxed) != 0 && take_injected(w)) return true;
  if (p->n == 1) return false;
  if (w->vorder != nullptr) return find_work_near(w, *w->vorder);
  return steal_sampled(w);
}

// The last victim that had work first (it often still has), then random ones; one round is n-1
// attempts, or a sample of them when the pool is oversubscribed (Pool::look_attempts).
bool steal_sampled(Worker* w) noexcept {
  Pool* p = w->pool;
  const unsigned n = p->n;
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

void* worker_main(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  tl_worker = w;
  run_until(w, latch_ref{}, IdleWait{});  // returns at shutdown
  end_idle(w);
  tl_worker = &no_worker;
  return nullptr;
}

void wait_stolen(Worker* w, OnceLatch* done) noexcept {
  PLAIT_COUNT(w, joins_stolen, 1);
  // take_back waited for the thief's mark and left it in dq.last_thief; read it before any task
  // we run below pops another stolen slot.
  Worker* thief = &w->pool->workers[w->dq.last_thief - 1];
  if (PLAIT_UNLIKELY(tracing(w))) {
    const std::uint64_t id = w->trace->stolen_join;
    trace_wait(w, true, id, 1);
    run_until(w, latch_ref{done, nullptr}, LeapfrogWait{thief});
    trace_wait(w, false, id, 1);
    return;
  }
  run_until(w, latch_ref{done, nullptr}, LeapfrogWait{thief});
}

// A task_group child that runs at least this long (TSC ticks: 12.6 us at this machine's 2.6 GHz)
// is coarse: group_wait then keeps every queued child of the group stealable while it runs one
// (supply_thieves, take_one), at the cost of one take-back CAS per child on the thieves' line
// (~0.1-0.3 us with a thief on it: under 2.5 % of the shortest coarse child, ~0.01 % of
// alignment's). docs/design.md, "Coarse children: the refill gap".
inline constexpr std::uint64_t coarse_child_ticks = 32768;

// Runs one popped child and says whether it was coarse.
PLAIT_NOINLINE static bool run_timed(Worker* w, exec_fn fn, void* data, pop_result r) noexcept {
  const std::uint64_t t0 = ticks();
  fn(data, w);
  if (r == pop_result::traced) trace_task_end(w);
  return ticks() - t0 >= coarse_child_ticks;
}

// group_wait's loop while the children are coarse: before each child every queued one is
// published (supply_thieves), and the pop takes back only its own slot (take_one), so a thief
// never waits for a child we hold privately while we run a long one. Returns when a child runs
// short (the fine loop takes over again) or the group's slots are done.
PLAIT_COLD static void run_coarse_children(Worker* w, std::uint32_t floor) noexcept {
  while (w->dq.head > floor) {
    Slot& s = w->dq.own[w->dq.head - 1];
    if (s.kind() != slot_kind::detached) return;
    exec_fn fn = s.exec;
    void* data = s.data();
    w->dq.take_one = true;
    pop_result r = pop(w);
    w->dq.take_one = false;  // the child's own pops take back halves again
    if (r == pop_result::stolen) {
      flush_deferred(w);
      continue;
    }
    if (w->dq.head > floor) __builtin_prefetch(w->dq.own[w->dq.head - 1].data());
    supply_thieves(w);
    if (!run_timed(w, fn, data, r)) return;
  }
}

// Runs the detached child in slot i in place (group_wait, step 1b): the slot keeps a tombstone,
// so that the indices of the slots around it, the spawn handles above among them, do not move.
PLAIT_NOINLINE static void run_buried(Worker* w, std::uint32_t i) noexcept {
  Slot& s = w->dq.own[i];
  const exec_fn fn = s.exec;
  void* const data = s.data();
  const std::uint64_t id = s.trace_id;
  const std::uint32_t label = s.trace_label;
  // Plain stores: reclaim_buried made the slot private (only we read or write it until a later
  // publish, a release, covers it).
  s.exec = &tombstone_exec;
  s.tagged = static_cast<std::uintptr_t>(slot_kind::detached);
  s.trace_id = 0;
  bool saved_ok = w->defer_ok;
  w->defer_ok = false;  // not a drain loop: the next slot is not popped next
  if (tracing(w)) {
    trace_task_begin(w, id, label);
    fn(data, w);
    trace_task_end(w);
  } else {
    fn(data, w);
  }
  w->defer_ok = saved_ok;
}

void group_wait(Worker* w, CountLatch* pending, std::uint32_t floor) noexcept {
  // Tracing: the wait is where the group's children join the waiting task (the DAG).
  const bool traced = tracing(w);
  if (PLAIT_UNLIKELY(traced)) trace_wait(w, true, reinterpret_cast<std::uintptr_t>(pending), 0);
  // A busy worker's slow path: outside progress may be what the group waits for (poll.cpp).
  poll_if_due(w);
  drain_own(w, pending, floor);
  // 2. The rest run elsewhere (or were added there): help by stealing until they are done.
  run_until(w, latch_ref{nullptr, pending}, HelpWait{});
  if (PLAIT_UNLIKELY(traced)) trace_wait(w, false, reinterpret_cast<std::uintptr_t>(pending), 0);
}

void drain_own(Worker* w, CountLatch* pending, std::uint32_t floor) noexcept {
  frame_check(w, "a task_group wait (or a loop's)");
  // 1. Children still on our own deque: run them here, newest first. Stop at a joinable slot (a
  //    spawn handle of the enclosing frame, to be joined later), at the frame's base, or at the
  //    group's floor: slots below it belong to enclosing frames, and running them here would nest
  //    one frame per task (a stack overflow found by the floorplan kernel). Every detached slot
  //    above the floor is popped, also once no child is pending.
  //
  //    Coarse children. A child is timed (TSC) only after a thief asked for work: when entering
  //    the wait published some children (top_up_for_wait), or when the pop before it did (split
  //    moved). A hungry thief is what makes a long child expensive: it may idle until our next
  //    pop. If the timed child took at least coarse_child_ticks, run_coarse_children takes over
  //    until a child runs short again. Fine groups with no thief asking pay one compare per child
  //    and no clock read (health's fine cut-off: 2.25 M children of ~40 ns; a first version that
  //    read the clock on entering every wait and kept the mode in the loop cost it 1.3-2.8 %).
  //
  // 1b. Buried children. When the newest slot is a spawn handle of the waiting task (spawned after
  //    some children and joined after this wait), children below it cannot be popped. A thief may
  //    take them, but with one worker, or all others busy, nobody would: the wait would never
  //    end. So, while children are pending, the wait looks below the handles (down to the floor)
  //    and runs each queued child in place, leaving a tombstone (reclaim_buried, run_buried).
  //    The slots above keep their indices, so the handles' joins pop them as usual; the tombstones
  //    leave the deque with the next join (uncover) or drain that passes them. `scan` only moves
  //    down: the slots between it and the newest handle are handles or tombstones, which only the
  //    waiting task (blocked here) could change.
  if (floor < w->dq.base) floor = w->dq.base;
  const std::uint32_t split0 = w->dq.split;
  top_up_for_wait(w, floor);
  bool time_next = w->dq.split != split0;
  bool saved_ok = w->defer_ok;
  std::uint32_t scan = w->dq.head;
  for (;;) {
    w->defer_ok = true;  // siblings popped back to back share one completion RMW (defer_done)
    while (w->dq.head > floor) {
      Slot& s = w->dq.own[w->dq.head - 1];
      if (s.kind() != slot_kind::detached) break;
      exec_fn fn = s.exec;
      void* data = s.data();
      const std::uint32_t split_before = w->dq.split;
      pop_result r = pop(w);
      if (r == pop_result::stolen) {
        flush_deferred(w);
        continue;
      }
      // The next slot's record (written long ago, or on another core) starts loading while this
      // task runs. Only the owner writes slots, so reading one a thief may take is no race.
      if (w->dq.head > floor) __builtin_prefetch(w->dq.own[w->dq.head - 1].data());
      // The pop served a thief's request (published), or took a shared slot back: time this child.
      if (PLAIT_UNLIKELY(time_next || w->dq.split != split_before)) {
        time_next = false;
        if (run_timed(w, fn, data, r)) run_coarse_children(w, floor);
        continue;
      }
      fn(data, w);
      if (r == pop_result::traced) trace_task_end(w);
    }
    flush_deferred(w);  // before waiting: our own deferred count would keep `pending` above zero
    w->defer_ok = saved_ok;
    // 1b. The newest slot is a spawn handle (or we reached the floor).
    if (w->dq.head <= floor) break;
    if (pending != nullptr && pending->probe()) break;  // (acquire: what step 2 would read)
    if (scan > w->dq.head - 1) scan = w->dq.head - 1;
    bool found = false;
    while (scan > floor) {
      --scan;
      const Slot& b = w->dq.own[scan];
      if (b.kind() == slot_kind::detached && b.exec != &tombstone_exec) {
        found = true;
        break;
      }
    }
    if (!found) break;
    if (reclaim_buried(w, scan)) run_buried(w, scan);
    // The child may have left children of its own on top of the handle: the loop pops them.
  }
}

}  // namespace plait::detail

namespace plait {

void task_group::wait() {
  detail::Worker* w = detail::current_worker();
  if (PLAIT_UNLIKELY(!w)) detail::not_a_worker("plait::task_group::wait");
  detail::group_wait(w, &pending_, w == creator_ ? floor_ : w->dq.base);
  if (w == creator_) floor_ = w->dq.head;
  canceled_.store(false, std::memory_order_relaxed);
  // relaxed: error_ was written before the erring child's release decrement, which our acquire
  // load of pending_ == 0 synchronised with.
  if (has_error_.load(std::memory_order_relaxed)) {
    std::exception_ptr e = std::move(error_);
    error_ = nullptr;
    has_error_.store(false, std::memory_order_relaxed);
    std::rethrow_exception(e);
  }
}

task_group::~task_group() {
  // probe (acquire): a 0 read here comes from the last child's release decrement (its last access
  // to the group), so the memory of the group (and of the frame its closures point into) may go now.
  if (!pending_.probe()) {
    detail::Worker* w = detail::current_worker();
    if (w) {
      detail::group_wait(w, &pending_, w == creator_ ? floor_ : w->dq.base);
    } else {
      // Not on a worker: nothing can be run from here; children finish on the workers.
      detail::run_until(nullptr, detail::latch_ref{nullptr, &pending_}, detail::BlockWait{});
    }
  }
}

void task_group::record_error(std::exception_ptr e) noexcept {
  bool expected = false;
  // acq_rel: exactly one child wins; the winner's store of error_ is published by its own
  // acq_rel decrement of pending_ (see child::exec).
  if (has_error_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    error_ = std::move(e);
    canceled_.store(true, std::memory_order_relaxed);
  }
}

}  // namespace plait
