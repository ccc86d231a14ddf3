// Events: tasks finished by an outside fulfil (plait/event.hpp; docs/design.md, "Events").
//
// A detached task holds one extra count of its task_group (task_group::run_detached adds it
// before the child can run; dataflow_group::run_detached adds it to the data-flow group's
// internal task_group) and, for data-flow, one extra hold of its node (run_held: holds = 2). The
// body's end and the fulfil each give one back, in either order. The count keeps the group's
// wait() from returning (and its destructor from freeing the group) before the fulfil; the hold
// keeps the successors waiting.
//
// Where the fulfil runs. A task_group count may be given back from any thread (CountLatch wakes
// its waiters). A data-flow release launches the ready successors as children of the group's
// task_group, which needs a worker of the group's pool: on such a worker it runs in place;
// anywhere else it is handed to the pool (hand_completion, src/poll.cpp) and run by the next
// worker that looks for work. The group's count is given back after the release, so wait()
// sees the successors' counts first.
#include <plait/event.hpp>
#include <plait/task_group.hpp>

#include "pool_impl.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace plait {

namespace detail {

void event_misuse(const char* what) noexcept {
  std::fprintf(stderr, "plait: %s\n", what);
  std::abort();
}

std::exception_ptr abandoned_event_error() noexcept {
  try {
    return std::make_exception_ptr(std::logic_error(
        "plait::event destroyed without fulfill(): its task can never be completed; it finished with this error"));
  } catch (...) {
    return std::current_exception();  // bad_alloc
  }
}

}  // namespace detail

void task_group::event_done(void* self, bool error) noexcept {
  auto* g = static_cast<task_group*>(self);
  if (error && !g->is_canceling()) g->record_error(detail::abandoned_event_error());
  // acq_rel (inside count_down): as a child's end: what the fulfiller did before is visible to
  // the waiter that reads zero; this is the last access to *g.
  g->pending_.count_down(1);
}

}  // namespace plait
