// Trace files: the writer for the two file formats of a trace (trace_event.hpp). Formats:
// docs/tracing.md.
//
// This file and trace_writer.cpp depend only on trace_event.hpp and trace_dag.hpp (the JSON
// writer stores each task's DAG; the OMPT tool compiles all three).
#pragma once

#include "trace_event.hpp"

#include <string>

namespace plait::trace {

// Writes `t` to `path`; the format comes from the extension:
//   ".csv"  study 002's table: timestamp_ns,executing_thread,task_id,creating_thread,start
//           (start: 1 = task begins, 0 = task ends), a header line first, rows in time order;
//   ".json" Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): one track per worker,
//           tasks and idle time as "X" slices, steals as flow arrows + instant events, metadata
//           and counters in "otherData".
// Anything else is an error. The file is written to a temporary file in the same directory and
// renamed: a reader never sees a half-written trace. Returns false with a one-line *err on failure;
// *err is the reason without the path (print it as "<path>: <err>").
bool write_trace(const Trace& t, const std::string& path, std::string* err);

// Early check used when tracing is switched on: the extension is known, the directory exists and
// is writable, and `path` is not a directory. Returns false with a one-line *err otherwise (the
// reason, without the path).
bool check_trace_path(const std::string& path, std::string* err);

}  // namespace plait::trace
