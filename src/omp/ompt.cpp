// The OpenMP tools interface (OMPT): discovery, the entry points a tool looks up, and the hooks the
// runtime calls when a tool is attached (ompt.hpp says which, and where each identifier lives).
#include "ompt.hpp"

#include "omp_internal.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

extern "C" {
// A tool linked into the program defines this; the weak reference makes the linker export the
// program's definition to the dynamic symbol table when the program links libplait-omp (the
// global-scope lookup below then finds it). libplait-omp defines none of its own.
struct plait_ompt_start_result;
__attribute__((weak)) plait_ompt_start_result* ompt_start_tool(unsigned int omp_version, const char* runtime_version);
int omp_get_place_num(void);
}

namespace plait::omp::ompt {

bool enabled = false;

namespace {

using interface_fn = void (*)(void);
using lookup_fn = interface_fn (*)(const char*);
using initialize_fn = int (*)(lookup_fn lookup, int initial_device_num, data_t* tool_data);
using finalize_fn = void (*)(data_t* tool_data);
struct StartResult {
  initialize_fn initialize;
  finalize_fn finalize;
  data_t tool_data;
};
using start_tool_fn = StartResult* (*)(unsigned int, const char*);

using cb_thread_begin_t = void (*)(int thread_type, data_t* thread_data);
using cb_thread_end_t = void (*)(data_t* thread_data);
using cb_parallel_begin_t = void (*)(data_t* encountering_task, const frame_t* frame, data_t* parallel, unsigned requested,
                                     int flags, const void* codeptr);
using cb_parallel_end_t = void (*)(data_t* parallel, data_t* encountering_task, int flags, const void* codeptr);
using cb_task_create_t = void (*)(data_t* encountering_task, const frame_t* frame, data_t* new_task, int flags,
                                  int has_dependences, const void* codeptr);
using cb_task_schedule_t = void (*)(data_t* prior, int prior_status, data_t* next);
using cb_implicit_task_t = void (*)(int endpoint, data_t* parallel, data_t* task, unsigned actual_parallelism,
                                    unsigned index, int flags);
using cb_sync_region_t = void (*)(int kind, int endpoint, data_t* parallel, data_t* task, const void* codeptr);
using cb_mutex_acquire_t = void (*)(int kind, unsigned hint, unsigned impl, std::uint64_t wait_id, const void* codeptr);
using cb_mutex_t = void (*)(int kind, std::uint64_t wait_id, const void* codeptr);
using cb_nest_lock_t = void (*)(int endpoint, std::uint64_t wait_id, const void* codeptr);
using cb_masked_t = void (*)(int endpoint, data_t* parallel, data_t* task, const void* codeptr);
using cb_cancel_t = void (*)(data_t* task, int flags, const void* codeptr);
using cb_dependences_t = void (*)(data_t* task, const dependence_t* deps, int ndeps);
using cb_task_dependence_t = void (*)(data_t* src, data_t* sink);
using cb_work_t = void (*)(int type, int endpoint, data_t* parallel, data_t* task, std::uint64_t count,
                           const void* codeptr);

// The mutex implementation reported (kmp_mutex_impl_t's values: 1 spin, 2 queuing): Plait's locks
// spin, then sleep on a futex, which no value names better than "spin".
constexpr unsigned mutex_impl = 1;

// The tool's callbacks by event number (ompt_set_callback); written by the tool's initializer (and
// by later ompt_set_callback calls: relaxed atomics, as a tool may register from any thread).
std::atomic<interface_fn> callbacks[cb_count];

template <class F>
F cb(int event) noexcept {
  return reinterpret_cast<F>(callbacks[event].load(std::memory_order_relaxed));
}

StartResult* tool = nullptr;
bool finalized = false;
data_t initial_parallel{};  // the initial task's implicit parallel region
std::atomic<std::uint64_t> next_id{1};

// The events this runtime delivers, and how (ompt_set_result_t): `work` at some of its events only
// (sometimes_paired: gcc inlines a static loop's schedule and calls nothing for it; every begin
// told has its end), every other one at all of them. The device callbacks are accepted and never
// due: the host is the only device, and it is not a target device (ompt_get_num_devices: 0).
constexpr int set_error = 0, set_never = 1, set_sometimes_paired = 4, set_always = 5;
int delivered(int event) noexcept {
  switch (event) {
    case cb_work:
      return set_sometimes_paired;
    case cb_thread_begin:
    case cb_thread_end:
    case cb_parallel_begin:
    case cb_parallel_end:
    case cb_task_create:
    case cb_task_schedule:
    case cb_implicit_task:
    case cb_sync_region:
    case cb_sync_region_wait:
    case cb_mutex_acquire:
    case cb_mutex_acquired:
    case cb_mutex_released:
    case cb_lock_init:
    case cb_lock_destroy:
    case cb_nest_lock:
    case cb_masked:
    case cb_cancel:
    case cb_dependences:
    case cb_task_dependence:
    case cb_device_initialize:
    case cb_device_finalize:
    case cb_device_load:
    case cb_device_unload:
      return set_always;
    default:
      return set_never;
  }
}

// ---- entry points (OpenMP 5.1, 4.6) ----

int set_callback(int event, interface_fn callback) {
  if (event <= 0 || event >= cb_count) return set_error;
  const int how = delivered(event);
  if (how == set_never) return set_never;
  callbacks[event].store(callback, std::memory_order_relaxed);
  return how;
}
int get_callback(int event, interface_fn* callback) {
  if (event <= 0 || event >= cb_count || callback == nullptr) return 0;
  interface_fn f = callbacks[event].load(std::memory_order_relaxed);
  if (f == nullptr) return 0;
  *callback = f;
  return 1;
}
data_t* get_thread_data() { return enabled ? thread_data() : nullptr; }  // (every thread has one with a tool)
int get_num_procs() { return static_cast<int>(global().num_procs); }
int get_num_places() { return num_places(); }
int get_place_proc_ids(int place, int ids_size, int* ids) {
  if (place < 0 || place >= num_places()) return 0;
  const std::vector<int>& p = place_list()[static_cast<std::size_t>(place)];
  const int n = static_cast<int>(p.size());
  if (ids != nullptr && ids_size >= n) std::copy(p.begin(), p.end(), ids);
  return n;
}
int get_place_num() { return omp_get_place_num(); }
int get_partition_place_nums(int size, int* nums) {  // (the partition is every place, as omp_get_partition_place_nums says)
  const int n = num_places();
  if (nums != nullptr && size >= n)
    for (int i = 0; i < n; ++i) nums[i] = i;
  return n;
}
int get_proc_id() { return sched_getcpu(); }

// States (ompt_state_t): the names and values of 5.1.
struct StateName {
  int value;
  const char* name;
};
constexpr StateName states[] = {
    {0x000, "ompt_state_work_serial"},
    {0x001, "ompt_state_work_parallel"},
    {0x002, "ompt_state_work_reduction"},
    {0x011, "ompt_state_wait_barrier_implicit_parallel"},
    {0x012, "ompt_state_wait_barrier_implicit_workshare"},
    {0x014, "ompt_state_wait_barrier_explicit"},
    {0x015, "ompt_state_wait_barrier_implementation"},
    {0x016, "ompt_state_wait_barrier_teams"},
    {0x020, "ompt_state_wait_taskwait"},
    {0x021, "ompt_state_wait_taskgroup"},
    {0x040, "ompt_state_wait_mutex"},
    {0x041, "ompt_state_wait_lock"},
    {0x042, "ompt_state_wait_critical"},
    {0x043, "ompt_state_wait_atomic"},
    {0x044, "ompt_state_wait_ordered"},
    {0x100, "ompt_state_idle"},
    {0x101, "ompt_state_overhead"},
    {0x102, "ompt_state_undefined"},
};
int enumerate_states(int current, int* next, const char** next_name) {
  constexpr int n = static_cast<int>(sizeof states / sizeof states[0]);
  int i = 0;
  if (current != 0x102 /* ompt_state_undefined: the first call's argument */ || next == nullptr) {
    while (i < n && states[i].value != current) ++i;
    if (i >= n - 1) return 0;
    ++i;
  }
  if (next == nullptr || next_name == nullptr) return 0;
  *next = states[i].value;
  *next_name = states[i].name;
  return 1;
}
// Mutex implementations (kmp_mutex_impl_t's meaning): none is told apart here.
int enumerate_mutex_impls(int current, int* next, const char** next_name) {
  if (current != 0 || next == nullptr || next_name == nullptr) return 0;  // 0: ompt_mutex_impl_none
  *next = 1;
  *next_name = "ompt_mutex_impl_spin";
  return 1;
}
// The thread's state: what it does now, as far as this runtime tracks it (in a region or not).
int get_state(std::uint64_t* wait_id) {
  if (wait_id != nullptr) *wait_id = 0;
  const Thread& t = tls.thread;
  return t.team != nullptr ? 0x001 : 0x000;
}

// ancestor_level 0 is the innermost region; each level up its enclosing one, out to the initial
// task's implicit region.
int get_parallel_info(int ancestor_level, data_t** parallel_data, int* team_size) {
  if (!enabled || ancestor_level < 0) return 0;
  Team* team = thread_state().team;
  int k = 0;
  for (; k < ancestor_level && team != nullptr; ++k) team = team->parent;
  if (k < ancestor_level) return 0;  // past the initial task's region
  if (parallel_data != nullptr) *parallel_data = team != nullptr ? &team->ompt_parallel : &initial_parallel;
  if (team_size != nullptr) *team_size = team != nullptr ? static_cast<int>(team->n) : 1;
  return 2;
}

// ancestor_level 0 is the running task; each level up, the task that created it: an explicit
// task's parent, and from an implicit task the task that encountered its parallel region (its
// team keeps it: Team::ompt_enc_ctx and _task), out to the initial task.
int get_task_info(int ancestor_level, int* flags, data_t** task, frame_t** frame, data_t** parallel,
                  int* thread_num) {
  if (!enabled || ancestor_level < 0) return 0;
  Thread& t = thread_state();
  Team* team = t.team;  // the region of the task at this level (null: the initial task's)
  TaskCtx* c = current_context(t);
  data_t* d = task_data(c);
  unsigned num = t.num;
  for (int k = 0; k < ancestor_level; ++k) {
    if (c == nullptr) return 0;
    if (c->is_explicit) {
      c = c->parent;
      // An implicit parent in an outer region whose thread is in an inner one now: its data is
      // the one the inner region kept for its encountering task.
      d = task_data(c);
      for (Team* in = t.team; in != nullptr && in != team; in = in->parent)
        if (in->ompt_enc_ctx == c) d = in->ompt_enc_task;
    } else {
      if (team == nullptr) return 0;  // past the initial task
      c = team->ompt_enc_ctx;
      d = team->ompt_enc_task;
      num = team->parent_num;
      team = team->parent;
    }
  }
  if (c == nullptr) return 0;
  static thread_local frame_t no_frame{};
  if (flags != nullptr) *flags = c->is_explicit ? task_explicit : (team == nullptr ? task_initial : task_implicit);
  if (task != nullptr) *task = d;
  if (frame != nullptr) *frame = &no_frame;
  if (parallel != nullptr) *parallel = team != nullptr ? &team->ompt_parallel : &initial_parallel;
  if (thread_num != nullptr) *thread_num = static_cast<int>(num);
  return 2;
}
int get_task_memory(void**, std::size_t*, int) { return 0; }
int get_target_info(std::uint64_t*, std::uint64_t*, std::uint64_t*) { return 0; }  // no target region runs
int get_num_devices() { return 0; }  // the host only
std::uint64_t get_unique_id() { return next_id.fetch_add(1, std::memory_order_relaxed); }

void finalize_tool();

interface_fn lookup(const char* name) {
  struct Entry {
    const char* name;
    interface_fn fn;
  };
  static const Entry entries[] = {
      {"ompt_set_callback", reinterpret_cast<interface_fn>(&set_callback)},
      {"ompt_get_callback", reinterpret_cast<interface_fn>(&get_callback)},
      {"ompt_get_thread_data", reinterpret_cast<interface_fn>(&get_thread_data)},
      {"ompt_get_num_procs", reinterpret_cast<interface_fn>(&get_num_procs)},
      {"ompt_get_num_places", reinterpret_cast<interface_fn>(&get_num_places)},
      {"ompt_get_place_proc_ids", reinterpret_cast<interface_fn>(&get_place_proc_ids)},
      {"ompt_get_place_num", reinterpret_cast<interface_fn>(&get_place_num)},
      {"ompt_get_partition_place_nums", reinterpret_cast<interface_fn>(&get_partition_place_nums)},
      {"ompt_get_proc_id", reinterpret_cast<interface_fn>(&get_proc_id)},
      {"ompt_enumerate_states", reinterpret_cast<interface_fn>(&enumerate_states)},
      {"ompt_enumerate_mutex_impls", reinterpret_cast<interface_fn>(&enumerate_mutex_impls)},
      {"ompt_get_state", reinterpret_cast<interface_fn>(&get_state)},
      {"ompt_get_parallel_info", reinterpret_cast<interface_fn>(&get_parallel_info)},
      {"ompt_get_task_info", reinterpret_cast<interface_fn>(&get_task_info)},
      {"ompt_get_task_memory", reinterpret_cast<interface_fn>(&get_task_memory)},
      {"ompt_get_target_info", reinterpret_cast<interface_fn>(&get_target_info)},
      {"ompt_get_num_devices", reinterpret_cast<interface_fn>(&get_num_devices)},
      {"ompt_get_unique_id", reinterpret_cast<interface_fn>(&get_unique_id)},
      {"ompt_finalize_tool", reinterpret_cast<interface_fn>(&finalize_tool)},
  };
  if (name == nullptr) return nullptr;
  for (const Entry& e : entries)
    if (std::strcmp(e.name, name) == 0) return e.fn;
  return nullptr;
}

// The initial thread's end and the tool's finalizer: once, at exit or at ompt_finalize_tool.
void finalize_tool() {
  if (tool == nullptr || finalized) return;
  finalized = true;
  Thread& t = thread_state();
  if (auto f = cb<cb_implicit_task_t>(cb_implicit_task))
    f(scope_end, &initial_parallel, &t.ompt_implicit, 0, 1, task_initial);
  if (auto f = cb<cb_thread_end_t>(cb_thread_end)) f(thread_data());
  // No callback after the finalizer: cleared, not `enabled` (a pool's worker may still read that;
  // the table is atomic).
  for (auto& c : callbacks) c.store(nullptr, std::memory_order_relaxed);
  if (tool->finalize != nullptr) tool->finalize(&tool->tool_data);
}
void finalize_at_exit() { finalize_tool(); }

// Tries one ompt_start_tool: the tool, if it returns a result whose initializer keeps it.
bool try_tool(start_tool_fn start) {
  if (start == nullptr) return false;
  StartResult* r = start(202011 /* _OPENMP of 5.1 */, "Plait libplait-omp");
  if (r == nullptr) return false;
  tool = r;
  // The tool may call the entry points from its initializer: hooks are on while it runs.
  enabled = true;
  if (r->initialize == nullptr || r->initialize(&lookup, 0, &r->tool_data) == 0) {
    enabled = false;
    tool = nullptr;
    for (auto& c : callbacks) c.store(nullptr, std::memory_order_relaxed);
    return false;
  }
  return true;
}

}  // namespace

void start_tool() noexcept {
  if (const char* v = std::getenv("OMP_TOOL"); v != nullptr) {
    if (std::strcmp(v, "disabled") == 0) return;
    if (std::strcmp(v, "enabled") != 0)
      std::fprintf(stderr, "plait-omp: OMP_TOOL=%s: accepted values are enabled and disabled; taken as enabled\n", v);
  }
  // (The weak reference, kept by this use, makes a program linked with libplait-omp export its own
  // ompt_start_tool; the global-scope lookup finds it, or a preloaded tool's.)
  void* start = dlsym(RTLD_DEFAULT, "ompt_start_tool");
  if (start == nullptr) start = reinterpret_cast<void*>(&::ompt_start_tool);
  bool found = try_tool(reinterpret_cast<start_tool_fn>(start));
  if (!found) {
    if (const char* list = std::getenv("OMP_TOOL_LIBRARIES"); list != nullptr) {
      std::string all(list);
      std::size_t at = 0;
      while (!found && at <= all.size()) {
        std::size_t end = all.find(':', at);
        if (end == std::string::npos) end = all.size();
        const std::string path = all.substr(at, end - at);
        at = end + 1;
        if (path.empty()) continue;
        void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) continue;  // the standard: a library that cannot be loaded is skipped
        found = try_tool(reinterpret_cast<start_tool_fn>(dlsym(h, "ompt_start_tool")));
      }
    }
  }
  if (!found) return;
  // The initial thread (the one loading the library) and its initial task: the first events.
  Thread& t = thread_state();
  tls.ompt_begun = true;
  if (auto f = cb<cb_thread_begin_t>(cb_thread_begin)) f(thread_initial, &tls.ompt_thread);
  initial_parallel.value = 0;
  if (auto f = cb<cb_implicit_task_t>(cb_implicit_task))
    f(scope_begin, &initial_parallel, &t.ompt_implicit, 1, 1, task_initial);
  std::atexit(&finalize_at_exit);
}

data_t* thread_data() noexcept {
  ThreadLocal& l = tls;
  if (!l.ompt_begun) {  // the thread's first event: a pool's worker, or a thread of the program's
    l.ompt_begun = true;
    if (auto f = cb<cb_thread_begin_t>(cb_thread_begin))
      f(detail::current_worker() != nullptr ? thread_worker : thread_other, &l.ompt_thread);
  }
  return &l.ompt_thread;
}

void parallel_begin(Thread& t, Team& team, unsigned requested, const void* codeptr) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_parallel_begin_t>(cb_parallel_begin)) {
    static thread_local frame_t frame{};
    f(task_data(current_context(t)), &frame, &team.ompt_parallel, requested, parallel_invoker_program | parallel_team,
      codeptr);
  }
}

void parallel_end(Thread& t, Team& team, const void* codeptr) noexcept {
  if (auto f = cb<cb_parallel_end_t>(cb_parallel_end))
    f(&team.ompt_parallel, task_data(current_context(t)), parallel_invoker_program | parallel_team, codeptr);
}

void implicit_task(int endpoint, Thread& t, Team& team) noexcept {
  (void)thread_data();
  if (endpoint == scope_begin) t.ompt_implicit.value = 0;
  if (auto f = cb<cb_implicit_task_t>(cb_implicit_task))
    f(endpoint, endpoint == scope_begin ? &team.ompt_parallel : nullptr, &t.ompt_implicit,
      endpoint == scope_begin ? team.n : 0, t.num, task_implicit);
}

void task_create(data_t* encountering, data_t* task, int flags, bool has_deps, const void* codeptr) noexcept {
  (void)thread_data();
  task->value = 0;
  if (auto f = cb<cb_task_create_t>(cb_task_create)) {
    static thread_local frame_t frame{};
    f(encountering, &frame, task, flags, has_deps ? 1 : 0, codeptr);
  }
}

void task_schedule(data_t* prior, int status, data_t* next) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_task_schedule_t>(cb_task_schedule)) f(prior, status, next);
}

void sync_region(int kind, int endpoint, Thread& t, const void* codeptr) noexcept {
  (void)thread_data();
  data_t* const parallel = t.team != nullptr ? &t.team->ompt_parallel : &initial_parallel;
  data_t* const task = task_data(current_context(t));
  // The wait lies inside the region: it begins after the region's begin and ends before its end.
  if (endpoint == scope_begin) {
    if (auto f = cb<cb_sync_region_t>(cb_sync_region)) f(kind, scope_begin, parallel, task, codeptr);
    if (auto f = cb<cb_sync_region_t>(cb_sync_region_wait)) f(kind, scope_begin, parallel, task, codeptr);
  } else {
    if (auto f = cb<cb_sync_region_t>(cb_sync_region_wait)) f(kind, scope_end, parallel, task, codeptr);
    if (auto f = cb<cb_sync_region_t>(cb_sync_region)) f(kind, scope_end, parallel, task, codeptr);
  }
}

}  // namespace plait::omp::ompt

namespace plait::omp::ompt {

static std::uint64_t wait_id(const void* obj) noexcept { return reinterpret_cast<std::uintptr_t>(obj); }

void lock_init(int kind, unsigned hint, const void* obj) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_mutex_acquire_t>(cb_lock_init)) f(kind, hint, mutex_impl, wait_id(obj), nullptr);
}
void lock_destroy(int kind, const void* obj) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_mutex_t>(cb_lock_destroy)) f(kind, wait_id(obj), nullptr);
}
void mutex_acquire(int kind, unsigned hint, const void* obj) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_mutex_acquire_t>(cb_mutex_acquire)) f(kind, hint, mutex_impl, wait_id(obj), nullptr);
}
void mutex_acquired(int kind, const void* obj) noexcept {
  if (auto f = cb<cb_mutex_t>(cb_mutex_acquired)) f(kind, wait_id(obj), nullptr);
}
void mutex_released(int kind, const void* obj) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_mutex_t>(cb_mutex_released)) f(kind, wait_id(obj), nullptr);
}
void nest_lock(int endpoint, const void* obj) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_nest_lock_t>(cb_nest_lock)) f(endpoint, wait_id(obj), nullptr);
}
void masked(int endpoint, Thread& t) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_masked_t>(cb_masked))
    f(endpoint, t.team != nullptr ? &t.team->ompt_parallel : &initial_parallel, task_data(current_context(t)), nullptr);
}
void cancel(Thread& t, int flags) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_cancel_t>(cb_cancel)) f(task_data(current_context(t)), flags, nullptr);
}
void cancel_task(data_t* task, int flags) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_cancel_t>(cb_cancel)) f(task, flags, nullptr);
}
void dependences(data_t* task, const dependence_t* deps, int n) noexcept {
  if (auto f = cb<cb_dependences_t>(cb_dependences)) f(task, deps, n);
}
void task_dependence(data_t* src, data_t* sink) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_task_dependence_t>(cb_task_dependence)) f(src, sink);
}

static data_t* parallel_of(Thread& t) noexcept { return t.team != nullptr ? &t.team->ompt_parallel : &initial_parallel; }

void work(int type, int endpoint, Thread& t, std::uint64_t count) noexcept {
  (void)thread_data();
  if (auto f = cb<cb_work_t>(cb_work)) f(type, endpoint, parallel_of(t), task_data(current_context(t)), count, nullptr);
}
void work_begin(Thread& t, int type, std::uint64_t count) noexcept {
  work_end(t);
  t.ompt_work = static_cast<std::uint8_t>(type);
  t.ompt_work_count = count;
  work(type, scope_begin, t, count);
}
void work_end(Thread& t) noexcept {
  if (t.ompt_work == 0) return;
  const int type = t.ompt_work;
  t.ompt_work = 0;
  work(type, scope_end, t, t.ompt_work_count);
}

// The two events of a detachable task are told under one lock (of a few, by the task's address):
// each sets its bit, and reads the other's to say which came first.
namespace {
constexpr std::uint8_t body_ended = 1, event_fulfilled = 2;
std::mutex detach_locks[16];
std::mutex& detach_lock(const void* task) noexcept {
  return detach_locks[(reinterpret_cast<std::uintptr_t>(task) >> 6) % 16];
}
}  // namespace
void detach_body_end(data_t* task, std::uint8_t* flags, data_t* next) noexcept {
  (void)thread_data();
  std::lock_guard<std::mutex> g(detach_lock(task));
  *flags |= body_ended;
  if (auto f = cb<cb_task_schedule_t>(cb_task_schedule))
    f(task, (*flags & event_fulfilled) != 0 ? status_complete : status_detach, next);
}
void detach_fulfil(data_t* task, std::uint8_t* flags) noexcept {
  (void)thread_data();
  std::lock_guard<std::mutex> g(detach_lock(task));
  *flags |= event_fulfilled;
  if (auto f = cb<cb_task_schedule_t>(cb_task_schedule))
    f(task, (*flags & body_ended) != 0 ? status_late_fulfill : status_early_fulfill, nullptr);
}

}  // namespace plait::omp::ompt
