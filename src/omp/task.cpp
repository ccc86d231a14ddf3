// Explicit tasks: GOMP_task, taskwait, taskgroup, dependences, detach, taskloop.
//
// A task is a record from the worker's task-record allocator (no malloc per task): its context
// (TaskCtx: the children latch taskwait waits for, the innermost taskgroup, the dependence group),
// the function, and the argument block copied in (cpyfn or memcpy). A deferred task is an
// ordinary detached slot on the creating worker's deque, run by that worker or a thief. Three
// counts follow it: the parent's `children` (taskwait), its taskgroup's `pending` (taskgroup end,
// inherited by its descendants), and the team's `tasks` (the implicit barrier). A record is freed
// when its own body and every child that may still count down its `children` are done (`refs`).
//
// Dependences go through Plait's data-flow engine (plait::dataflow_group, one per parent task,
// made at its first dependent child): OpenMP orders only sibling tasks, which is the engine's
// model. A task that made dependent children waits for them when its body ends (an implicit
// barrier's tasks wait covers those of implicit tasks): the group must outlive its tasks.
//
// Not honoured, as the standard allows: priority (a hint), untied (every task is tied to the thread
// that starts it, which is what Plait's work stealing does anyway), mergeable (never merged).
#include "omp_internal.hpp"

#include <cstring>
#include <new>
#include <vector>

namespace plait::omp {

namespace {

struct TaskRec {
  TaskCtx ctx;
  Team* team;                  // null: a task outside every region (run at once)
  Taskgroup* group;            // the taskgroup whose set this task belongs to (counted), or null
  void (*fn)(void*);
  void* arg;
  std::size_t bytes;           // the record's size and alignment, for the allocator
  std::size_t align;
  bool pooled;                 // from task_alloc_bytes on a worker (else operator new)
  std::atomic<int> detach{1};  // 1: body; 2 with a detach clause: body and omp_fulfill_event
  detail::CountLatch* waiter = nullptr;  // an undeferred task's creator, waiting for completion
  // A detached task with dependences: its node in the parent's dependence group, released at
  // completion (the engine then releases the successors: at the fulfil, not at the body's end).
  plait::dataflow_group* held_group = nullptr;
  detail::dep_node* held_node = nullptr;
};

// The context of the code outside every region (the initial task) on this thread.
thread_local TaskCtx initial_ctx;

TaskCtx* current_ctx(Thread& t) {
  if (t.task == nullptr) t.task = &initial_ctx;
  return t.task;
}

void free_record(TaskRec* r) noexcept {
  const std::size_t bytes = r->bytes, align = r->align;
  const bool pooled = r->pooled;
  r->~TaskRec();
  detail::Worker* w = detail::current_worker();
  if (pooled && w != nullptr)
    detail::task_free_bytes(w, r, bytes, align);
  else
    ::operator delete(static_cast<void*>(r), std::align_val_t{align});
}

void release(TaskCtx* c) noexcept {
  if (!c->is_explicit) return;
  // acq_rel: the last release sees every other holder done with the record before freeing it.
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_record(reinterpret_cast<TaskRec*>(c));
}

// The task is complete (its body ran and, with detach, its event was fulfilled).
void complete(TaskRec* r) noexcept {
  TaskCtx* parent = r->ctx.parent;
  Team* team = r->team;
  Taskgroup* g = r->group;
  detail::CountLatch* waiter = r->waiter;
  if (r->held_node != nullptr) r->held_group->release_hold(r->held_node);
  parent->children.count_down(1);
  if (g != nullptr) g->pending.count_down(1);  // the group's last access by us
  release(parent);
  if (team != nullptr) team->tasks.count_down(1);  // the barrier's count: our last access to the team
  release(&r->ctx);
  if (waiter != nullptr) waiter->count_down(1);
}

void finish(TaskRec* r) noexcept {
  // acq_rel: with a detach clause, body and event are two halves; the second completes the task.
  if (r->detach.fetch_sub(1, std::memory_order_acq_rel) == 1) complete(r);
}

bool canceled(const TaskRec* r) noexcept {
  // relaxed: cancellation flags; a task that starts just before the cancel runs, as allowed.
  if (r->group != nullptr && r->group->canceled.load(std::memory_order_relaxed)) return true;
  return r->team != nullptr && r->team->canceled.load(std::memory_order_relaxed);
}

// Runs r's body and completes it (or leaves the completion to omp_fulfill_event).
//
// The thread that runs a task is a member of the task's team. A worker of the team's pool can find
// the task while it is not inside the region — it steals from its idle loop before it has read its
// implicit task from its mailbox — so such a worker runs the task as the member it is about to be
// (thread i of a team is the pool's worker i): team, thread number, levels and ICVs for the task's
// length, then its own state again. Without it, omp_get_num_threads() in that task said 1.
void run_body(TaskRec* r) noexcept {
  Thread& t = thread_state();
  detail::Worker* w = detail::current_worker();
  const bool adopt = r->team != nullptr && t.team != r->team;
  Thread outside;
  if (PLAIT_UNLIKELY(adopt)) {
    outside = t;
    enter_team_for_task(t, *r->team, w);
  }
  TaskCtx* saved = t.task;
  t.task = &r->ctx;
  if (w != nullptr) r->ctx.floor = w->dq.head;
  if (!canceled(r)) r->fn(r->arg);
  if (r->ctx.deps != nullptr) {
    r->ctx.deps->wait();  // the dependent children (see the top of the file)
    delete r->ctx.deps;
    r->ctx.deps = nullptr;
  }
  t.task = saved;
  if (PLAIT_UNLIKELY(adopt)) t = outside;
  finish(r);
}

void task_exec(void* p, detail::Worker*) noexcept { run_body(static_cast<TaskRec*>(p)); }

// A new record for a child of `parent`, with the argument block copied in, counted everywhere.
TaskRec* make_task(Thread& t, TaskCtx* parent, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*),
                   long arg_size, long arg_align, unsigned flags) {
  std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
  if (align < alignof(TaskRec)) align = alignof(TaskRec);
  const std::size_t head = (sizeof(TaskRec) + align - 1) / align * align;
  const std::size_t bytes = head + (arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0);
  detail::Worker* w = detail::current_worker();
  // A record made on a worker is freed by a worker of the same pool (task_free_bytes); one made off
  // the pools (outside every region) goes back to the heap.
  const bool pooled = w != nullptr;
  void* mem = pooled ? detail::task_alloc_bytes(w, bytes, align) : ::operator new(bytes, std::align_val_t{align});
  auto* r = ::new (mem) TaskRec;
  r->bytes = bytes;
  r->align = align;
  r->pooled = pooled;
  r->fn = fn;
  r->arg = static_cast<char*>(mem) + head;
  if (arg_size > 0) {
    if (cpyfn != nullptr)
      cpyfn(r->arg, data);
    else
      std::memcpy(r->arg, data, static_cast<std::size_t>(arg_size));
  }
  r->team = t.team;
  r->group = parent->group;
  r->ctx.parent = parent;
  r->ctx.group = parent->group;  // the child's own children join the same taskgroup set
  r->ctx.is_explicit = true;
  r->ctx.final = parent->final || (flags & task_final) != 0;
  // Counted before anyone can run (and so complete) it.
  parent->children.add(1);
  // relaxed: as CountLatch::add — the push that publishes the child orders it.
  if (parent->is_explicit) parent->refs.fetch_add(1, std::memory_order_relaxed);
  if (r->group != nullptr) r->group->pending.add(1);
  if (r->team != nullptr) r->team->tasks.add(1);
  return r;
}

// The accesses of a depend array (either of gcc's two formats).
void collect_deps(void** depend, std::vector<plait::access>& out) {
  const auto word = [&](std::size_t i) { return reinterpret_cast<std::uintptr_t>(depend[i]); };
  auto add = [&](void* addr, std::uintptr_t kind) {
    dep_mode m;
    switch (kind) {
      case dep_in: m = dep_mode::in; break;
      case dep_out:
      case dep_inout: m = dep_mode::inout; break;
      case dep_mutexinoutset: m = dep_mode::mutexinoutset; break;
      case dep_inoutset: m = dep_mode::inoutset; break;
      default: fatal("GOMP_task: unknown dependence kind %lu", static_cast<unsigned long>(kind));
    }
    out.push_back(plait::access{addr, 1, m});
  };
  if (word(0) != 0) {  // format 1: n, n_out, then n addresses (out/inout first)
    const std::size_t n = word(0), nout = word(1);
    for (std::size_t i = 0; i < n; ++i) add(depend[2 + i], i < nout ? dep_inout : dep_in);
    return;
  }
  // format 2: 0, n, n_out/inout, n_mutexinoutset, n_in, then addresses; entries past those are
  // pointers to {address, kind} pairs (depobj objects, and the kinds with no count of their own).
  const std::size_t n = word(1), nout = word(2), nmutex = word(3), nin = word(4);
  const std::size_t normal = nout + nmutex + nin;
  for (std::size_t i = 0; i < n; ++i) {
    void* e = depend[5 + i];
    if (i < nout) add(e, dep_inout);
    else if (i < nout + nmutex) add(e, dep_mutexinoutset);
    else if (i < normal) add(e, dep_in);
    else {
      void** pair = static_cast<void**>(e);
      add(pair[0], reinterpret_cast<std::uintptr_t>(pair[1]));
    }
  }
}

// Waits, running tasks, until every earlier sibling that the accesses depend on is done (an
// undeferred task's dependences, taskwait depend): an empty task with the same dependences in the
// parent's dependence group, waited for.
void wait_deps(Thread& t, TaskCtx* parent, void** depend) {
  detail::Worker* w = detail::current_worker();
  if (w == nullptr || t.team == nullptr || parent->deps == nullptr) return;  // no deferred dependent sibling exists
  std::vector<plait::access> acc;
  collect_deps(depend, acc);
  detail::CountLatch done;
  done.add(1);
  parent->deps->run(std::span<const plait::access>(acc), [&done] { done.count_down(1); });
  detail::group_wait(w, &done, parent->floor);
}

}  // namespace

void taskwait(Thread& t) noexcept {
  TaskCtx* c = current_ctx(t);
  detail::Worker* w = detail::current_worker();
  if (w == nullptr) return;  // nothing deferred exists outside the pools
  detail::group_wait(w, &c->children, c->floor);
}

}  // namespace plait::omp

using namespace plait::omp;
namespace detail = plait::detail;

extern "C" {

void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int /*priority: a hint*/, void* detach) {
  Thread& t = thread_state();
  TaskCtx* parent = current_ctx(t);
  detail::Worker* w = detail::current_worker();
  const bool in_team = t.team != nullptr && t.team->pool != nullptr && w != nullptr;
  bool undeferred = !if_clause || parent->final || !in_team;
  if (!undeferred && w->dq.head > w->dq.split && w->dq.head - w->dq.split >= w->throttle) {
    // The throttle of task_group::run: enough private tasks are queued; run this one now.
    PLAIT_COUNT(w, inlined, 1);
    if ((flags & task_depend) == 0) undeferred = true;
  }
  if (undeferred && (flags & task_depend) != 0 && depend != nullptr) wait_deps(t, parent, depend);
  TaskRec* r = make_task(t, parent, fn, data, cpyfn, arg_size, arg_align, flags);
  if ((flags & task_detach) != 0) {
    r->detach.store(2, std::memory_order_relaxed);  // published by the push below
    // The omp_event_handle_t goes to the creator's event variable and to the first word of the
    // task's argument block, where gcc puts the task's own copy of it.
    *static_cast<void**>(detach) = r;
    if (arg_size >= static_cast<long>(sizeof(void*))) *static_cast<void**>(r->arg) = r;
  }
  if (undeferred) {
    if ((flags & task_detach) == 0) {
      run_body(r);
      return;
    }
    // An undeferred task with a detach clause completes when its event is fulfilled, and its
    // creator may not go on before that: wait for it (running tasks, or sleeping off the pools).
    detail::CountLatch done;
    done.add(1);
    r->waiter = &done;
    run_body(r);
    if (w != nullptr)
      detail::group_wait(w, &done, parent->floor);
    else
      detail::run_until(nullptr, detail::latch_ref{nullptr, &done}, detail::wait_policy::block);
    return;
  }
  if ((flags & task_depend) != 0 && depend != nullptr) {
    std::vector<plait::access> acc;
    collect_deps(depend, acc);
    if (parent->deps == nullptr) parent->deps = new plait::dataflow_group;
    if ((flags & task_detach) == 0) {
      parent->deps->run(std::span<const plait::access>(acc), [r] { run_body(r); });
    } else {
      // A detached task is complete only at its fulfil: the engine holds its successors until
      // complete() releases the node (run_held stores it before the task can start).
      r->held_group = parent->deps;
      parent->deps->run_held(std::span<const plait::access>(acc), [r] { run_body(r); }, &r->held_node);
    }
    return;
  }
  if (PLAIT_UNLIKELY(!detail::push(w, &task_exec, r, detail::slot_kind::detached))) run_body(r);
}

void GOMP_taskwait(void) { taskwait(thread_state()); }

void GOMP_taskwait_depend(void** depend) {
  Thread& t = thread_state();
  wait_deps(t, current_ctx(t), depend);
}

void GOMP_taskyield(void) {}

void GOMP_taskgroup_start(void) {
  Thread& t = thread_state();
  TaskCtx* c = current_ctx(t);
  auto* g = new Taskgroup;
  if (detail::Worker* w = detail::current_worker(); w != nullptr) g->floor = w->dq.head;
  g->prev = c->group;
  c->group = g;
}

void GOMP_taskgroup_end(void) {
  Thread& t = thread_state();
  TaskCtx* c = current_ctx(t);
  Taskgroup* g = c->group;
  if (g == nullptr) fatal("GOMP_taskgroup_end without GOMP_taskgroup_start");
  if (detail::Worker* w = detail::current_worker(); w != nullptr) detail::group_wait(w, &g->pending, g->floor);
  c->group = g->prev;
  delete g;
}

void omp_fulfill_event(void* event) {
  auto* r = static_cast<TaskRec*>(event);
  // acq_rel: as in finish.
  if (r->detach.fetch_sub(1, std::memory_order_acq_rel) == 1) complete(r);
}

}  // extern "C"

namespace plait::omp {
namespace {

// taskloop: `ntasks` tasks over the logical iterations 0..n-1, each a task with its own copy of the
// argument block and its bounds written into the block's first two words.
template <class T>
void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
              unsigned long num_tasks, T start, T step, std::int64_t n) {
  if (flags & task_reduction) fatal("GOMP_taskloop with reductions is not implemented");
  if (n <= 0) return;
  Thread& t = thread_state();
  std::int64_t ntasks;
  std::int64_t strict_grain = 0;  // grainsize(strict: g): every task but the last has exactly g
  if (flags & task_grainsize) {
    const std::int64_t g = num_tasks == 0 ? 1 : static_cast<std::int64_t>(num_tasks);
    if (flags & task_strict) {
      strict_grain = g;
      ntasks = (n + g - 1) / g;
    } else {
      ntasks = n / g;
      if (ntasks < 1) ntasks = 1;
    }
  } else {
    ntasks = num_tasks != 0 ? static_cast<std::int64_t>(num_tasks) : (t.team != nullptr ? t.team->n : 1);
  }
  if (ntasks > n) ntasks = n;
  const bool group = (flags & task_nogroup) == 0;
  if (group) GOMP_taskgroup_start();
  const std::int64_t q = n / ntasks, rem = n % ntasks;
  std::vector<unsigned char> buf(static_cast<std::size_t>(arg_size > 0 ? arg_size : 0) + 64);
  std::int64_t lo = 0;
  for (std::int64_t k = 0; k < ntasks; ++k) {
    std::int64_t hi = lo + q + (k < rem ? 1 : 0);
    if (strict_grain != 0) hi = lo + strict_grain < n ? lo + strict_grain : n;
    // The bounds go into a copy of the caller's block; each task copies that (cpyfn included).
    void* block = data;
    T b[2] = {static_cast<T>(start + static_cast<T>(lo) * step), static_cast<T>(start + static_cast<T>(hi) * step)};
    if (cpyfn == nullptr) {
      std::memcpy(buf.data(), data, static_cast<std::size_t>(arg_size));
      std::memcpy(buf.data(), b, sizeof b);
      block = buf.data();
      GOMP_task(fn, block, nullptr, arg_size, arg_align, (flags & task_if) != 0, flags & (task_final | task_untied), nullptr, 0, nullptr);
    } else {
      // cpyfn copies from the caller's block; the bounds are written into the task's own copy by
      // a wrapper: run the copy, then patch.
      struct Patch {
        void (*cpy)(void*, void*);
        T b[2];
      };
      static thread_local Patch patch;
      patch.cpy = cpyfn;
      patch.b[0] = b[0];
      patch.b[1] = b[1];
      GOMP_task(fn, data,
                [](void* dst, void* src) {
                  patch.cpy(dst, src);
                  std::memcpy(dst, patch.b, sizeof patch.b);
                },
                arg_size, arg_align, (flags & task_if) != 0, flags & (task_final | task_untied), nullptr, 0, nullptr);
    }
    lo = hi;
  }
  if (group) GOMP_taskgroup_end();
}

}  // namespace
}  // namespace plait::omp

extern "C" {

void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                   unsigned flags, unsigned long num_tasks, int /*priority*/, long start, long end, long step) {
  std::int64_t n;
  if (step > 0) n = end > start ? (end - start + step - 1) / step : 0;
  else n = start > end ? (start - end - step - 1) / -step : 0;
  plait::omp::taskloop<long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, step, n);
}

void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                       unsigned flags, unsigned long num_tasks, int /*priority*/, unsigned long long start,
                       unsigned long long end, unsigned long long step) {
  std::int64_t n;
  if (flags & task_up) n = end > start ? static_cast<std::int64_t>((end - start + step - 1) / step) : 0;
  else n = start > end ? static_cast<std::int64_t>((start - end - step - 1) / -step) : 0;
  plait::omp::taskloop<unsigned long long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, step, n);
}

}  // extern "C"
