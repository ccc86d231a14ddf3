// plait::event: a task that finishes when something outside says so (OpenMP 5's detach model).
//
// task_group::run_detached(f) and dataflow_group::run_detached(deps, f) call f with an event. The
// task's body may return at once; the task counts as finished -- for the group's wait() and for
// releasing its data-flow successors -- only when its body has returned and the event has been
// fulfilled, in either order. fulfill() may be called from any thread, a worker of any pool or
// none (from a pool's poller, pool::add_poller, a request can be turned into an event).
//
// Rules:
//   * fulfill() once. On an empty event (fulfilled, moved from, default-made) it stops the
//     process with a message: a second completion cannot be undone.
//   * An event destroyed unfulfilled can never be fulfilled: its task finishes then, with the
//     error std::logic_error("plait::event destroyed without fulfill() ...") recorded in its
//     group (wait() rethrows it, as a task's exception) -- unless an exception is propagating
//     through the destruction (the body threw; that exception is the one recorded) or the group
//     is being canceled (the task was skipped or is canceled). A group therefore never waits for
//     an event nobody holds; it does wait for one that is held and never fulfilled (leaked).
//   * The group and what the task's successors read must stay valid until fulfil: a group's
//     wait() (and its destructor) waits for it.
// docs/design.md, "Events".
#pragma once

#include <plait/config.hpp>

#include <exception>
#include <utility>

namespace plait {

namespace detail {
// What fulfils an event: fn(ctx, abandoned). Called exactly once.
using event_fn = void (*)(void* ctx, bool abandoned) noexcept;
[[noreturn]] PLAIT_COLD void event_misuse(const char* what) noexcept;
}  // namespace detail

class event {
 public:
  event() noexcept = default;
  event(detail::event_fn fn, void* ctx) noexcept : fn_(fn), ctx_(ctx) {}
  event(event&& o) noexcept : fn_(std::exchange(o.fn_, nullptr)), ctx_(o.ctx_) {}
  event& operator=(event&& o) noexcept {
    if (this != &o) {
      abandon();
      fn_ = std::exchange(o.fn_, nullptr);
      ctx_ = o.ctx_;
    }
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event() { abandon(); }

  // Completes the event: the task finishes now if its body has returned (from any thread).
  void fulfill() noexcept {
    if (fn_ == nullptr) detail::event_misuse("plait::event::fulfill on an empty event (fulfilled, moved from or default-made)");
    std::exchange(fn_, nullptr)(ctx_, false);
  }
  // Whether the event still waits for fulfill().
  explicit operator bool() const noexcept { return fn_ != nullptr; }

 private:
  void abandon() noexcept {
    if (fn_ != nullptr) std::exchange(fn_, nullptr)(ctx_, std::uncaught_exceptions() == 0);
  }
  detail::event_fn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace plait
