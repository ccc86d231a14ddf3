// Internal: the one wait loop, run_until (src/wait.cpp), and its policies.
//
// A waiter waits for a latch (or, an idle worker, for shutdown) by a policy: a type that says what
// work the waiter may run meanwhile, where that work shows when it is visible without asking
// anyone, whom to ask to publish before sleeping, and what new work should wake it (the sleep
// module's wants, src/sleep.hpp). run_until<Policy> is the loop; each policy's members are defined
// beside it in wait.cpp and the loop is instantiated once per policy there.
//
//   policy        who                                       runs meanwhile                 ends when
//   IdleWait      a worker with no task (worker_main)       roots, then any victim's tasks  pool shutdown
//   LeapfrogWait  a join whose task was stolen              tasks of the thief only         latch set
//   HelpWait      a task_group wait, after its own slots    any victim's tasks              count zero
//   RootsWait     a worker of another pool in pool::run     its own pool's roots            latch set
//   BlockWait     a thread that is no worker                nothing                         latch set
#pragma once

#include <plait/detail/latch.hpp>

#include <cstdint>

namespace plait::detail {

struct Worker;

// The latch a waiter waits for: one of the two kinds, or none (an idle worker: until shutdown).
struct latch_ref {
  OnceLatch* once = nullptr;
  CountLatch* count = nullptr;
  bool probe() const noexcept;
  bool arm() const noexcept;
  void disarm() const noexcept;
  const void* key() const noexcept { return once != nullptr ? static_cast<const void*>(once) : count; }
};

// What each policy supplies to the loop (defined in wait.cpp):
//   on_worker      false only for BlockWait: no look for work, no yield phase, no work wake-ups
//   look(w)        one look for work by the policy; true when it ran something
//   visible(w)     work of the policy's kind visible without asking (after the sleeper's fence)
//   ask(w)         before sleeping: ask those it may take work from to publish their private slots
//   wants()        the sleep module's want_* (what new work wakes it)
struct IdleWait {
  static constexpr bool on_worker = true;
  bool look(Worker* w) const noexcept;
};
struct LeapfrogWait {
  static constexpr bool on_worker = true;
  Worker* thief;
  bool look(Worker* w) const noexcept;
  bool visible(const Worker* w) const noexcept;
  void ask(Worker* w) const noexcept;
  std::uint32_t wants() const noexcept;
};
struct HelpWait {
  static constexpr bool on_worker = true;
  bool look(Worker* w) const noexcept;
  bool visible(const Worker* w) const noexcept;
  void ask(Worker* w) const noexcept;
  std::uint32_t wants() const noexcept;
};
struct RootsWait {
  static constexpr bool on_worker = true;
  bool look(Worker* w) const noexcept;
  bool visible(const Worker* w) const noexcept;
  void ask(Worker*) const noexcept {}
  std::uint32_t wants() const noexcept;
};
struct BlockWait {
  static constexpr bool on_worker = false;
};

// Waits until the latch completes (IdleWait: until the pool shuts down), running work by the
// policy. w: the waiting worker, null for BlockWait.
template <class Policy>
void run_until(Worker* w, const latch_ref& l, Policy pol) noexcept;

extern template void run_until<IdleWait>(Worker*, const latch_ref&, IdleWait) noexcept;
extern template void run_until<LeapfrogWait>(Worker*, const latch_ref&, LeapfrogWait) noexcept;
extern template void run_until<HelpWait>(Worker*, const latch_ref&, HelpWait) noexcept;
extern template void run_until<RootsWait>(Worker*, const latch_ref&, RootsWait) noexcept;
extern template void run_until<BlockWait>(Worker*, const latch_ref&, BlockWait) noexcept;

}  // namespace plait::detail
