// Internal: a worker's own loop and its looks for work (src/worker.cpp), and its idle accounting
// (end_idle, src/steal.cpp).
#pragma once

#include <plait/config.hpp>
#include <plait/detail/worker.hpp>

namespace plait::detail {

// Victims a look for work samples per CPU in an oversubscribed pool (Pool::look_attempts).
inline constexpr unsigned look_sample_per_cpu = 4;

void* worker_main(void* arg);
// The worker's own random sequence (xorshift64*; owner-only state): victims to sample.
unsigned next_random(Worker* w) noexcept;
bool find_work(Worker* w) noexcept;
// Steals from the last victim that had work, then from random ones, Pool::look_attempts tries in
// all (find_work's look, and a helping waiter's in an oversubscribed pool); true: it ran a task.
bool steal_sampled(Worker* w) noexcept;

// A worker that was idle (in worker_main) got a task: credit the idle time, close the trace's idle
// slice. Called before the task runs.
PLAIT_COLD void end_idle_slow(Worker* w) noexcept;
PLAIT_INLINE void end_idle(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(w->idle_from_ns != 0)) end_idle_slow(w);
}

// stress.cpp: PLAIT_STRESS=1 installs a random yield as the protocol-point hook (at_point).
void stress_init() noexcept;

}  // namespace plait::detail
