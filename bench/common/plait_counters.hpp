// Plait's per-worker counters in a benchmark's JSON record, for every Plait binary: through the
// kernel adapter (rt/plait.hpp: stats() and counters(), used by every task kernel) and the loop
// study's executor (mandel/loops_plait.hpp).
//
// The fields come from the runtime's counter list (PLAIT_COUNTER_LIST, plait/counters.hpp) in one
// loop: every counter is written under its worker_counters field name, so a counter added to the
// list shows up in every Plait record with no change here. Derived fields:
//   idle_ms      idle_ns in milliseconds (all workers together). An idle stretch is counted when
//                it ends, so one that began before the repetition (the workers wait between
//                repetitions while the result is verified) counts whole.
// The runtime-neutral names that the other runtimes' adapters also write (`tasks`,
// `moved_tasks`) and the loop study's `steal_ops` stay with the code that writes those for its
// kernel: they mean different things in different kernels (uts's `tasks` counts nodes with
// children, amr's the data-flow tasks it creates; rt/plait.hpp and rt/common.hpp write
// moved_tasks where it is Plait's `steals`).
#pragma once

#include <plait/counters.hpp>

#include "common/driver.hpp"

namespace plait_bench {

// Writes `c` (one repetition's counts: total_counters() after it minus before it) into `rec`.
inline void put_counters(Record& rec, const plait::worker_counters& c) {
  plait::for_each_counter(c, [&](const plait::counter_info& k, std::uint64_t v) {
    rec.stat(k.name, static_cast<unsigned long long>(v));
  });
  rec.stat("idle_ms", static_cast<double>(c.idle_ns) / 1e6);
}

}  // namespace plait_bench
