// The trace event model: what the Plait runtime records per worker and the OMPT tool (tools/ompt/)
// per thread, before either is written (trace_writer.hpp) or its task DAG resolved (trace_dag.hpp).
// Formats and the DAG events' rules: docs/tracing.md.
//
// Depends on nothing else in src/ (the OMPT tool compiles it too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plait::trace {

enum class ev : std::uint8_t {
  task_begin = 1, task_end, spawn, steal, steal_fail, idle_begin, idle_end, sleep, wake,
  // The task DAG (docs/tracing.md, "The task DAG"); the running task is the innermost open one.
  complete,    // the running task counts down latch `aux` (a task_group / loop child finishing)
  wait_begin,  // the running task starts waiting for `aux`: a latch (other 0) or a stolen frame child's id (other 1)
  wait_end,    // ... and stops waiting
  df_submit,   // the running task submits data-flow node `aux`
  df_edge,     // data-flow node `task` depends on node `aux` (recorded while `task` is submitted)
  df_run       // the running task executes data-flow node `aux`
};

struct Event {
  std::uint64_t t_ns;   // ns since the trace's t = 0 (a monotonic clock), non-decreasing per worker
  std::uint64_t task;   // task id, unique within the trace (0 = none); spawn: the new task's id; steal: the stolen task's id
  std::uint32_t other;  // task_begin: the creating worker; steal / steal_fail: the victim worker; spawn: 1 for
                        // a frame child (joined by its own join), 0 for a detached one; wait_begin: key kind
  std::uint32_t label;  // task_begin/spawn: index into Trace::labels (0 = no label)
  ev kind;
  std::uint64_t aux = 0;  // the DAG events' key (a latch or node address, or a task id)
};

struct Trace {
  std::string runtime;                      // "plait", "libomp"
  std::string program;                      // argv[0] or similar, for the metadata
  std::uint64_t t0_unix_ns = 0;             // wall clock at t = 0
  std::vector<std::vector<Event>> workers;  // one event list per worker/thread, each in time order
  std::vector<std::string> labels;          // labels[0] == ""
};

}  // namespace plait::trace
