// libplait-ompt.so: an OMPT tool that records the tasks of an OpenMP program running on libomp (LLVM
// OpenMP) or on libplait-omp in Plait's trace model and writes them with Plait's trace writer at the
// end of the program (the trace names the runtime: "libomp" or "plait-omp").
//
//   OMP_TOOL_LIBRARIES=/path/libplait-ompt.so PLAIT_TRACE=out.json ./program
//
// Events per thread (threads are numbered in the order libomp starts them; the initial thread is 0):
//   task_create            -> spawn on the creating thread; the creating thread is kept in the task's data
//   task_schedule          -> task_begin / task_end of explicit tasks (a task that waits in taskwait and
//                             runs other tasks meanwhile stays open: the slices nest)
//   sync_region_wait       -> idle while the thread waits in a barrier / taskwait / taskgroup and runs
//                             no task (tasks run inside the wait end the idle interval and restart it)
//   thread_begin/end       -> the per-thread buffers (no lock on the hot path: a thread_local pointer)
// The trace is written at ompt_finalize to $PLAIT_TRACE (.csv or .json, see docs/tracing.md).
#include <omp-tools.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trace_writer.hpp"

namespace {

namespace tr = plait::trace;

// Our explicit tasks' ompt_data_t::value: tag bit | creator thread (20 bits) | task id (40 bits).
constexpr std::uint64_t tag_bit = std::uint64_t{1} << 63;
constexpr int creator_shift = 40;
constexpr std::uint64_t id_mask = (std::uint64_t{1} << creator_shift) - 1;
constexpr std::uint64_t creator_mask = (std::uint64_t{1} << 20) - 1;

struct thread_buf {
  std::uint32_t index = 0;
  std::vector<tr::Event> events;
  // Explicit tasks open on this thread (innermost last) and, per nesting level (0 = no explicit
  // task), whether the thread is waiting in a sync region at that level.
  std::vector<std::uint64_t> open;
  std::vector<std::uint8_t> waiting{0};
  bool idle = false;
};

struct tool_state {
  std::string path;
  std::chrono::steady_clock::time_point t0;
  std::uint64_t t0_unix_ns = 0;
  std::mutex mu;  // only at thread begin and finalize
  std::vector<std::unique_ptr<thread_buf>> threads;
  std::atomic<std::uint64_t> next_task{1};
  std::atomic<bool> active{false};
};

tool_state* state = nullptr;  // set in initialize, never freed (threads may still run at exit)
// The runtime the trace names: libomp, or libplait-omp (its runtime_version names Plait).
const char* runtime_name = "libomp";
thread_local thread_buf* self = nullptr;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - state->t0).count());
}

thread_buf* me() {
  if (self) return self;
  auto b = std::make_unique<thread_buf>();
  b->events.reserve(1 << 14);
  std::lock_guard<std::mutex> lk(state->mu);
  b->index = static_cast<std::uint32_t>(state->threads.size());
  self = b.get();
  state->threads.push_back(std::move(b));
  return self;
}

void record(thread_buf* b, tr::ev kind, std::uint64_t task = 0, std::uint32_t other = 0) {
  b->events.push_back(tr::Event{now_ns(), task, other, 0, kind});
}

void set_idle(thread_buf* b, bool idle) {
  if (b->idle == idle) return;
  b->idle = idle;
  record(b, idle ? tr::ev::idle_begin : tr::ev::idle_end);
}

bool ours(const ompt_data_t* d) { return d && (d->value & tag_bit); }

// ---- callbacks ------------------------------------------------------------------------------

void on_thread_begin(ompt_thread_t, ompt_data_t* thread_data) {
  thread_data->ptr = me();
}

void on_thread_end(ompt_data_t*) {
  thread_buf* b = me();
  set_idle(b, false);
}

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* new_task_data, int flags, int,
                    const void*) {
  if (!(flags & ompt_task_explicit) || !new_task_data) return;
  thread_buf* b = me();
  std::uint64_t id = state->next_task.fetch_add(1, std::memory_order_relaxed) & id_mask;
  new_task_data->value = tag_bit | ((std::uint64_t{b->index} & creator_mask) << creator_shift) | id;
  record(b, tr::ev::spawn, id);
}

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  thread_buf* b = me();
  bool ends_prior = status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_detach ||
                    status == ompt_taskwait_complete;
  if (ends_prior && ours(prior) && !b->open.empty() && b->open.back() == prior->value) {
    set_idle(b, false);
    record(b, tr::ev::task_end, prior->value & id_mask);
    b->open.pop_back();
    b->waiting.pop_back();
    set_idle(b, b->waiting.back() != 0);  // back in a wait: idle again until the next task
  }
  if ((status == ompt_task_switch || status == ompt_task_yield) && ours(next)) {
    set_idle(b, false);
    std::uint64_t v = next->value;
    b->events.push_back(tr::Event{now_ns(), v & id_mask, static_cast<std::uint32_t>((v >> creator_shift) & creator_mask),
                                  0, tr::ev::task_begin});
    b->open.push_back(v);
    b->waiting.push_back(0);
  }
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, unsigned, unsigned, int) {
  // The end of an implicit task (end of a parallel region for this thread): nothing may stay open
  // except what an untied or detached task left behind; the trace writer closes such slices.
  if (endpoint == ompt_scope_end) set_idle(me(), false);
}

void on_sync_region_wait(ompt_sync_region_t, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*,
                         const void*) {
  thread_buf* b = me();
  if (endpoint == ompt_scope_begin) {
    b->waiting.back() = 1;
    set_idle(b, true);
  } else if (endpoint == ompt_scope_end) {
    b->waiting.back() = 0;
    set_idle(b, false);
  }
}

// ---- start / finalize -----------------------------------------------------------------------

template <class F>
bool set_cb(ompt_set_callback_t set, ompt_callbacks_t which, F f) {
  auto r = set(which, reinterpret_cast<ompt_callback_t>(f));
  return r != ompt_set_never && r != ompt_set_error;
}

int tool_initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set) {
    std::fprintf(stderr, "plait-ompt: the OpenMP runtime has no ompt_set_callback; not tracing\n");
    return 0;
  }
  bool ok = set_cb(set, ompt_callback_thread_begin, &on_thread_begin) &&
            set_cb(set, ompt_callback_task_create, &on_task_create) &&
            set_cb(set, ompt_callback_task_schedule, &on_task_schedule);
  if (!ok) {
    std::fprintf(stderr, "plait-ompt: the OpenMP runtime does not report task creation/scheduling; not tracing\n");
    return 0;
  }
  set_cb(set, ompt_callback_thread_end, &on_thread_end);
  set_cb(set, ompt_callback_implicit_task, &on_implicit_task);
  set_cb(set, ompt_callback_sync_region_wait, &on_sync_region_wait);
  state->active.store(true);
  return 1;  // keep the tool
}

void tool_finalize(ompt_data_t*) {
  if (!state || !state->active.exchange(false)) return;
  tr::Trace t;
  t.runtime = runtime_name;
  if (const char* p = std::getenv("PLAIT_TRACE_PROGRAM")) t.program = p;
  if (t.program.empty()) {
    if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
      char buf[4096];
      std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
      buf[n] = 0;
      t.program = buf;  // argv[0]
      std::fclose(f);
    }
  }
  t.t0_unix_ns = state->t0_unix_ns;
  t.labels = {""};
  {
    std::lock_guard<std::mutex> lk(state->mu);
    std::uint64_t end = now_ns();
    for (auto& b : state->threads) {
      if (b->idle) b->events.push_back(tr::Event{end, 0, 0, 0, tr::ev::idle_end}), b->idle = false;
      t.workers.push_back(std::move(b->events));
    }
  }
  std::string err;
  if (!tr::write_trace(t, state->path, &err))
    std::fprintf(stderr, "plait-ompt: cannot write trace %s: %s\n", state->path.c_str(), err.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int,
                                                                                              const char* runtime_version) {
  static ompt_start_tool_result_t result{&tool_initialize, &tool_finalize, ompt_data_t{0}};
  if (runtime_version != nullptr && std::strstr(runtime_version, "Plait") != nullptr) runtime_name = "plait-omp";
  const char* path = std::getenv("PLAIT_TRACE");
  if (!path || !*path) {
    std::fprintf(stderr, "plait-ompt: PLAIT_TRACE is not set (expected FILE.csv or FILE.json); not tracing\n");
    return nullptr;
  }
  std::string err;
  if (!tr::check_trace_path(path, &err)) {
    std::fprintf(stderr, "plait-ompt: cannot write trace %s: %s\n", path, err.c_str());
    return nullptr;
  }
  state = new tool_state;
  state->path = path;
  state->t0 = std::chrono::steady_clock::now();
  state->t0_unix_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  return &result;
}
