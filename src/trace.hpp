// Internal: tracing (src/trace.cpp records, src/trace_writer.cpp writes, docs/tracing.md): the
// pool's part (Pool::trace), each worker's buffer, and the recording functions.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/split_deque.hpp>
#include <plait/detail/worker.hpp>

#include "trace_event.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace plait::detail {

// On when `path` is non-empty. Clock: TSC ticks, mapped to ns at write time from two
// (ticks, CLOCK_MONOTONIC) pairs.
struct PoolTrace {
  std::string path;  // non-empty iff the pool traces (trace_init clears an unusable path)
  std::uint64_t tsc0 = 0, mono0 = 0, unix0 = 0;
  std::mutex mu;                     // the label table
  std::vector<std::string> labels;   // [0] == ""
  std::vector<const char*> label_keys;
};

// trace.cpp. Every function is called only while w->trace != null (the pool traces).
struct TraceBuf {
  // Held by the owner while it appends, and by pool::write_trace while it copies: an on-demand
  // write may run while idle workers still record idle/sleep events. Uncontended but for that.
  std::atomic<bool> busy{false};
  // t_ns holds TSC ticks until the trace is written. Chunks of 32 Ki events: growing never
  // copies what was recorded (a vector's doubling copied 30 MB inside some task at 10^6 events,
  // and the DAG's work/span analysis saw that task take milliseconds), and allocating is rare (a
  // std::deque's 512-byte blocks cost a malloc every 12 events, inside whatever task ran).
  static constexpr std::size_t chunk_events = std::size_t{1} << 15;
  std::vector<std::unique_ptr<trace::Event[]>> chunks;
  std::size_t nev = 0;
  void append(const trace::Event& e) {
    if (nev % chunk_events == 0) chunks.push_back(std::make_unique_for_overwrite<trace::Event[]>(chunk_events));
    chunks[nev / chunk_events][nev % chunk_events] = e;
    ++nev;
  }
  template <class Out>
  void copy_to(Out& out) const {
    out.clear();
    out.reserve(nev);
    for (std::size_t i = 0; i < nev; ++i) out.push_back(chunks[i / chunk_events][i % chunk_events]);
  }
  std::vector<std::uint64_t> open; // ids of the tasks begun and not yet ended on this worker (nesting)
  std::uint64_t seq = 0;           // tasks created here
  std::uint64_t forward_id = 0;    // run_chunk: the id the next push carries instead of a new one
  std::uint32_t forward_label = 0;
  std::uint32_t next_label = 0;    // label_next_task: label of the next task created here
  bool in_fail_streak = false;     // only the first of consecutive failed steals is recorded
  std::uint64_t stolen_join = 0;   // pop_slow found this frame child stolen: the join's wait is for it
};
PLAIT_INLINE bool tracing(const Worker* w) noexcept { return w->trace != nullptr; }
void trace_init(Pool* p);                 // after the workers exist, before the threads start
void trace_finish(Pool* p) noexcept;      // after the threads joined: write, free
// Writes the pool's trace to its trace.path now, while it runs (a pool that is never destroyed:
// the OpenMP front door's, at exit); a failure is one line on stderr.
void trace_write_now(Pool* p) noexcept;
void trace_event(Worker* w, trace::ev k, std::uint64_t task, std::uint32_t other, std::uint32_t label,
                 std::uint64_t aux = 0) noexcept;
// The DAG's waits (a group's wait, a stolen frame child's join) and data-flow bookkeeping.
void trace_wait(Worker* w, bool begin, std::uint64_t key, std::uint32_t key_kind) noexcept;
void trace_df(Worker* w, trace::ev k, const void* node, const void* pred = nullptr) noexcept;
std::uint64_t trace_new_id(Worker* w) noexcept;
inline std::uint32_t trace_creator(std::uint64_t id) noexcept { return static_cast<std::uint32_t>(id >> 40) - 1; }
void trace_task_begin(Worker* w, std::uint64_t id, std::uint32_t label) noexcept;
void trace_on_push(Worker* w, Slot& s, std::uintptr_t tagged) noexcept;
void run_stolen_traced(Worker* w, exec_fn exec, void* data, std::uint64_t id, std::uint32_t label) noexcept;
void trace_stolen(Worker* self, Worker* victim, std::uint64_t id) noexcept;
void trace_steal_failed(Worker* self, Worker* victim) noexcept;

}  // namespace plait::detail
