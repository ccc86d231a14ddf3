// plait::task_group — any number of children, waited for together (OpenMP taskwait semantics).
//
//   plait::task_group g;
//   for (auto& item : items) g.run([&item] { process(item); });
//   g.wait();   // every child (and every child they added with g.run) has finished
//
// Children may call run() on the same group from any worker, and run() may be called anywhere in
// a task: between a spawn and its join, in a loop body, in another group's child, in a data-flow
// task. wait() first runs the group's children still on this worker's deque — also those queued
// below spawn handles of the waiting task that are still unjoined (they run in place; see
// docs/design.md, "Mixing spawn/join with task groups") — then helps other workers (steals and
// runs their tasks) until the last child finishes. A child must not wait() for its own group:
// the wait would count the waiting child itself and never return. It runs its own children newest first. Once another worker has
// asked for work and a child took 12.6 us or more (32768 TSC ticks), every child still queued
// stays stealable while this worker runs one. So other workers do not wait for a long child to
// finish before they get the rest. The first exception thrown by a child cancels the group (children
// that have not started are skipped) and is rethrown by wait(); later exceptions are dropped.
// cancel() skips every child that has not started yet. A child may run inside run() itself: when
// the calling worker already holds pool_options::group_throttle (1024) unstarted tasks of its own,
// or its deque is full — as an OpenMP task may run undeferred. So a child must not wait for
// something its parent does after adding it. Each child's closure outlives the call to
// run(), so it lives in a record from the pool's task allocator (detail/task_alloc.hpp: a few
// instructions, no lock); spawn/join is the allocation-free path.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/task_alloc.hpp>
#include <plait/detail/worker.hpp>
#include <plait/event.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace plait {

class task_group;

namespace detail {
// Runs this worker's own detached slots above `floor` (newest first) while the group has pending
// children, then helps other workers until none is pending.
PLAIT_COLD void group_wait(Worker* w, CountLatch* pending, std::uint32_t floor) noexcept;
// group_wait's first part alone: runs this worker's own detached slots above `floor` (newest
// first; below a joinable slot too while `pending`, if given, is not zero) and returns when none is
// left there. The OpenMP front door's waits call it, settle their own counts, then run_until.
PLAIT_COLD void drain_own(Worker* w, CountLatch* pending, std::uint32_t floor) noexcept;
}  // namespace detail

class task_group {
 public:
  task_group() noexcept : creator_(detail::tl_worker), floor_(detail::tl_worker->dq.head) {}
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;
  // Waits for children still running (their closures may refer to the enclosing frame); an
  // exception they threw is dropped here — call wait() to see it.
  ~task_group();

  // Adds a child. Must be called from a task running on a pool (else std::logic_error).
  template <class F>
  void run(F&& f) {
    detail::Worker* w = detail::tl_worker;
    if (PLAIT_UNLIKELY(w == &detail::no_worker)) detail::not_a_worker("plait::task_group::run");
    // The group's slots on its creator's deque lie above floor_ (the head when the group was
    // created, lowered if the frame popped below it since). wait() runs only those, never the
    // slots of enclosing frames: running an outer sibling inside an inner wait nests frames
    // without bound (stack depth would grow with the number of tasks, not the tree depth).
    if (w == creator_ && w->dq.head < floor_) floor_ = w->dq.head;
    // The throttle: enough of our own tasks are queued already; run this one now (see
    // pool_options::group_throttle). No record, no push, no count: it is done when run() returns.
    if (PLAIT_UNLIKELY(detail::over_throttle(w))) {
      run_now(w, f);
      return;
    }
    using C = child<std::decay_t<F>>;
    void* mem = detail::task_alloc<C>(w);
    C* c;
    try {
      c = ::new (mem) C{this, std::forward<F>(f)};
    } catch (...) {
      detail::task_free<C>(w, mem);
      throw;
    }
    // Before the push that lets anyone run (and so count down for) the child.
    pending_.add(1);
    if (PLAIT_UNLIKELY(!detail::push(w, &child<std::decay_t<F>>::exec, c, detail::slot_kind::detached)))
      child<std::decay_t<F>>::exec(c, w);
  }

  // Adds a child completed by an outside event (OpenMP's detach): f is called with a
  // plait::event, and the child counts as finished only once f has returned and the event has
  // been fulfilled (from any thread). An event f drops unfulfilled finishes the child with an
  // error (plait/event.hpp). Must be called from a task running on a pool (else std::logic_error).
  template <class F>
  void run_detached(F&& f) {
    if (PLAIT_UNLIKELY(detail::tl_worker == &detail::no_worker)) detail::not_a_worker("plait::task_group::run_detached");
    // The event's share of the count, before the child can run (and fulfil it).
    pending_.add(1);
    run([ev = event(&event_done, this), fn = std::forward<F>(f)]() mutable { fn(std::move(ev)); });
  }

  // Waits for every child; rethrows the first exception a child threw. The group can be reused
  // after wait() returns (cancellation and the recorded exception are cleared).
  void wait();

  // Children that have not started yet will be skipped. Running children are not interrupted;
  // they may poll is_canceling().
  void cancel() noexcept { canceled_.store(true, std::memory_order_relaxed); }
  bool is_canceling() const noexcept { return canceled_.load(std::memory_order_relaxed); }

 private:
  template <class F>
  struct child {
    task_group* g;
    F fn;
    static void exec(void* p, detail::Worker* w) noexcept {
      auto* c = static_cast<child*>(p);
      task_group* g = c->g;
      if (!g->canceled_.load(std::memory_order_relaxed)) {
        const detail::frame_guard fg = detail::guard_frame(w);  // a join of its creator's handle
        try {
          c->fn();
        } catch (...) {
          g->record_error(std::current_exception());
        }
        detail::check_frame(w, fg);
      }
      c->~child();
      detail::task_free<child>(w, c);
      // acq_rel (inside): release makes this child's effects visible to the waiter's acquire load
      // of 0; that RMW is the last access to *g (the waiter may destroy the group right after).
      // Runs of siblings on one worker share one RMW (detail::defer_done).
      detail::defer_done(w, &g->pending_, &exec,
                         [](void* d) { return &static_cast<child*>(d)->g->pending_; });
    }
  };

  void record_error(std::exception_ptr e) noexcept;
  // An event of run_detached is fulfilled (error: dropped unfulfilled, see plait/event.hpp).
  static void event_done(void* self, bool error) noexcept;
  friend class dataflow_group;  // its detached tasks hold its task_group's count the same way

  template <class F>
  PLAIT_NOINLINE void run_now(detail::Worker* w, F& f) noexcept {
    detail::frame_check(w, "task_group::run");
    PLAIT_COUNT(w, inlined, 1);
    // No push or pop comes by while we run children here: answer a thief's request ourselves.
    // relaxed: a hint, as on the push path.
    if (w->dq.req.load(std::memory_order_relaxed) != 0) detail::serve_request(w);
    if (canceled_.load(std::memory_order_relaxed)) return;
    const detail::frame_guard fg = detail::guard_frame(w);
    try {
      f();
    } catch (...) {
      record_error(std::current_exception());
    }
    detail::check_frame(w, fg);
  }

  detail::CountLatch pending_;  // children added and not finished
  detail::Worker* creator_;  // the worker (or no_worker) that created the group; floor_ is its own
  std::uint32_t floor_;      // written only on creator_, by run() and wait()
  std::atomic<bool> canceled_{false};
  std::atomic<bool> has_error_{false};
  std::exception_ptr error_;
};

}  // namespace plait
