// The task DAG of a trace: which task created each task, where it joins, and its data-flow
// predecessors, resolved from the events the runtime records (spawn, complete, wait_begin /
// wait_end, df_submit / df_edge / df_run). The JSON writer stores the result in each task's args;
// docs/tracing.md, "The task DAG", states the rules. Depends only on trace_event.hpp (the OMPT
// tool compiles it too; its traces have no DAG events, so every task comes out as a root).
#pragma once

#include "trace_event.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace plait::trace {

struct DagTask {
  std::uint64_t parent = 0;    // the task that created (spawned or submitted) it; 0: a root
  std::uint64_t spawn_ns = 0;  // when, on the parent's worker
  std::uint64_t join = 0;      // the task that waits for it (0: nobody in the trace)
  std::uint64_t join_ns = 0;   // when that wait ends (or the inline join: the task's own end)
  std::uint32_t spawn_worker = 0, join_worker = 0;
  std::vector<std::uint64_t> preds;  // data-flow predecessors (task ids)
};

// A wait of a task for children (a group's wait, or the join of a stolen frame child): a slice
// on the waiter's worker, nested in the waiter's task slice.
struct DagWait {
  std::uint64_t begin_ns, end_ns, task;
};

struct Dag {
  bool recorded = false;  // the trace has a DAG: a Plait trace, or one with DAG events
  std::unordered_map<std::uint64_t, DagTask> tasks;  // every task that has a task_begin
  std::vector<std::vector<DagWait>> waits;           // per worker, in end order
};

Dag resolve_dag(const Trace& t);

}  // namespace plait::trace
