// A discrete-event simulation of Plait's work stealing replaying a trace's task DAG (dag.hpp) on
// P workers. docs/scaling.md describes the model, the cost model file and what is left out.
#pragma once

#include "dag.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace plait::dag {

struct costs {
  double spawn_ns = 10;       // an untraced spawn (push + pop or steal bookkeeping), per task
  double steal_ns = 300;      // a successful steal: from the thief's look to running the task
  double steal_fail_ns = 60;  // one failed look at a victim
  double wake_ns = 20000;     // a sleeping worker, from the publication to its first look
  double spin_ns = 1000000;   // how long an idle worker looks before it sleeps (Plait: ~1 ms)
  double trace_task_ns = 0;   // what tracing added to each task's work (remove_trace_cost)
  double trace_ns = 0;        // ... and per spawn
  std::string source = "defaults";  // where the numbers come from (a calibration file, ...)
};

enum class policy { one, chunk, half, adaptive };

struct sim_options {
  unsigned workers = 1;
  policy steal = policy::one;
  unsigned chunk = 4;         // policy::chunk's K
  unsigned cores = 0;         // 0: one core per worker; else workers share this many cores
  double contention = 0;      // each running worker slows every other by this fraction (memory bandwidth)
  std::uint64_t seed = 1;
  costs c;
  // A machine's shape, outermost level first ("package:2 numa:2 core:8": counts per parent), with
  // the steal cost at each distance: steal_ns_levels[d - 1] for victims whose place first differs
  // d levels up (1: another core of the same innermost group ... size: another package). Workers
  // fill the cores in order (worker i on core i % cores) and look at victims nearest first.
  // Empty: flat, every steal costs c.steal_ns.
  std::vector<unsigned> levels;
  std::vector<double> steal_ns_levels;
};

// "package:2 numa:2 core:8" -> {2, 2, 8}; false if malformed (names are free, counts 1..4096).
bool parse_levels(const std::string& s, std::vector<unsigned>* out);

struct sim_result {
  unsigned workers = 0;
  double time_ns = 0;         // first root start to last root end
  double work_ns = 0;         // the DAG's work (after remove_trace_cost, if the caller applied it)
  double busy_ns = 0;         // summed over workers: running task work
  std::uint64_t steals = 0, steal_attempts = 0, moved = 0, sleeps = 0;
  std::uint64_t tasks = 0;
};

// Throws dag::error for options it cannot simulate (0 workers, chunk 0).
sim_result simulate(const graph& g, const sim_options& o);

// "one", "half", "adaptive", "chunk:K"; false if malformed.
bool parse_policy(const std::string& s, policy* p, unsigned* k);

// Reads a cost model file (JSON: {"spawn_ns":..,"steal_ns":..,...}); throws dag::error.
costs load_costs(const std::string& path);

}  // namespace plait::dag
