// Internal: the OpenMP tools interface (OMPT, OpenMP 5.1 chapter 4) of libplait-omp, for both ABIs
// (docs/openmp.md, "Tools (OMPT)").
//
// Discovery runs once, from the library's constructor (init.cpp): OMP_TOOL=disabled turns it off;
// otherwise the ompt_start_tool the process's global scope answers (a tool linked into the program,
// or preloaded), then each library of OMP_TOOL_LIBRARIES in order; the first that returns a result
// whose initializer returns non-zero is the tool, and `enabled` is true from then on. Nothing here
// runs without a tool: every hook is behind `enabled`, tested off the task fast paths only — with a
// tool the threads of a team get no `fast_w` (omp_internal.hpp), so every task takes the general
// ways, where the task hooks are.
//
// The identifiers the standard asks for live where the runtime keeps the entity: a thread's data in
// its ThreadLocal, a parallel region's in its Team, an implicit task's in the member's Thread (saved
// and restored with it around a region), an explicit task's in its record's rare part (with a tool
// every record has one), an undeferred task's on its creator's stack.
//
// Callbacks delivered: thread_begin/end, parallel_begin/end, implicit_task (and the initial task),
// task_create, task_schedule, sync_region and sync_region_wait for barriers, taskwait and
// taskgroup, mutex_acquire/acquired/released, lock_init/destroy and nest_lock for locks, critical,
// atomic and ordered, masked (libomp's ABI), cancel, dependences, task_dependence, work (sometimes:
// gcc inlines static loops), and the device callbacks, accepted and never due (no target device).
// ompt_set_callback answers ompt_set_never for every other event (the standard allows it):
// docs/openmp.md lists them.
#pragma once

#include <cstdint>

namespace plait::omp {
struct Team;
struct TaskCtx;
struct Thread;
}  // namespace plait::omp

namespace plait::omp::ompt {

// The standard's types and values (OpenMP 5.1, 4.4), the subset this runtime uses.
union data_t {
  std::uint64_t value;
  void* ptr;
};
struct frame_t {
  data_t exit_frame;
  data_t enter_frame;
  int exit_frame_flags;
  int enter_frame_flags;
};

// Callback events (ompt_callbacks_t); the device callbacks are accepted, none is ever due (no
// target device exists).
enum : int {
  cb_thread_begin = 1, cb_thread_end = 2, cb_parallel_begin = 3, cb_parallel_end = 4, cb_task_create = 5,
  cb_task_schedule = 6, cb_implicit_task = 7, cb_device_initialize = 12, cb_device_finalize = 13,
  cb_device_load = 14, cb_device_unload = 15, cb_sync_region_wait = 16, cb_mutex_released = 17,
  cb_dependences = 18, cb_task_dependence = 19, cb_work = 20, cb_masked = 21, cb_sync_region = 23,
  cb_lock_init = 24, cb_lock_destroy = 25, cb_mutex_acquire = 26, cb_mutex_acquired = 27, cb_nest_lock = 28,
  cb_cancel = 30,
  cb_count = 38,  // one past the last event of 5.1 (error, 37)
};
enum : int { thread_initial = 1, thread_worker = 2, thread_other = 3 };
enum : int { scope_begin = 1, scope_end = 2 };
enum : int { parallel_invoker_program = 0x1, parallel_invoker_runtime = 0x2, parallel_team = static_cast<int>(0x80000000u) };
enum : int {  // ompt_task_flag_t
  task_initial = 0x1, task_implicit = 0x2, task_explicit = 0x4, task_undeferred = 0x8000000,
  task_untied = 0x10000000, task_final = 0x20000000, task_mergeable = 0x40000000,
};
enum : int { status_complete = 1, status_yield = 2, status_cancel = 3, status_detach = 4, status_early_fulfill = 5,
             status_late_fulfill = 6, status_switch = 7 };
enum : int { work_loop = 1, work_sections = 2, work_single_executor = 3, work_single_other = 4, work_distribute = 6,
             work_taskloop = 7 };
enum : int {  // ompt_sync_region_t
  sync_barrier_explicit = 3, sync_barrier_implementation = 4, sync_taskwait = 5, sync_taskgroup = 6,
  sync_barrier_implicit_workshare = 8, sync_barrier_implicit_parallel = 9,
};
enum : int { mutex_lock = 1, mutex_test_lock = 2, mutex_nest_lock = 3, mutex_test_nest_lock = 4, mutex_critical = 5,
             mutex_atomic = 6, mutex_ordered = 7 };
enum : int {  // ompt_cancel_flag_t
  cancel_parallel = 0x01, cancel_sections = 0x02, cancel_loop = 0x04, cancel_taskgroup = 0x08,
  cancel_activated = 0x10, cancel_detected = 0x20, cancel_discarded_task = 0x40,
};
enum : int { dependence_in = 1, dependence_out = 2, dependence_inout = 3, dependence_mutexinoutset = 4,
             dependence_inoutset = 7 };
struct dependence_t {
  data_t variable;
  int dependence_type;
};

// Whether a tool is attached (written once, by the constructor, before any region: read plainly).
extern bool enabled;

void start_tool() noexcept;  // discovery and the tool's initializer (init.cpp's constructor)

// The hooks: called only when `enabled`.
data_t* thread_data() noexcept;         // the calling thread's (thread_begin on its first event)
data_t* task_data(TaskCtx* c) noexcept; // the data of the task whose context c is (null: none known)
TaskCtx* current_context(Thread& t) noexcept;  // the task t runs (the initial task outside regions)
void parallel_begin(Thread& t, Team& team, unsigned requested, const void* codeptr) noexcept;
void parallel_end(Thread& t, Team& team, const void* codeptr) noexcept;
void implicit_task(int endpoint, Thread& t, Team& team) noexcept;
void task_create(data_t* encountering, data_t* task, int flags, bool has_deps, const void* codeptr) noexcept;
void task_schedule(data_t* prior, int status, data_t* next) noexcept;
// A sync region on thread t of kind `kind` (sync_*), begin or end, with its wait inside it.
void sync_region(int kind, int endpoint, Thread& t, const void* codeptr) noexcept;
// Mutual exclusion (locks, critical, atomic, ordered): the object's address is its wait id.
void lock_init(int kind, unsigned hint, const void* obj) noexcept;
void lock_destroy(int kind, const void* obj) noexcept;
void mutex_acquire(int kind, unsigned hint, const void* obj) noexcept;
void mutex_acquired(int kind, const void* obj) noexcept;
void mutex_released(int kind, const void* obj) noexcept;
void nest_lock(int endpoint, const void* obj) noexcept;  // a nestable lock its owner takes again / keeps
// masked/master (libomp's ABI; gcc inlines the construct): begin and end on the executing thread.
void masked(int endpoint, Thread& t) noexcept;
// cancel: `flags` the construct (cancel_parallel ...) | activated, detected or discarded_task.
void cancel(Thread& t, int flags) noexcept;
void cancel_task(data_t* task, int flags) noexcept;  // a task discarded (cancel_discarded_task)
// A deferred task's dependences, after its task_create (out and inout are one kind here: inout).
void dependences(data_t* task, const dependence_t* deps, int n) noexcept;
// An edge of the data-flow engine: the task `sink` waits for the task `src` (task_dependence).
void task_dependence(data_t* src, data_t* sink) noexcept;
// A worksharing construct on thread t (`work`). work_begin first ends a construct still open on t
// (a GOMP single's executor: gcc calls nothing at its end, so it is ended at the thread's next
// construct, barrier or implicit-task end); work_end ends the open one, if any. work: a construct
// whose two endpoints come from one call (taskloop, a single's other threads), not tracked.
void work_begin(Thread& t, int type, std::uint64_t count) noexcept;
void work_end(Thread& t) noexcept;
void work(int type, int endpoint, Thread& t, std::uint64_t count) noexcept;
// A detachable task's two events (OpenMP 5.1, omp_fulfill_event): its body's end (status complete
// if its event was fulfilled already, else detach) and its event's fulfil (early before the body's
// end, late after), told in one order under one lock per task (`flags`: the task's two bits).
void detach_body_end(data_t* task, std::uint8_t* flags, data_t* next) noexcept;
void detach_fulfil(data_t* task, std::uint8_t* flags) noexcept;

}  // namespace plait::omp::ompt
