// Fork-join: plait::spawn / spawn_handle::join and plait::join.
//
//   auto h = plait::spawn([&] { return fib(n - 1); });   // may run on another worker
//   long b = fib(n - 2);                                 // meanwhile, here
//   long a = h.join();                                   // a's value (or its exception)
//
// The closure lives inside the handle, on the spawner's stack; the deque slot only points at it.
// So a spawn copies the closure once, writes two words of a slot and bumps an index: no heap
// allocation and no atomic read-modify-write, whatever the closure's size. When the task was not
// stolen, join() calls the closure directly (the compiler can inline it). Joins are strictly LIFO
// per task: a handle must be joined before any handle spawned earlier by the same task, and by
// the task that spawned it. Every build checks both and aborts with a message naming the handles.
// task_group children (and loops, data-flow regions) may be added between a spawn and its join:
// the join runs the children still queued above its own slot first (docs/design.md, "Mixing
// spawn/join with task groups"). A handle that goes out
// of scope unjoined (an exception passing through) joins in its destructor and drops the result.
// For recursion with small trivially copyable arguments, plait/frame.hpp offers frame tasks, whose
// spawn and sync cost about a third as many instructions.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/latch.hpp>
#include <plait/detail/worker.hpp>
#include <plait/pool.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace plait {

namespace detail {
// Waits for a stolen joinable task's latch while running work stolen back from its thief
// (leapfrogging); sleeps when there is none for about a millisecond.
PLAIT_COLD void wait_stolen(Worker* w, OnceLatch* done) noexcept;
// A join found something other than its own slot on top of the deque: runs the task_group
// children above it (detached slots) until its slot is the newest. Aborts with a message when a
// newer spawn handle is still unjoined (joins are LIFO) or the handle's slot is not in the calling
// task's frame (joined by a task other than the spawning one; the in-place form of that is
// caught by detail::check_frame, worker.hpp).
PLAIT_COLD void uncover(Worker* w, const void* handle) noexcept;

inline constexpr std::uint8_t outcome_pending = 0, outcome_value = 1, outcome_error = 2;
}  // namespace detail

template <class F>
class [[nodiscard]] spawn_handle {
 public:
  using result_type = std::invoke_result_t<F&>;

  spawn_handle(const spawn_handle&) = delete;
  spawn_handle& operator=(const spawn_handle&) = delete;

  ~spawn_handle() {
    if (PLAIT_UNLIKELY(top_ != top_joined)) abandon();
  }

  // Returns the task's result, or rethrows the exception it threw. Call exactly once.
  result_type join() {
    detail::Worker* w = detail::tl_worker;  // the spawning worker: a task never changes threads
    // Our slot must be the newest. task_group children added since the spawn (or the places of
    // ones already run) may lie above it: uncover runs them first, and refuses a join that is not
    // LIFO (in every build: one compare of head with the head the spawn left). Slot indices never
    // move and only our join pops our slot, so an equal head means our slot is on top; debug
    // builds also check its content, which catches a join by a task other than the spawning one.
    // The same compare sends a handle that ran inline or was joined already to join_rare: their
    // top_ values (top_ran_inline, top_joined) are above every head (capacity <= 2^30), and above
    // head_in_frame, so a join inside frame code reaches uncover, which refuses it.
    if (PLAIT_UNLIKELY(w->dq.head != top_)) return join_rare(w);
    return join_top(w);
  }

 private:
  template <class G>
  friend auto spawn(G&& g) -> spawn_handle<std::decay_t<G>>;

  // top_ while the task is not on the deque: it ran inline (deque full), or join() returned.
  static constexpr std::uint32_t top_ran_inline = ~std::uint32_t{0};
  static constexpr std::uint32_t top_joined = ~std::uint32_t{0} - 1;
  static_assert(top_joined > detail::head_in_frame + 1);
  using stored = detail::result_t<result_type>;

  // join() once our slot is the newest: pop it, run the closure here unless a thief took it.
  PLAIT_INLINE result_type join_top(detail::Worker* w) {
    PLAIT_ASSERT(w->dq.own[w->dq.head - 1].tagged == reinterpret_cast<std::uintptr_t>(this));
    detail::pop_result popped = detail::pop(w);
    if (PLAIT_LIKELY(popped == detail::pop_result::local)) {
      // `joined` is stored after the call, so that the compiler, seeing that store right before
      // the destructor's test, can drop the test; the catch covers a throwing closure (the slot
      // is already popped, the destructor must not join again). No cost on the normal path.
      try {
        if constexpr (std::is_void_v<result_type>) {
          std::invoke(fn_);
          top_ = top_joined;
          return;
        } else {
          result_type r = std::invoke(fn_);
          top_ = top_joined;
          return r;
        }
      } catch (...) {
        top_ = top_joined;
        throw;
      }
    }
    if (popped == detail::pop_result::traced) return join_traced(w);
    detail::wait_stolen(w, &done_);
    top_ = top_joined;
    return take();
  }

  template <class G>
  explicit spawn_handle(G&& g) : fn_(std::forward<G>(g)) {
    // detail::push, with the head it leaves kept in the handle for join's check. The slow path
    // stays a separate branch: merged with the fast one (say, by reading head after push()), the
    // worker pointer would live across the slow call and cost a callee-saved register in every
    // spawning function (4 instructions per spawn in fib, callgrind).
    detail::Worker* w = detail::tl_worker;
    const std::uint32_t h = w->dq.head;
    if (PLAIT_UNLIKELY(!w->dq.push_fast_ok(h))) {
      push_rare(w);
      return;
    }
    detail::write_private(w, h, &exec_stolen,
                          reinterpret_cast<std::uintptr_t>(this) | static_cast<std::uintptr_t>(detail::slot_kind::joinable));
    top_ = h + 1;
  }

  // The push's slow path (a request to serve, a reset after all-stolen, tracing, a full deque, or
  // no worker at all), out of line.
  PLAIT_NOINLINE void push_rare(detail::Worker* w) {
    const std::uint32_t at =
        detail::push_slow(w, &exec_stolen,
                          reinterpret_cast<std::uintptr_t>(this) | static_cast<std::uintptr_t>(detail::slot_kind::joinable));
    if (at == detail::no_slot)
      push_failed();
    else
      top_ = at + 1;
  }

  // Not a worker thread: throw. Deque full: run now, hand the result over at join(). Out of line
  // so that the compiler keeps the normal push in the hot path.
  PLAIT_COLD void push_failed() {
    if (detail::tl_worker == &detail::no_worker) detail::not_a_worker("plait::spawn");
    exec_stolen(this, detail::tl_worker);
    top_ = top_ran_inline;
  }

  // Runs on the thief (or inline when the deque is full). Setting `done_` is the last access to
  // *this: the joiner may destroy the handle as soon as it sees the latch set.
  static void exec_stolen(void* p, detail::Worker*) noexcept {
    auto* self = static_cast<spawn_handle*>(p);
    std::uint8_t oc = detail::outcome_value;
    try {
      if constexpr (std::is_void_v<result_type>) {
        std::invoke(self->fn_);
        ::new (static_cast<void*>(self->value_)) stored();
      } else {
        ::new (static_cast<void*>(self->value_)) stored(std::invoke(self->fn_));
      }
    } catch (...) {
      ::new (static_cast<void*>(self->error_)) std::exception_ptr(std::current_exception());
      oc = detail::outcome_error;
    }
    // The latch's release publishes the result (or exception) written above to the joiner.
    self->done_.set(oc);
  }

  // The pool is tracing: run inline as join() does, between the begin event (recorded by pop)
  // and the end event.
  PLAIT_COLD result_type join_traced(detail::Worker* w) {
    struct end_guard {
      detail::Worker* w;
      ~end_guard() { detail::trace_task_end(w); }
    } g{w};
    top_ = top_joined;
    return std::invoke(fn_);
  }

  // join() found head != top_: the handle ran inline, was joined already, or slots lie above ours
  // (uncover runs them, or aborts when the join is not LIFO or runs inside frame code).
  PLAIT_COLD result_type join_rare(detail::Worker* w) {
    if (top_ == top_joined) throw std::logic_error("plait: spawn_handle::join() called twice");
    if (top_ == top_ran_inline) {
      top_ = top_joined;
      return take();
    }
    detail::uncover(w, this);
    return join_top(w);
  }

  result_type take() {
    // The caller already saw the latch set (wait_stolen, with acquire) or set it itself (ran_inline).
    if (done_.code() == detail::outcome_error) {
      auto* e = std::launder(reinterpret_cast<std::exception_ptr*>(error_));
      std::exception_ptr ex = std::move(*e);
      e->~exception_ptr();
      std::rethrow_exception(ex);
    }
    auto* v = std::launder(reinterpret_cast<stored*>(value_));
    if constexpr (std::is_void_v<result_type>) {
      v->~stored();
    } else {
      result_type r = std::move(*v);
      v->~stored();
      return r;
    }
  }

  // Destroyed without join(): usually an exception unwinding the spawner's frame.
  PLAIT_COLD void abandon() noexcept {
    if (top_ != top_ran_inline) {
      try {
        (void)join();
      } catch (...) {
        // The result (or exception) of an abandoned handle is dropped.
      }
    } else {
      discard();
    }
  }

  void discard() noexcept {
    if (done_.code() == detail::outcome_error)
      std::launder(reinterpret_cast<std::exception_ptr*>(error_))->~exception_ptr();
    else
      std::launder(reinterpret_cast<stored*>(value_))->~stored();
  }

  F fn_;
  detail::OnceLatch done_;  // set by the task's runner when it was stolen (or ran inline)
  // While our slot is on the deque: the deque's head right after our push (our slot + 1);
  // otherwise top_ran_inline or top_joined.
  std::uint32_t top_;
  alignas(stored) unsigned char value_[sizeof(stored)];
  alignas(std::exception_ptr) unsigned char error_[sizeof(std::exception_ptr)];
};

// Spawns f() as a task that another worker may steal; join the handle to get its result.
// Must be called from a task running on a pool (inside plait::run / pool::run); elsewhere it
// throws std::logic_error saying so.
template <class G>
[[nodiscard]] auto spawn(G&& g) -> spawn_handle<std::decay_t<G>> {
  return spawn_handle<std::decay_t<G>>(std::forward<G>(g));
}

// Runs f and g in parallel (g may be stolen while this thread runs f) and returns both results as
// a pair; a void result comes back as std::monostate. If either throws, the exception reaches the
// caller after both have finished (f's first if both throw). Called on a thread that is no worker,
// it runs itself through plait::run on the default pool.
template <class F, class G>
auto join(F&& f, G&& g) -> std::pair<detail::result_t<std::invoke_result_t<F&>>, detail::result_t<std::invoke_result_t<G&>>> {
  using RF = std::invoke_result_t<F&>;
  using RG = std::invoke_result_t<G&>;
  if (PLAIT_UNLIKELY(!detail::current_worker()))
    return plait::run([&] { return plait::join(f, g); });
  auto hg = plait::spawn(std::forward<G>(g));
  detail::result_t<RF> rf = [&]() -> detail::result_t<RF> {
    if constexpr (std::is_void_v<RF>) {
      std::invoke(f);
      return {};
    } else {
      return std::invoke(f);
    }
  }();
  if constexpr (std::is_void_v<RG>) {
    hg.join();
    return {std::move(rf), std::monostate{}};
  } else {
    return {std::move(rf), hg.join()};
  }
}

}  // namespace plait
