// Per-worker event counters. Each field is written only by its own worker (a relaxed load+store,
// no read-modify-write), so counting costs a couple of instructions on the slow paths and one
// increment per spawn. Build with -DPLAIT_COUNTERS=0 (CMake option PLAIT_COUNTERS=OFF) to compile
// every increment out; the fields then read as zero.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

// The single definition of the counters: X(name, description), one entry per counter, in field
// order. Every list of the counters is an expansion of this one: the fields of worker_counters and
// its arithmetic below, counter_table / for_each_counter, the runtime's atomic mirror
// (detail::AtomicCounters), the snapshot in pool::counters(), pool::reset_counters(), and the
// benchmarks' JSON fields (bench/common/plait_counters.hpp). Adding a counter is one entry here
// plus the PLAIT_COUNT increments that feed it; nothing else names them all. The name is the
// field's identifier, its counter_table name and its field in the benchmarks' JSON records, so a
// rename changes what stored results and the study tool call it.
#define PLAIT_COUNTER_LIST(X)                                                                                   \
  X(spawns, "tasks pushed on this worker's deque (spawn, task_group::run)")                                     \
  X(steals, "tasks this worker took from another worker's deque (moved tasks; a chunk steal of k tasks "        \
            "counts k)")                                                                                        \
  X(steal_attempts, "steal attempts, successful or not (leapfrogging included)")                               \
  X(steal_failures, "steal attempts that found the victim empty or lost a race")                               \
  X(leapfrogs, "of steals, those taken from a thief while joining the task it stole")                           \
  X(joins_stolen, "joins whose task had been stolen (the join waited and helped)")                              \
  X(injected, "root tasks (pool::run) this worker picked up")                                                   \
  X(sleeps, "times this worker slept (idle, or waiting with nothing to run)")                                 \
  X(wakeups, "wake-ups this worker sent to sleeping workers")                                                   \
  X(publishes, "times the owner made private tasks stealable")                                                  \
  X(steal_chunks, "successful steal operations, each taking one task or more (= steals with "                 \
                  "steal_policy::one)")                                                                         \
  X(idle_ns, "nanoseconds spent looking for work with none to run (outside tasks)")                             \
  X(inlined, "task_group children run at once inside run() by the throttle (pool_options::group_throttle), "  \
             "never pushed")

namespace plait {

struct worker_counters {
#define PLAIT_COUNTER_FIELD_(name, description) std::uint64_t name = 0;
  PLAIT_COUNTER_LIST(PLAIT_COUNTER_FIELD_)
#undef PLAIT_COUNTER_FIELD_

  worker_counters& operator+=(const worker_counters& o) noexcept {
#define PLAIT_COUNTER_ADD_(name, description) name += o.name;
    PLAIT_COUNTER_LIST(PLAIT_COUNTER_ADD_)
#undef PLAIT_COUNTER_ADD_
    return *this;
  }
  // Field by field, modulo 2^64: `later - earlier` is what was counted in between.
  worker_counters& operator-=(const worker_counters& o) noexcept {
#define PLAIT_COUNTER_SUB_(name, description) name -= o.name;
    PLAIT_COUNTER_LIST(PLAIT_COUNTER_SUB_)
#undef PLAIT_COUNTER_SUB_
    return *this;
  }
  friend worker_counters operator+(worker_counters a, const worker_counters& b) noexcept { return a += b; }
  friend worker_counters operator-(worker_counters a, const worker_counters& b) noexcept { return a -= b; }
  friend bool operator==(const worker_counters&, const worker_counters&) = default;
};

// One counter of the list: its name (the field's identifier), what it counts, and the field.
struct counter_info {
  const char* name;
  const char* description;
  std::uint64_t worker_counters::*field;

  // The counter's value in `c`.
  constexpr std::uint64_t operator()(const worker_counters& c) const noexcept { return c.*field; }
};

// Every counter once, in field order.
inline constexpr std::array counter_table{
#define PLAIT_COUNTER_INFO_(name, description) counter_info{#name, description, &worker_counters::name},
    PLAIT_COUNTER_LIST(PLAIT_COUNTER_INFO_)
#undef PLAIT_COUNTER_INFO_
};
inline constexpr std::size_t num_counters = counter_table.size();

// Calls f(info) for every counter, in field order.
template <class F>
constexpr void for_each_counter(F&& f) {
  for (const counter_info& k : counter_table) f(k);
}

// Calls f(info, value) for every counter of `c`, in field order: e.g. one loop that prints them all.
template <class F>
constexpr void for_each_counter(const worker_counters& c, F&& f) {
  for (const counter_info& k : counter_table) f(k, k(c));
}

}  // namespace plait
