// The task DAG of a Plait trace (format plait-trace-2, docs/tracing.md "The task DAG") as the
// analyses see it: tasks with their own work, the points in that work where they spawn children
// and join them, and data-flow predecessors. Used by work/span (Cilkscale's measures) and by the
// scheduling simulator (sim.hpp). docs/scaling.md states the definitions.
#pragma once

#include "json.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace plait::dag {

struct point {
  double at;                    // ns of the task's own work done before this point
  std::uint64_t ts;             // the trace's time of the point (orders points with equal `at`)
  std::int64_t spawn = -1;      // index of the child created here, or -1
  std::vector<std::uint32_t> joins;  // children this point waits for (a join or a group wait)
};

struct task {
  std::uint64_t id = 0;
  double work = 0;              // ns: the task's slice minus nested slices and its waits
  std::int64_t parent = -1;     // index, -1 for a root
  std::int64_t joiner = -1;     // index of the task that joins it, -1: nobody
  std::vector<std::uint32_t> preds;  // data-flow predecessors (indices)
  std::vector<point> points;    // in order of `at` (then ts)
  std::string label;
  std::uint32_t worker = 0;     // where it ran in the trace
  double begin_ns = 0, end_ns = 0;
};

struct graph {
  std::string runtime, program;
  unsigned workers = 0;
  std::vector<task> tasks;      // roots in begin order come first among equals; any order otherwise
  std::vector<std::uint32_t> roots;  // in order of their begin
  std::size_t unjoined = 0;     // non-root tasks nobody joins (treated as joined at their root's end)
  double trace_ns = 0;          // first task begin to last task end
};

// Reads a trace file. Throws dag::error with one line: not a file, not JSON, truncated, not a
// Plait trace, a trace without DAG edges (format 1, or a libomp/OMPT trace), or inconsistent
// edges (a parent, joiner or predecessor that is no task of the trace).
graph load(const std::string& path);
graph parse(std::string_view text, const std::string& name);

// Consistency of the DAG with the timeline; throws dag::error naming the first problem: every
// task once, spawns and joins inside the slice of the task that makes them, a child begins after
// its spawn and before the wait that joins it ends, a task begins after its predecessors began
// (a task finishes inside its slice, before the slice's end is recorded), slices nest per
// worker, no cycle.
// Returns the number of edges checked.
std::size_t check(const graph& g);

// Removes what tracing added to the work: `per_task_ns` from every task (its own begin and end
// events) and `per_spawn_ns` for each spawn it makes (the traced spawn, its child's pop and
// join), spread over the task's pieces in proportion, never below 0. Both are calibrated on
// one-task-per-call fib (plait-bench calibrate; docs/scaling.md, "Calibration").
void remove_trace_cost(graph& g, double per_task_ns, double per_spawn_ns);

struct work_span {
  double work = 0, span = 0, burdened_span = 0;
  double parallelism() const { return span > 0 ? work / span : 0; }
  double burdened_parallelism() const { return burdened_span > 0 ? work / burdened_span : 0; }
};
struct region {
  std::string label;
  std::size_t instances = 0;
  work_span ws;  // summed over the label's instances (the span as if they ran one after another)
};
// Work, span and burdened span (each spawn and data-flow edge on a path costs `burden_ns`: the
// time to move the task to another worker), for the whole trace (roots one after another) and
// per label (each labelled task with everything it spawns, transitively).
work_span analyse(const graph& g, double burden_ns, std::vector<region>* regions = nullptr);

}  // namespace plait::dag
