// Internal: the pool — its workers and threads, and one part per concern, each declared with its
// functions in the header of the source file that owns it:
//
//   part            type            header             owner
//   roots           PoolRoots       roots.hpp          scheduler.cpp (queue), worker.cpp (take)
//   sleep           PoolSleep       sleep.hpp          sleep.cpp
//   trace           PoolTrace       trace.hpp          trace.cpp, trace_writer.cpp
//   steal           PoolSteal       steal.hpp          steal.cpp
//   ext             PoolExternal    poll.hpp           poll.cpp, event.cpp
//   depot           AllocDepot[]    depot.hpp          task_alloc.cpp
//
// The wait loop (wait.hpp), the worker's loop (worker_impl.hpp) and the places (topology.hpp)
// have headers of their own too; this one includes them all for the files that need several.
#pragma once

#include <plait/pool.hpp>
#include <plait/detail/latch.hpp>
#include <plait/detail/task_alloc.hpp>

#include <pthread.h>

#include "depot.hpp"
#include "poll.hpp"
#include "roots.hpp"
#include "sleep.hpp"
#include "steal.hpp"
#include "topology.hpp"
#include "trace.hpp"
#include "wait.hpp"
#include "worker_impl.hpp"

#include <atomic>
#include <cstdint>
#include <vector>

namespace plait::detail {

class Pool {
 public:
  // caller_is_worker0: no thread is started for worker 0; a thread that wants to work in the
  // pool adopts it (the OpenMP front door's master thread, for the length of a parallel region).
  explicit Pool(const pool_options& o, bool caller_is_worker0 = false);
  ~Pool();

  pool_options opts;
  unsigned n = 0;
  Worker* workers = nullptr;  // n workers, cache-line aligned
  std::vector<pthread_t> threads;  // index i: worker i's thread (unused for an adopted worker 0)
  bool external0 = false;
  // With pin_policy::cores and external0: the CPU worker 0 belongs on (the thread that adopts it
  // binds itself there: the OpenMP front door's initial thread, team.cpp); -1 otherwise.
  int worker0_cpu = -1;
  std::vector<Place> places;              // pinned workers: worker i on places[i % size]; else empty
  std::vector<VictimOrder> victim_order;  // pinned workers' victims, nearest first

  PoolRoots roots;  // roots handed in from outside
  PoolSleep sleep;  // idle workers' word, latch waiters' slots
  alignas(cache_line) std::atomic<bool> shutdown{false};

  // Pauses a waiting or idle worker spins before yielding its core (run_until, wait.cpp):
  // long when every worker has a core of its own, short when the pool is oversubscribed — by its
  // own size, or by other pools running at the same time (the OpenMP front door's nested teams
  // lower it while they run). relaxed: a tuning value, read once per wait.
  std::atomic<unsigned> spin_limit{2048};
  unsigned spin_limit_alone = 2048;  // what the pool's own size calls for
  // Victims one look for work tries (find_work): every other worker while each has a CPU; with
  // more workers than CPUs a random sample (look_sample_per_cpu per CPU, at least 8): a look of
  // every waiting worker at every other is O(n^2) requests on the victims' lines, and a team of
  // 1000 threads on 2 CPUs spent 80 % of its time there.
  unsigned look_attempts = 1;

  PoolTrace trace;         // on when trace.path is non-empty
  PoolSteal steal;         // the steal rule
  PoolExternal ext;        // pollers, completions handed in, hand-ins in progress
  AllocDepot depot[alloc_classes];  // the task-record allocator's depot, per size class
};

// The parts' helpers that need the whole pool.

// Whether anything external may want a worker of p (poll.hpp).
inline bool external_pending(const Pool* p) noexcept { return p->ext.pending(); }
// A busy worker entering a group wait: the pollers if they are due (no clock read without
// pollers).
inline void poll_if_due(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(external_pending(w->pool))) run_external(w);
}

}  // namespace plait::detail
