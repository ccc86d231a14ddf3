// Internal: the one way the runtime spins. Not part of the public API.
//
//   cpu_relax()            one pause of a spin loop: x86's `pause` (frees the core's resources for
//                          the other hyperthread and leaves the loop without a memory-order
//                          mis-speculation), AArch64's `yield`, nothing elsewhere.
//   Backoff<Spins>         a short protocol wait for another thread that is a few instructions
//                          away (a lock holder, a thief between its CAS and its mark, a team member
//                          setting up a construct): Spins pauses, then sched_yield between checks,
//                          because the other thread may have been preempted (more threads than
//                          CPUs) and only giving up the core lets it finish.
//   spin_lock_spins etc.   each wait's spin count, named; docs/design.md §9 has each with its reason.
//
// The long waits — for tasks, for a latch, for work — are not here: they go through run_until
// (src/wait.cpp: spin with the pool's spin limit, yield, sleep), which calls cpu_relax() too.
#pragma once

#include <plait/config.hpp>

#include <sched.h>

namespace plait::detail {

PLAIT_INLINE void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// The data-flow table's lock (src/dataflow.cpp): held for a table update of a few hundred
// instructions; the sleep module's parking buckets (src/sleep.cpp): a list insert or removal, or a
// completion's futex wakes.
inline constexpr unsigned spin_lock_spins = 64;
// The OpenMP front door's short protocol waits (src/omp/loop.cpp): a worksharing slot still in use
// by a member behind, a slot being set up, an ordered turn.
inline constexpr unsigned omp_protocol_spins = 256;
// The owner's wait for a thief's mark on a slot it took back too late (src/split_deque.cpp).
inline constexpr unsigned thief_mark_spins = 1024;
// A worker's trace buffer flag (src/trace.cpp): held by its owner for one append, or by a writer
// for a copy of the whole buffer (milliseconds at millions of events).
inline constexpr unsigned trace_buffer_spins = 1024;

template <unsigned Spins>
class Backoff {
 public:
  // One round of waiting: a pause while fewer than Spins were made, a yield of the core after.
  PLAIT_INLINE void pause() noexcept {
    if (n_ < Spins) {
      ++n_;
      cpu_relax();
    } else {
      sched_yield();
    }
  }

 private:
  unsigned n_ = 0;
};

}  // namespace plait::detail
