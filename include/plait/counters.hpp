// Per-worker event counters. Each field is written only by its own worker (a relaxed load+store,
// no read-modify-write), so counting costs a couple of instructions on the slow paths and one
// increment per spawn. Build with -DPLAIT_COUNTERS=0 (CMake option PLAIT_COUNTERS=OFF) to compile
// every increment out; the fields then read as zero.
#pragma once

#include <cstdint>

namespace plait {

struct worker_counters {
  std::uint64_t spawns = 0;          // tasks pushed on this worker's deque (spawn, task_group::run)
  std::uint64_t steals = 0;          // tasks this worker took from another worker's deque ("moved tasks";
                                     // a chunk steal of k tasks counts k)
  std::uint64_t steal_attempts = 0;  // steal attempts, successful or not (leapfrogging included)
  std::uint64_t steal_failures = 0;  // attempts that found the victim empty or lost a race
  std::uint64_t leapfrogs = 0;       // of `steals`, those taken from a thief while joining its stolen task
  std::uint64_t joins_stolen = 0;    // joins whose task had been stolen (the join waited/helped)
  std::uint64_t injected = 0;        // root tasks (pool::run) this worker picked up
  std::uint64_t sleeps = 0;          // times this worker went to sleep while idle
  std::uint64_t wakeups = 0;         // wake-ups this worker sent to sleeping workers
  std::uint64_t publishes = 0;       // times the owner made private tasks stealable
  std::uint64_t steal_chunks = 0;    // successful steal operations (each took >= 1 task; = steals with
                                     // steal_policy::one)
  std::uint64_t idle_ns = 0;         // time spent looking for work with none to run (outside tasks)
  std::uint64_t inlined = 0;         // task_group children run at once inside run() (the throttle:
                                     // pool_options::group_throttle), never pushed

  worker_counters& operator+=(const worker_counters& o) {
    spawns += o.spawns;
    steals += o.steals;
    steal_attempts += o.steal_attempts;
    steal_failures += o.steal_failures;
    leapfrogs += o.leapfrogs;
    joins_stolen += o.joins_stolen;
    injected += o.injected;
    sleeps += o.sleeps;
    wakeups += o.wakeups;
    publishes += o.publishes;
    steal_chunks += o.steal_chunks;
    idle_ns += o.idle_ns;
    inlined += o.inlined;
    return *this;
  }
};

}  // namespace plait
