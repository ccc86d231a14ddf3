// Internal: external progress — polling services and completions handed in from outside the pool
// (src/poll.cpp has the protocols; docs/design.md, "Events and external progress"), and the
// pool's part for them (Pool::ext).
#pragma once

#include <plait/config.hpp>
#include <plait/detail/worker.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace plait::detail {

// Polling services run one caller at a time under poll_mu (held while they run and while the list
// changes), at most once per period_ns by the pool's waiting and idle workers and by busy workers
// entering a group wait. Completions: work handed in by threads that are no worker of the pool
// (an event fulfilled there), run by the next worker that looks for work. `npollers` and
// `ncompletions` mirror the two lists for the lock-free checks of the wait loop; both share one
// line that only changes on registration and hand-in.
struct PoolExternal {
  struct Poller {
    std::uint64_t id;
    std::function<void()> fn;
  };
  std::mutex poll_mu;
  std::vector<Poller> pollers;  // under poll_mu
  std::uint64_t next_id = 1;    // under poll_mu
  std::uint64_t period_ns = 100'000;
  std::atomic<std::uint64_t> next_poll_ns{0};
  std::mutex done_mu;
  std::vector<std::pair<void (*)(void*), void*>> completions;  // under done_mu
  alignas(cache_line) std::atomic<std::uint32_t> npollers{0};
  std::atomic<std::uint32_t> ncompletions{0};
  // Hand-ins in progress: threads inside hand_completion, which may still touch the pool after
  // their completion became visible (and so after a worker ran it, the region ended and its owner
  // went on to destroy the pool). ~Pool waits for zero before it frees anything (poll.cpp, "The
  // pool's lifetime").
  std::atomic<std::uint32_t> handing{0};

  // Whether anything external may want a worker: a registered poller or a handed-in completion.
  // relaxed: a hint; run_external takes the locks.
  bool pending() const noexcept {
    return (npollers.load(std::memory_order_relaxed) | ncompletions.load(std::memory_order_relaxed)) != 0;
  }
};

// Runs the handed-in completions, and the pollers if they are due and no other worker runs them;
// true when it ran a completion (work may have appeared).
bool run_external(Worker* w) noexcept;
// Hands fn(arg) to a worker of p (called by a thread that is no worker of p); wakes one.
void hand_completion(Pool* p, void (*fn)(void*), void* arg);
// ~Pool: returns once no thread is inside hand_completion (poll.cpp, "The pool's lifetime").
void wait_hand_ins(Pool* p) noexcept;
// How long a sleeper of p may sleep before it must poll: 0 (no limit) without pollers.
std::uint64_t sleep_limit_ns(const Pool* p) noexcept;

// event.cpp: the error a task finishes with when its event was dropped unfulfilled.
std::exception_ptr abandoned_event_error() noexcept;

}  // namespace plait::detail
