// Explicit tasks: GOMP_task, taskwait, taskgroup, dependences, detach, taskloop.
//
// A task is a record from the worker's task-record allocator (no malloc per task): its context
// (TaskCtx), the function and the argument block copied in (cpyfn or memcpy). A deferred task is
// an ordinary detached slot on the creating worker's deque, run by that worker or a thief.
//
// Counting. Two counts of the parent follow a task (OwnedCount, omp_internal.hpp): the parent's
// `kids` until the task is complete (taskwait), and the parent's `sub` until the task's own
// subtree is done (the record's lifetime, and the barriers: a member's barrier waits for its
// implicit task's `sub`). A task that runs and finishes on its parent's thread — every task when
// nothing is stolen — changes both with plain arithmetic: the fast path has no atomic RMW, and no
// count shared by the team (the barrier's count is the members' own subtrees). A taskgroup's
// `pending` is an RMW per task of the group.
//
// A task's life, on the thread that runs its body (its owner):
//   start     owner = this thread (its maker's until then); its `sub` is 1 (itself, not complete)
//   body end  complete (below) unless a detach event is outstanding; takes its own 1 off `sub`;
//             then `sub` settled: subtree done now; otherwise flush: the last of its children
//             to finish its subtree does it (subtree_done, on whatever thread)
//   complete  the parent's `kids` counted down, the taskgroup's `pending`, the successors of a
//             detached dependent task released
//   subtree done  record freed, the parent's `sub` counted down; if that completes an explicit
//             parent's flushed `sub`, the parent's subtree is done too (a loop up the tree)
//
// The common record. A task with no clause but shared/firstprivate data of a few words (GOMP_task's
// fast path: task_plain) has a record of 96 bytes with its argument block (at most 32 bytes)
// right after it, in a block of the allocator's 256-byte class (`common_class`: one class for
// every common record, so that neither its class nor its size is computed, stored or read; only
// the lines written are touched, two for a block of up to 32 bytes). It is written with a dozen
// stores — four when it comes from the thread's ready records (below) — and ends without reading
// anything but its own counts and its parent's. Everything
// else a task may need (detach, taskgroup, a waiting creator, a held dependence node, a record of
// another size or alignment, or from the heap) is the record's rare part, placed after the
// argument block when task_general makes the record; `rare` is null otherwise. A task with a rare
// part, with children still running at its end, or with a dependence group ends through
// end_body_general.
//
// Who frees a record. A common record came from the common class of a worker of the pool of the
// team that runs it, and only that pool's workers run its body: the worker that ends it frees it
// into its thread's ready records or its own cache. The only thread outside the pool that can end a subtree is one that fulfils
// a detach event; the chain of subtree_done it starts carries the pool from the detached task's
// rare part (every record of the chain belongs to the same team's pool).
//
// Waiting. taskwait (wait_owned) pops the thread's own private slots above the task's floor and
// runs a common record in place (run_common_in_wait): its parent, when it is the waiting task, is
// known, and its end is one add to the waiter's counts (TaskCtx::add_locals) and a free.
//
// Dependences go through Plait's data-flow engine (plait::dataflow_group, one per parent task,
// made at its first dependent child): OpenMP orders only sibling tasks, which is the engine's
// model. A task that made dependent children waits for them when its body ends (a barrier's
// subtree wait covers those of implicit tasks): the group must outlive its tasks. An explicit task
// holds 1 more in its `sub` while it has a group, which sends its end the general way, where the
// wait is.
//
// Priorities. A task made with priority(p), p clamped to max-task-priority-var and above 0, goes to
// its parent's priority queue for the taskgroup it is made in (PrioQueue: a heap by priority, then
// creation order, under a mutex) instead of the deque, and a ticket goes to the deque in its place: a detached slot whose
// exec takes the queue's highest-priority task and runs it. Every queued task has exactly one
// ticket, so each runs once; whoever runs a ticket — its maker at a wait, or a thief — runs the
// best task of that parent, so among a parent's ready children the higher priorities run first
// both on the owner's thread and for what thieves take. Once a parent has queued one child, all
// its later children are queued too (TaskCtx::mode_prio: priority 0 among them, so they come after the
// others), as libgomp orders a task's children. A dependent task with a priority enters the queue
// when its dependences are met (the data-flow engine runs a closure that queues it and pushes its
// ticket; the node is held until the task completes, as for detach). One queue per taskgroup:
// a taskgroup's end runs only the slots above its floor, and a ticket there that took an older
// child of the same parent from a shared queue would leave a task of the group with its ticket
// below the floor, out of the wait's reach (a team of one waited forever). Programs that use no
// priority pay nothing: GOMP_task's fast path tests the priority flag in the same mask as the
// others, and the parent's mode in the same load as `final`. Order is kept per parent, not
// across a team (libgomp's team-wide queue at barriers is not modelled: a thread draining its own
// deque runs the newest ticket's parent first).
//
// Not honoured, as the standard allows: untied (every task is tied to the thread that starts it,
// which is what Plait's work stealing does anyway), mergeable (never merged).
#include "kmp_internal.hpp"
#include "omp_internal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

// task_general_at takes GOMP_task's stack arguments by address (see GOMP_task): gcc must not
// turn them back into values (an .isra clone).
#if defined(__clang__)
#define PLAIT_OMP_NOIPA __attribute__((noinline))
#else
#define PLAIT_OMP_NOIPA __attribute__((noipa))
#endif

namespace plait::omp {

void ompt_push_on_stack(const TaskCtx* c, ompt::data_t* d);  // (OMPT: see ompt::task_data)
void ompt_pop_on_stack();

namespace {

// The rare part of a record (see the top of the file).
struct RareInfo {
  bool has_detach = false;
  std::atomic<int> detach{2};  // with a detach clause: body and omp_fulfill_event; the second completes
  Taskgroup* group = nullptr;  // the taskgroup whose set this task belongs to (counted), or null
  detail::CountLatch* waiter = nullptr;  // an undeferred task's creator, waiting for completion
  // A detached task with dependences: its node in the parent's dependence group, released at
  // completion (the engine then releases the successors: at the fulfil, not at the body's end).
  plait::dataflow_group* held_group = nullptr;
  detail::dep_node* held_node = nullptr;
  detail::Pool* home = nullptr;  // the pool whose allocator made the record (null: operator new)
  std::uint32_t bytes = 0;       // the record's size and alignment, for the allocator
  std::uint32_t align = 0;
  std::uint8_t cls = no_class;   // the allocator's size class; no_class: from operator new
  static constexpr std::uint8_t no_class = 0xff;
  void* arg = nullptr;           // the argument block (a common record's follows the record)
  ompt::data_t ompt_task{};      // OMPT: the tool's data of the task (with a tool, every record has a rare part)
  std::uint8_t ompt_detach = 0;  // OMPT: a detachable task's events told so far (ompt::detach_body_end)
};

struct TaskRec {
  // Written by make_task / make_task_general through the context's constructor and field by field.
  TaskRec() noexcept {}  // NOLINT: deliberately leaves the fields uninitialised

  union {
    TaskCtx ctx;  // first: a TaskCtx of an explicit task is its record (subtree_done)
  };
  void (*fn)(void*);
  Team* team;       // null: a task outside every region (run at once)
  RareInfo* rare;   // null: a common record (see the top of the file)
#ifndef NDEBUG
  bool started;     // debug builds: the body has started (a task runs once)
#endif
  // The argument block is right after a common record (aligned to 8: a common record has no
  // stricter alignment); a record with a rare part names its own.
};
static_assert(offsetof(TaskRec, ctx) == 0 && std::is_trivially_destructible_v<TaskCtx>);
// Every common record is a block of one size class, whatever its argument block: the 256-byte
// class, which holds GOMP_task's fast-path blocks of up to 32 bytes. Its class and size need not be
// computed, stored or read; only the lines written are touched (two for fib's 16-byte block).
inline constexpr unsigned common_class = 2;
inline constexpr std::size_t common_bytes = detail::alloc_block_size(common_class);
static_assert(sizeof(TaskRec) + 32 <= common_bytes && common_bytes == 256 && alignof(TaskRec) == 8);

PLAIT_INLINE void* arg_of(TaskRec* r) noexcept { return r->rare == nullptr ? static_cast<void*>(r + 1) : r->rare->arg; }

// The task's taskgroup (counted in its `pending`), or null.
PLAIT_INLINE Taskgroup* group_of(const TaskRec* r) noexcept { return r->rare != nullptr ? r->rare->group : nullptr; }

// ---- Priorities (see the top of the file) ----

}  // namespace

struct PrioQueue {
  struct Item {
    int prio;
    std::uint64_t seq;
    TaskRec* r;
  };
  std::mutex mu;
  std::vector<Item> heap;  // a max-heap: the highest priority first, then the oldest
  std::uint64_t next_seq = 0;
  static bool before(const Item& a, const Item& b) noexcept {  // heap order: a comes after b
    return a.prio != b.prio ? a.prio < b.prio : a.seq > b.seq;
  }
  void push(TaskRec* r, int prio) {
    std::lock_guard<std::mutex> lk(mu);
    heap.push_back({prio, next_seq++, r});
    std::push_heap(heap.begin(), heap.end(), &before);
  }
  TaskRec* pop() noexcept {
    std::lock_guard<std::mutex> lk(mu);
    PLAIT_ASSERT(!heap.empty());  // one ticket per queued task
    std::pop_heap(heap.begin(), heap.end(), &before);
    TaskRec* r = heap.back().r;
    heap.pop_back();
    return r;
  }
};

void release_child_sched(TaskCtx& c) noexcept {
  ChildSched* cs = c.sched;
  if (cs->deps != nullptr) {
    cs->deps->wait();
    delete cs->deps;
  }
  for (auto& [g, q] : cs->prio) {
    PLAIT_ASSERT(q->heap.empty());
    delete q;
  }
  delete cs;
  c.sched = nullptr;
  c.mode &= static_cast<std::uint8_t>(~TaskCtx::mode_prio);
}

void end_taskgroup_queue(TaskCtx& c, const Taskgroup* g) noexcept {
  // Its tasks are complete, so each was taken by a ticket: no ticket of the queue is left.
  if (ChildSched* cs = c.sched; cs != nullptr && !cs->prio.empty() && cs->prio.back().first == g) {
    PLAIT_ASSERT(cs->prio.back().second->heap.empty());
    delete cs->prio.back().second;
    cs->prio.pop_back();
  }
}

namespace {

// The parent's ChildSched, made on first use by the parent's thread. An explicit parent's `sub`
// holds 1 more while it has one, so that its body's end takes the general way (end_body_general),
// which waits for the dependence group; the object itself goes with the record (free_record).
ChildSched& child_sched(TaskCtx* parent) {
  if (parent->sched == nullptr) {
    parent->sched = new ChildSched;
    if (parent->is_explicit) ++parent->sub.local;
  }
  return *parent->sched;
}

// The priority a task made with `flags` and `priority` is queued with, or -1: not queued (its
// parent is not in priority mode and its priority, clamped to max-task-priority-var, is 0).
PLAIT_INLINE int queued_priority(const TaskCtx* parent, unsigned flags, int priority) noexcept {
  int p = 0;
  if ((flags & task_priority) != 0 && priority > 0) p = std::min(priority, global().max_task_priority);
  return p > 0 || (parent->mode & TaskCtx::mode_prio) != 0 ? p : -1;
}

// The parent's queue for its innermost taskgroup, made (and the parent put in priority mode) on
// first use; the parent's thread. (Taskgroups nest: an inner one's queue is pushed after the outer
// one's and goes at its end, end_taskgroup_queue.)
PrioQueue* prio_queue(TaskCtx* parent) {
  ChildSched& cs = child_sched(parent);
  if (cs.prio.empty() || cs.prio.back().first != parent->group) cs.prio.emplace_back(parent->group, new PrioQueue);
  parent->mode |= TaskCtx::mode_prio;
  return cs.prio.back().second;
}

void ticket_exec(void* q, detail::Worker* w) noexcept;

// r goes into queue q with priority p, and a ticket onto w's deque; a full deque runs the ticket
// at once (the queue's best task, not necessarily r).
void queue_task(PrioQueue* q, TaskRec* r, int p, detail::Worker* w) {
  q->push(r, p);
  if (PLAIT_UNLIKELY(!detail::push(w, &ticket_exec, q, detail::slot_kind::detached))) ticket_exec(q, w);
}

// The context of the code outside every region (the initial task) on this thread.
thread_local TaskCtx initial_ctx;

PLAIT_INLINE TaskCtx* current_ctx(Thread& t) {
  if (PLAIT_UNLIKELY(t.task == nullptr)) {
    initial_ctx.owner = &t;
    t.task = &initial_ctx;
  }
  return t.task;
}

// Debug builds: a freed record says so (run_body and the counts assert it is live).
PLAIT_INLINE void mark_freed(TaskRec* r) noexcept {
#ifndef NDEBUG
  r->ctx.is_explicit = false;
  r->fn = nullptr;
#else
  (void)r;
#endif
}
PLAIT_INLINE void assert_live(const TaskRec* r) noexcept {
  PLAIT_ASSERT(r->ctx.is_explicit && r->fn != nullptr);
  (void)r;
}

// Ready records: a few common records that this thread freed, kept with the fields every common
// record starts with still in place — `kids.remote` and `sub` as a new record's (bias; 1, not
// flushed, bias), no taskgroup, no dependence group, no rare part, explicit and not final — so that
// the next record made on this thread writes only its parent, function, team and the list's link
// word. A thread's ready records belong to the pool of its worker: a pool worker's thread never
// changes pools, and the thread that adopts a pool's worker 0 for a region gives them back to that
// worker when the region ends (give_back_ready_records).
//
// The list is linked through each record's `kids.flushed` and `kids.local` (one 8-byte word,
// which a new record writes anyway), and each record keeps its depth in the list in `floor`
// (written when a body starts): a free reads the depth of the head instead of keeping a count,
// and a new record takes the head with no count to update. A ready record's `owner` is the
// thread whose list holds it (it ran there), which every record made on that thread has when it
// is made.
// (ReadyRecords, in omp_internal.hpp: beside the thread's state.)
static_assert(offsetof(KidsCount, flushed) % 8 == 0 && offsetof(KidsCount, local) == offsetof(KidsCount, flushed) + 4);
PLAIT_INLINE TaskRec* ready_next(const TaskRec* r) noexcept {
  TaskRec* n;
  std::memcpy(&n, &r->ctx.kids.flushed, sizeof n);
  return n;
}
PLAIT_INLINE void set_ready_next(TaskRec* r, TaskRec* n) noexcept { std::memcpy(&r->ctx.kids.flushed, &n, sizeof n); }
inline constexpr std::uint32_t ready_max = 32;

// Whether r holds a new record's fields (see ReadyRecords), all but the per-task ones.
[[maybe_unused]] PLAIT_INLINE bool holds_ready_fields(const TaskRec* r) noexcept {
  const TaskCtx& c = r->ctx;
  return c.owner == &tls.thread && c.sub.local == 1 && !c.sub.flushed && c.sub.remote.count() == OwnedCount::bias &&
         c.kids.remote.count() == OwnedCount::bias && c.group == nullptr && c.sched == nullptr && c.is_explicit &&
         c.plain_children() && r->rare == nullptr;
}

// Gives back the memory of a common record (no rare part) on w, a worker of the record's pool,
// whose end took the fast way: `sub` is as new (its own 1 alone, never flushed; nothing counted
// it down from another thread, or `local` would still count that child). `kids.remote` is new too
// unless a child completed on another thread while its subtree ended on ours (a thief finished its
// body, this thread its last descendant): then the record goes back to the allocator. (A common
// record is never final: task_general gives a final task a rare part.) acquire (on
// `kids.remote`): every count-down of it happened before, through the chain that ended this
// record's subtree here.
PLAIT_INLINE void free_common(TaskRec* r, detail::Worker* w) noexcept {
  assert_live(r);
  PLAIT_ASSERT(r->rare == nullptr && w != nullptr && w != &detail::no_worker);
  PLAIT_ASSERT(r->ctx.sub.local == 1 && !r->ctx.sub.flushed && r->ctx.sub.remote.count() == OwnedCount::bias);
  ReadyRecords& ready = tls.ready;
  TaskRec* const head = static_cast<TaskRec*>(ready.head);
  const std::uint32_t depth = head != nullptr ? head->ctx.floor + 1 : 1;
  // The whole word: a count of bias with a waiter's mark on it (none is expected on a finished
  // task's count) sends the record to the allocator, the safe way.
  if (PLAIT_LIKELY(depth <= ready_max && r->ctx.kids.remote.word_is_acquire(OwnedCount::bias))) {
    PLAIT_ASSERT(holds_ready_fields(r));
#ifndef NDEBUG
    r->fn = nullptr;  // freed (assert_live); the ready fields stay
#endif
    set_ready_next(r, head);
    r->ctx.floor = depth;
    ready.head = r;
    return;
  }
  mark_freed(r);
  detail::task_free_class(w, r, common_class);
}

// Gives back r's memory from any thread: to the calling worker's cache when it belongs to the
// record's pool (`home` for a common record: see the top of the file), else to the pool's depot
// or the heap.
PLAIT_NOINLINE void free_record(TaskRec* r, detail::Pool* home) noexcept {
  assert_live(r);
  // Its children are all done: its priority queue's tickets have all been taken.
  if (PLAIT_UNLIKELY(r->ctx.sched != nullptr)) release_child_sched(r->ctx);
  unsigned cls = common_class;
  std::size_t bytes = common_bytes, align = alignof(TaskRec);
  if (const RareInfo* x = r->rare; x != nullptr) {
    home = x->home;
    bytes = x->bytes;
    align = x->align;
    cls = x->cls;
  }
  mark_freed(r);
  if (PLAIT_UNLIKELY(cls == RareInfo::no_class)) {
    ::operator delete(static_cast<void*>(r), std::align_val_t{align});
    return;
  }
  if (detail::Worker* w = detail::current_worker(); PLAIT_LIKELY(w != nullptr && w->pool == home))
    detail::task_free_class(w, r, cls);
  else
    detail::task_free_foreign(home, r, bytes, align);  // a fulfil off the pool finished the subtree
}

// r's subtree is done (r complete, every descendant complete): free r, count down the parent's
// `sub`, and go on up while that completes an explicit parent's flushed count. `home`: the pool
// of the records of the chain.
void subtree_done(TaskRec* r, const Thread& me, detail::Pool* home) noexcept {
  for (;;) {
    TaskCtx* parent = r->ctx.parent;
    free_record(r, home);
    // Read before the count-down: once it completes an implicit task's flushed count, the barrier
    // waiting for it may return and the context (on that member's stack) be gone.
    const bool up = parent->is_explicit;
    if (!parent->sub.finish_one(parent->owner == &me)) return;
    // An implicit task's `sub` is flushed only by its barrier's wait, which the latch wakes.
    if (!up) return;
    r = reinterpret_cast<TaskRec*>(parent);
  }
}

// The task is complete (its body ran and, with detach, its event was fulfilled).
void complete(TaskRec* r, const Thread& me) noexcept {
  TaskCtx* parent = r->ctx.parent;
  const RareInfo* x = r->rare;
  Taskgroup* g = x != nullptr ? x->group : nullptr;
  detail::CountLatch* waiter = x != nullptr ? x->waiter : nullptr;
  if (x != nullptr && x->held_node != nullptr) x->held_group->release_hold(x->held_node);
  parent->kids.finish_one(parent->owner == &me);  // a flushed count reaching zero wakes its waiter
  if (g != nullptr) g->pending.count_down(1);      // the group's last access by us
  if (waiter != nullptr) waiter->count_down(1);
}

// A detached task's second half (body end or fulfil, whichever comes later).
void complete_detached(TaskRec* r, const Thread& me) noexcept {
  complete(r, me);
  // The body's end flushed `sub` with the task's own 1 in it (end_body).
  if (r->ctx.sub.remote.count_down(1)) subtree_done(r, me, r->rare->home);
}

// complete_detached on a worker of the task's pool, for a fulfil that came from elsewhere.
void complete_detached_handed(void* p) noexcept { complete_detached(static_cast<TaskRec*>(p), thread_state()); }

// A fulfil made the detached task r complete. Releasing a held dependence node launches the
// successors as children of the dependence group, and dataflow_group::release_hold must be called
// on a worker of the group's pool: a fulfil from any other thread (an I/O callback, a thread of
// the program's own) hands the completion to the pool (detail::hand_completion), whose next worker
// to look for work runs it — as the engine's own events do (dataflow_group::detached_done). The
// region cannot end before that: its barrier waits for r. Anything else completes here.
void fulfilled(TaskRec* r) noexcept {
  if (r->rare->held_node != nullptr) {
    detail::Pool* const p = r->team->pool;  // (a dependent task is deferred: only in a team on a pool)
    PLAIT_ASSERT(p != nullptr);
    if (const detail::Worker* w = detail::current_worker(); w == nullptr || w->pool != p) {
      try {
        detail::hand_completion(p, &complete_detached_handed, r);
      } catch (...) {
        fatal("omp_fulfill_event: out of memory handing the completion to the team's threads");
      }
      return;
    }
  }
  complete_detached(r, thread_state());
}

// The body of r ended on its owner's thread `me` (worker w, or null): the general case (detach, a
// taskgroup, a waiting creator, a held dependence node, or children still running).
PLAIT_NOINLINE void end_body_general(TaskRec* r, const Thread& me, detail::Worker* w) noexcept {
  if (ChildSched* cs = r->ctx.sched; PLAIT_UNLIKELY(cs != nullptr)) {
    if (cs->deps != nullptr) {
      cs->deps->wait();  // the dependent children (see the top of the file)
      delete cs->deps;
      cs->deps = nullptr;
    }
    --r->ctx.sub.local;  // the hold of the ChildSched (child_sched); it is freed with the record
  }
  RareInfo* const x = r->rare;
  detail::Pool* const home = w != nullptr ? w->pool : nullptr;  // (a rare part names its own)
  if (PLAIT_LIKELY(x == nullptr || !x->has_detach)) {
    complete(r, me);
    --r->ctx.sub.local;  // complete: its own 1
    if (r->ctx.sub.settled() || r->ctx.sub.flush() == 0) subtree_done(r, me, home);
    return;
  }
  r->ctx.sub.flush();  // its own 1 stays until the event too (complete_detached)
  // acq_rel: body and event are two halves; the second completes the task.
  if (x->detach.fetch_sub(1, std::memory_order_acq_rel) == 1) complete_detached(r, me);
}

// The body of r ended on its owner's thread `me` (worker w, or null). The common case inline: a
// common record whose children (if any) are all done is complete and its subtree done at once —
// with no RMW when its parent runs on this thread. `sub.local == 1` says that: while the owner
// keeps the count it is the count plus the children that finished elsewhere, and the task's own 1
// is in it, so 1 means nothing else (OwnedCount::settled).
PLAIT_INLINE void end_body(TaskRec* r, const Thread& me, detail::Worker* w) noexcept {
  if (PLAIT_UNLIKELY(r->rare != nullptr) || PLAIT_UNLIKELY(r->ctx.sub.local != 1)) {
    end_body_general(r, me, w);
    return;
  }
  TaskCtx* parent = r->ctx.parent;
  const bool mine = parent->owner == &me;
  parent->kids.finish_one(mine);
  free_common(r, w);
  // (is_explicit read first: see subtree_done.)
  if (const bool up = parent->is_explicit; parent->sub.finish_one(mine) && up)
    subtree_done(reinterpret_cast<TaskRec*>(parent), me, w->pool);
}

// Whether r's taskgroup or region was cancelled.
PLAIT_INLINE bool canceled_slow(const TaskRec* r) noexcept {
  // relaxed: cancellation flags; a task that starts just before the cancel runs, as allowed.
  if (group_canceled(group_of(r))) return true;
  return r->team != nullptr && r->team->canceled.load(std::memory_order_relaxed);
}

void task_exec(void* p, detail::Worker*) noexcept;

// The body of a record with a rare part (run_body_as_member): cancellation as canceled_slow, and the
// OMPT hooks when a tool is attached (with one, every record has a rare part). `prior`: the task
// the thread ran before.
PLAIT_NOINLINE void run_rare_body(TaskRec* r, TaskCtx* prior) noexcept {
  RareInfo* const x = r->rare;
  const bool canceled = canceled_slow(r);
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::data_t* const before = ompt::task_data(prior);
    if (canceled) {  // discarded: its taskgroup or region was cancelled
      ompt::cancel_task(&x->ompt_task, ompt::cancel_discarded_task |
                                           (group_canceled(x->group) ? ompt::cancel_taskgroup : ompt::cancel_parallel));
      ompt::task_schedule(&x->ompt_task, ompt::status_cancel, before);
      return;
    }
    ompt::task_schedule(before, ompt::status_switch, &x->ompt_task);
    r->fn(x->arg);
    if (x->has_detach)
      ompt::detach_body_end(&x->ompt_task, &x->ompt_detach, before);
    else
      ompt::task_schedule(&x->ompt_task, ompt::status_complete, before);
    return;
  }
  if (PLAIT_LIKELY(!canceled)) r->fn(x->arg);
}

// Runs r's body on thread t (worker w, or null) and ends it (end_body).
PLAIT_INLINE void run_body_as_member(TaskRec* r, Thread& t, detail::Worker* w) noexcept {
  assert_live(r);
  PLAIT_ASSERT(!r->started && r->ctx.sub.local >= 1);  // runs once
#ifndef NDEBUG
  r->started = true;
#endif
  TaskCtx* saved = t.task;
  t.task = &r->ctx;
  r->ctx.owner = &t;
  r->ctx.floor = w != nullptr ? w->dq.head : 0;
  if (PLAIT_LIKELY(r->rare == nullptr)) {
    // relaxed: as in canceled_slow (a common record has no taskgroup).
    if (PLAIT_LIKELY(r->team == nullptr || !r->team->canceled.load(std::memory_order_relaxed))) r->fn(r + 1);
  } else {
    run_rare_body(r, saved);
  }
  t.task = saved;
  end_body(r, t, w);
}

// run_body_as_member for wait_owned's loop: r is a common record (no rare part) of t's team,
// popped at head h by t, whose running task `c` waits (see wait_owned). A child of c that leaves
// nothing behind takes itself off c's counts with one add (TaskCtx::add_locals): they are not
// flushed while the loop runs (wait_owned flushes only after it).
PLAIT_INLINE void run_common_in_wait(TaskRec* r, Thread& t, detail::Worker* w, TaskCtx* c, std::uint32_t h) noexcept {
  assert_live(r);
  PLAIT_ASSERT(r->rare == nullptr && r->team == t.team && t.team != nullptr && t.task == c && h == w->dq.head);
  PLAIT_ASSERT(!r->started && r->ctx.sub.local >= 1);  // runs once
#ifndef NDEBUG
  r->started = true;
#endif
  // Made on this thread (its slot is ours), so its owner is this thread already (see ReadyRecords).
  PLAIT_ASSERT(r->ctx.owner == &t);
  t.task = &r->ctx;
  r->ctx.floor = h;
  // relaxed: as in canceled_slow (a common record has no taskgroup).
  if (PLAIT_LIKELY(!r->team->canceled.load(std::memory_order_relaxed))) r->fn(r + 1);
  t.task = c;
  if (PLAIT_LIKELY(r->ctx.sub.local == 1 && r->ctx.parent == c)) {
    PLAIT_ASSERT(!c->kids.flushed && !c->sub.flushed && c->owner == &t);
    c->add_locals(-1);
    free_common(r, w);
    return;
  }
  end_body(r, t, w);
}

// The thread that runs a task is a member of the task's team. A worker of the team's pool can find
// the task while it is not inside the region — it steals from its idle loop before it has read its
// implicit task from its mailbox — so such a worker runs the task as the member it is about to be
// (thread i of a team is the pool's worker i): team, thread number, levels and ICVs for the task's
// length, then its own state again. Without it, omp_get_num_threads() in that task said 1.
PLAIT_NOINLINE void run_body_adopting(TaskRec* r, Thread& t, detail::Worker* w) noexcept {
  // (r->team is set: a task outside every region runs at once on the thread that made it.)
  PLAIT_ASSERT(r->team != nullptr);
  const Thread outside = t;
  enter_team_for_task(t, *r->team, w);
  run_body_as_member(r, t, w);
  t = outside;
}

// Runs r's body and completes it (or leaves the completion to omp_fulfill_event).
PLAIT_INLINE void run_body(TaskRec* r, Thread& t, detail::Worker* w) noexcept {
  // (A task whose team is not the thread's: only a steal or the data-flow engine brings one.)
  if (PLAIT_UNLIKELY(r->team != t.team)) {
    run_body_adopting(r, t, w);
    return;
  }
  run_body_as_member(r, t, w);
}
void run_body(TaskRec* r) noexcept { run_body(r, thread_state(), detail::current_worker()); }

void task_exec(void* p, detail::Worker*) noexcept { run_body(static_cast<TaskRec*>(p)); }

// A ticket of a priority queue: runs the queue's best task (see the top of the file).
void ticket_exec(void* q, detail::Worker* w) noexcept { run_body(static_cast<PrioQueue*>(q)->pop(), thread_state(), w); }

// Copies an argument block of n <= 32 bytes inline, without a call: two overlapping moves of the
// largest power of two that fits (gcc's blocks are a few pointers and scalars).
PLAIT_INLINE void copy_small_args(void* dst, const void* src, std::size_t n) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (n >= 16) {
    __builtin_memcpy(d, s, 16);
    __builtin_memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    __builtin_memcpy(d, s, 8);
    __builtin_memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    __builtin_memcpy(d, s, 4);
    __builtin_memcpy(d + n - 4, s + n - 4, 4);
  } else if (n != 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

// A ready record of this thread (see ReadyRecords) as a new child of `parent`: the per-task fields
// only. Null when the thread keeps none.
PLAIT_INLINE TaskRec* take_ready_record(TaskCtx* parent) noexcept {
  ReadyRecords& ready = tls.ready;
  auto* r = static_cast<TaskRec*>(ready.head);
  if (PLAIT_UNLIKELY(r == nullptr)) return nullptr;
  ready.head = ready_next(r);
  PLAIT_ASSERT(holds_ready_fields(r));
  r->ctx.kids.local = 0;
  r->ctx.kids.flushed = 0;
  r->ctx.parent = parent;
  return r;
}

// A new common record in block b (of the common class), a child of `parent` made by thread t.
PLAIT_INLINE TaskRec* new_common_record(void* b, Thread& t, TaskCtx* parent) noexcept {
  auto* r = ::new (b) TaskRec;
  ::new (&r->ctx) TaskCtx(TaskCtx::explicit_task{}, parent, nullptr, false);
  r->ctx.owner = &t;  // (see ReadyRecords)
  r->rare = nullptr;
  return r;
}

// Whether a common record of `parent` may be pushed at head h of w by GOMP_task's fast path (see
// task_plain), and that push: the record counted in its parent's counts first.
PLAIT_INLINE bool fast_push_ok(const TaskCtx* parent, detail::Worker* w, std::uint32_t h) noexcept {
  return parent->plain_children() && parent->group == nullptr && h - w->dq.split < w->throttle && w->dq.push_fast_ok(h);
}
PLAIT_INLINE void fast_push(detail::Worker* w, std::uint32_t h, TaskRec* r) noexcept {
  // push's fast path (detail::push) at the head read by the caller.
  detail::write_private(w, h, &task_exec,
                        reinterpret_cast<std::uintptr_t>(r) | static_cast<std::uintptr_t>(detail::slot_kind::detached));
}

// A common record (no rare part) for a child of `parent` with an argument block of arg_size <= 32
// bytes (align <= 8), from w's allocator, counted. Null when the allocator's cache of its class is
// empty (the caller then goes the general way, which refills it).
PLAIT_INLINE TaskRec* make_task(Thread& t, detail::Worker* w, TaskCtx* parent, void (*fn)(void*), void* data,
                                std::size_t arg_size) noexcept {
  PLAIT_ASSERT(arg_size <= 32);
  TaskRec* r = take_ready_record(parent);
  if (PLAIT_UNLIKELY(r == nullptr)) {
    detail::AllocCache& k = w->acache[common_class];
    detail::FreeBlock* b = k.head;
    if (PLAIT_UNLIKELY(b == nullptr)) return nullptr;
    PLAIT_ALLOC_UNPOISON(b, common_bytes);
    k.head = b->next;
    --k.n;
    r = new_common_record(b, t, parent);
  }
  r->fn = fn;
  r->team = t.team;
#ifndef NDEBUG
  r->started = false;
#endif
  copy_small_args(r + 1, data, arg_size);
  // Counted before anyone can run (and so complete) it. The parent's counts are its thread's: we
  // are that thread (tasks are created by their parent's body).
  PLAIT_ASSERT(parent->owner == &t && !parent->kids.flushed && !parent->sub.flushed);
  parent->add_locals(1);
  return r;
}

// Any record: for a child of `parent`, with the argument block copied in (cpyfn or memcpy),
// counted everywhere, with a rare part when a taskgroup, `flags` or the size ask for one, or
// `need_rare`. `w`: the calling thread's worker (null off the pools).
TaskRec* make_task_general(Thread& t, detail::Worker* w, TaskCtx* parent, void (*fn)(void*), void* data,
                           void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
                           bool need_rare) {
  std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
  if (align < alignof(TaskRec)) align = alignof(TaskRec);
  const std::size_t head = (sizeof(TaskRec) + align - 1) & ~(align - 1);  // align: a power of two
  const std::size_t args = arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0;
  const std::size_t rare_at = (head + args + alignof(RareInfo) - 1) & ~(alignof(RareInfo) - 1);
  // A common record is a block of the common class from a worker's cache (it goes back to the
  // cache of the worker that ends it). Any other has a rare part saying where its memory came
  // from: a size class of its pool, or the heap (a record made off the pools, outside every
  // region, or too large).
  const bool fits_common = w != nullptr && head + args <= common_bytes && align == alignof(TaskRec);
  // (A final task's record has a rare part too: a common record is never final, which the ready
  // records rely on.)
  const bool final = parent->final || (flags & task_final) != 0;
  need_rare = need_rare || !fits_common || parent->group != nullptr || (flags & task_detach) != 0 || final ||
              ompt::enabled;
  const std::size_t bytes = need_rare ? rare_at + sizeof(RareInfo) : common_bytes;
  const bool in_class = w != nullptr && detail::alloc_in_class(bytes, align);
  PLAIT_ASSERT(need_rare || (in_class && detail::alloc_class_of(bytes) == common_class));
  void* mem = in_class ? detail::task_alloc_bytes(w, bytes, align) : ::operator new(bytes, std::align_val_t{align});
  auto* r = ::new (mem) TaskRec;
  ::new (&r->ctx) TaskCtx(TaskCtx::explicit_task{}, parent, parent->group, final);
  r->ctx.owner = &t;  // made here (see ReadyRecords); whoever runs it sets it again
#ifndef NDEBUG
  r->started = false;
#endif
  void* const arg = static_cast<char*>(mem) + head;
  PLAIT_ASSERT(need_rare || arg == r + 1);
  r->fn = fn;
  r->team = t.team;
  r->rare = nullptr;
  if (need_rare) {
    auto* x = ::new (static_cast<char*>(mem) + rare_at) RareInfo;
    x->group = parent->group;
    x->home = in_class ? w->pool : nullptr;
    x->bytes = static_cast<std::uint32_t>(bytes);
    x->align = static_cast<std::uint32_t>(align);
    x->cls = in_class ? static_cast<std::uint8_t>(detail::alloc_class_of(bytes)) : RareInfo::no_class;
    x->arg = arg;
    r->rare = x;
  }
  if (args > 0) {
    if (cpyfn != nullptr)
      cpyfn(arg, data);
    else
      std::memcpy(arg, data, args);
  }
  // Counted as in make_task.
  PLAIT_ASSERT(parent->owner == &t);
  parent->add_locals(1);
  if (parent->group != nullptr) parent->group->pending.add(1);
  if (PLAIT_UNLIKELY(ompt::enabled))
    ompt::task_create(ompt::task_data(parent), &r->rare->ompt_task,
                      ompt::task_explicit | ((flags & task_untied) != 0 ? ompt::task_untied : 0) |
                          (final ? ompt::task_final : 0),
                      (flags & task_depend) != 0, nullptr);
  return r;
}

// The rest, out of line: the owner's count is not settled by what ran here.
template <class Count>
PLAIT_NOINLINE void wait_owned_rest(detail::Worker* w, Count& c) noexcept {
  if (c.flush() != 0) detail::run_until(w, detail::latch_ref{nullptr, &c.remote}, detail::HelpWait{});
  c.rearm();
}

// The owner (t, whose current task holds `c`) waits, running tasks, until `c` is zero: its own
// queued tasks above `floor` first (without RMWs when they are all it waits for), then the rest,
// helping other workers.
//
// The owner's own slots above `floor` hold its children and their descendants. While the newest
// is a task of ours and private, the loop pops it (pop_private: no atomic) and runs it here; any
// other slot, a shared one or a pending steal request leaves the rest to the runtime's drain
// (drain_own: take-backs, requests, coarse children, trace events), which ends where this loop
// would.
template <bool ClampFloor = true, class Count>
PLAIT_INLINE void wait_owned(Thread& t, detail::Worker* w, TaskCtx* ctx, Count& c, std::uint32_t floor) noexcept {
  if (ClampFloor && floor < w->dq.base) floor = w->dq.base;
  // A thief asked while the children were made (some of them are shared) and two or more are
  // still private: the runtime's drain publishes half of them at once (top_up_for_wait) and times
  // the next child, keeping coarse children stealable (docs/design.md, "Coarse children: the
  // refill gap"). Otherwise a thief that emptied the shared part idles until our next pop, a
  // whole child later (alignment's 120 pair tasks at 2 threads: 2.3 % of the run).
  if (PLAIT_UNLIKELY(w->dq.split > floor && w->dq.head >= w->dq.split + 2)) detail::drain_own(w, nullptr, floor);
  while (w->dq.head > floor) {
    const detail::Slot& s = w->dq.own[w->dq.head - 1];
    if (s.exec != &task_exec) {
      detail::drain_own(w, nullptr, floor);
      break;
    }
    auto* r = static_cast<TaskRec*>(s.data());
    if (PLAIT_UNLIKELY(!w->dq.pop_private())) {
      // Shared, or a thief asked for work: give the slot back (head is the owner's alone, and
      // nothing else changed) and let the runtime's drain take it the slow way.
      ++w->dq.head;
      detail::drain_own(w, nullptr, floor);
      break;
    }
    // (No adoption: the slots above the floor were pushed by this thread's tasks of its team.)
    if (PLAIT_LIKELY(r->rare == nullptr))
      run_common_in_wait(r, t, w, ctx, w->dq.head);
    else
      run_body_as_member(r, t, w);
  }
  if (PLAIT_UNLIKELY(!c.settled())) wait_owned_rest(w, c);
}

// The closure of a deferred dependent task in the parent's dependence group: run its body, or
// (q set) queue it by priority once its dependences are met. One type, so that an edge's nodes can
// be told apart from the engine's other nodes (ompt_edge).
struct DepRun {
  TaskRec* r;  // (trivially destructible: see ompt_edge)
  PrioQueue* q;
  int prio;
  void operator()() const {
    if (q != nullptr)
      queue_task(q, r, prio, detail::current_worker());
    else
      run_body(r);
  }
};

// OMPT's task_dependence: the engine's edge between two tasks' nodes (the group's lock held, so
// `pred` has not finished: with a tool its node is held until its task completes, and its record
// is live; DepRun is trivially destructible, so the engine leaves it in the node after it ran).
// Nodes of other closures (a wait for dependences: the task has no record yet) are not told.
static_assert(std::is_trivially_destructible_v<DepRun>);
void ompt_edge(detail::dep_node* pred, detail::dep_node* succ) noexcept {
  using Node = detail::dep_task<DepRun>;
  if (pred->op != &Node::run_op || succ->op != &Node::run_op) return;
  ompt::task_dependence(&static_cast<Node*>(pred)->fn.r->rare->ompt_task,
                        &static_cast<Node*>(succ)->fn.r->rare->ompt_task);
}

// The accesses of one depend clause: on the stack up to a dozen (no malloc per task), else in a
// vector.
class DepList {
 public:
  void push_back(const plait::access& a) {
    if (n_ < local_size) local_[n_] = a;
    else {
      if (n_ == local_size) more_.assign(local_, local_ + local_size);
      more_.push_back(a);
    }
    ++n_;
  }
  std::span<const plait::access> span() const noexcept {
    return n_ <= local_size ? std::span<const plait::access>(local_, n_) : std::span<const plait::access>(more_);
  }

 private:
  static constexpr std::size_t local_size = 12;
  plait::access local_[local_size];
  std::size_t n_ = 0;
  std::vector<plait::access> more_;
};

// The accesses of a depend array (either of gcc's two formats).
void collect_deps(void** depend, DepList& out) {
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
  plait::dataflow_group* const deps = parent->sched != nullptr ? parent->sched->deps : nullptr;
  if (w == nullptr || t.team == nullptr || deps == nullptr) return;  // no deferred dependent sibling exists
  DepList acc;
  collect_deps(depend, acc);
  detail::CountLatch done;
  done.add(1);
  deps->run(acc.span(), [&done] { done.count_down(1); });
  detail::group_wait(w, &done, parent->floor);
}

// t's current task waits until its count `which` (kids: taskwait; sub: a barrier's subtree) is zero.
template <class Count>
PLAIT_INLINE void wait_for(Thread& t, Count TaskCtx::*which) noexcept {
  TaskCtx* c = current_ctx(t);
  detail::Worker* w = detail::current_worker();
  if (PLAIT_UNLIKELY(w == nullptr)) {  // nothing deferred exists outside the pools: every task ran at once
    PLAIT_ASSERT((c->*which).settled());
    return;
  }
  wait_owned(t, w, c, c->*which, c->floor);
}

}  // namespace

void wait_subtree(Thread& t) noexcept { wait_for(t, &TaskCtx::sub); }

TaskCtx* ompt::current_context(Thread& t) noexcept { return current_ctx(t); }

namespace {
// OMPT: the undeferred tasks running on this thread (their contexts are on the stack, not records),
// innermost last, with their data: task_data finds an undeferred task's data here.
struct OnStackTask {
  const TaskCtx* ctx;
  ompt::data_t* data;
};
thread_local std::vector<OnStackTask> ompt_on_stack;
}  // namespace
void ompt_push_on_stack(const TaskCtx* c, ompt::data_t* d) { ompt_on_stack.push_back(OnStackTask{c, d}); }
void ompt_pop_on_stack() { ompt_on_stack.pop_back(); }

// OMPT: the tool's data of the task whose context c is: an explicit task's in its record's rare
// part, an implicit (or the initial) task's in its thread's state, an undeferred task's (its
// context is on its creator's stack, not a record) in ompt_on_stack.
ompt::data_t* ompt::task_data(TaskCtx* c) noexcept {
  if (c == nullptr) return nullptr;
  if (!c->is_explicit)
    return c->owner != nullptr ? &const_cast<Thread*>(c->owner)->ompt_implicit : &tls.thread.ompt_implicit;
  if (c->mode == TaskCtx::mode_on_stack) {
    for (auto it = ompt_on_stack.rbegin(); it != ompt_on_stack.rend(); ++it)
      if (it->ctx == c) return it->data;
    return nullptr;
  }
  auto* r = reinterpret_cast<TaskRec*>(c);
  return r->rare != nullptr ? &r->rare->ompt_task : nullptr;
}

Taskgroup* innermost_taskgroup(Thread& t) noexcept { return current_ctx(t)->group; }

void give_back_ready_records(detail::Worker* w) noexcept {
  ReadyRecords& ready = tls.ready;
  while (auto* r = static_cast<TaskRec*>(ready.head)) {
    ready.head = ready_next(r);
    detail::task_free_class(w, r, common_class);
  }
}

// ---- libomp's ABI: a descriptor in a common record (kmp_task.cpp) ----
//
// clang's code asks for a task's memory (__kmpc_omp_task_alloc) before it hands the task over. A
// task that may take GOMP_task's fast path gets a common record at once (descriptor_alloc_fast),
// whose argument block holds the compiler's descriptor: the block's first word points at the
// descriptor, which starts at descriptor_off (64-byte aligned, as libomp's; the 32 bytes before it
// are kmp_task.cpp's KmpTail). The record is counted and pushed only when the task is handed
// over, if the fast path's conditions still hold (descriptor_record_submit); otherwise the record stays
// mere memory (descriptor_record_discard gives it back). The allocation is here, beside the record it
// makes, so that it inlines the record's making and saves no register (its other ways are a tail
// call of kmp_task.cpp's descriptor_alloc_general).
namespace {
// The 32 bytes before the descriptor lie past the record; their first word is the argument
// block's when they start right after the record (release builds: 96 + 32 = 128), else the
// block's word comes before them (both multiples of 8).
inline constexpr std::size_t descriptor_off = (sizeof(TaskRec) + 32 + 63) / 64 * 64;
static_assert(descriptor_off - 32 >= sizeof(TaskRec) && descriptor_off + 64 <= common_bytes);
PLAIT_INLINE TaskRec* descriptor_record_of(void* task) noexcept {
  return reinterpret_cast<TaskRec*>(static_cast<char*>(task) - descriptor_off);
}
}  // namespace

namespace {
// A new record's task fields and its descriptor's, for descriptor_alloc_fast (which checked the size).
PLAIT_INLINE void* fill_fast_descriptor(TaskRec* r, const Thread& t, kmp_int32 flags, std::size_t sizeof_task,
                            std::size_t sizeof_shareds, void* routine) noexcept {
  const std::size_t shareds_off = (sizeof_task + 7) / 8 * 8;
  r->fn = &fast_descriptor_body;
  r->team = t.team;
#ifndef NDEBUG
  r->started = false;
#endif
  auto* const task = reinterpret_cast<kmp_task_t*>(reinterpret_cast<char*>(r) + descriptor_off);
  std::memcpy(static_cast<void*>(r + 1), &task, sizeof task);  // (the argument block: see above)
  KmpTail* const tl = reinterpret_cast<KmpTail*>(task) - 1;
  tl->task = task;
  tl->ext = nullptr;
  tl->flags = flags;
  tl->task_bytes = static_cast<std::uint32_t>(shareds_off + sizeof_shareds);
  tl->shareds_off = sizeof_shareds != 0 ? static_cast<std::uint32_t>(shareds_off) : 0;
  tl->fast = true;
  tl->running = false;
  tl->resubmit = false;
  task->shareds = sizeof_shareds != 0 ? reinterpret_cast<unsigned char*>(task) + shareds_off : nullptr;
  task->routine = reinterpret_cast<kmp_routine_entry_t>(routine);
  task->part_id = 0;
  task->data1.destructors = nullptr;
  task->data2.destructors = nullptr;
  return task;
}

// descriptor_alloc_fast without a ready record: one from the worker's cache of the common class
// (refilled when empty). Out of line and reached by a tail call, so that the fast way saves
// nothing.
PLAIT_NOINLINE void* descriptor_alloc_cached(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds,
                                           void* routine) noexcept {
  Thread& t = tls.thread;
  TaskRec* r = new_common_record(detail::task_alloc_bytes(t.fast_w, common_bytes, alignof(TaskRec)), t, t.task);
  return fill_fast_descriptor(r, t, flags, sizeof_task, sizeof_shareds, routine);
}
}  // namespace

void* descriptor_alloc_fast(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds,
                          void* routine) noexcept {
  PLAIT_ASSERT(sizeof_task >= sizeof(kmp_task_t));  // (__kmpc_omp_task_alloc)
  Thread& t = tls.thread;
  if (PLAIT_UNLIKELY(t.fast_w == nullptr) || PLAIT_UNLIKELY((flags & ~kf_fast) != 0) ||
      PLAIT_UNLIKELY((sizeof_task + 7) / 8 * 8 + sizeof_shareds > common_bytes - descriptor_off))
    return descriptor_alloc_general(flags, sizeof_task, sizeof_shareds, routine);
  PLAIT_ASSERT(t.task != nullptr && t.icv_set && t.fast_w == detail::current_worker());
  TaskRec* const r = take_ready_record(t.task);
  if (PLAIT_UNLIKELY(r == nullptr)) return descriptor_alloc_cached(flags, sizeof_task, sizeof_shareds, routine);
  return fill_fast_descriptor(r, t, flags, sizeof_task, sizeof_shareds, routine);
}

namespace {
PLAIT_INLINE bool record_submit(void* task) noexcept {
  TaskRec* const r = descriptor_record_of(task);
  Thread& t = tls.thread;
  detail::Worker* const w = t.fast_w;
  TaskCtx* const parent = t.task;
  // The fast path's conditions (task_plain), and the record still the current task's child in the
  // same team (nothing between the allocation and the hand-over changed them, as a rule).
  if (PLAIT_UNLIKELY(w == nullptr) || PLAIT_UNLIKELY(r->ctx.parent != parent) || PLAIT_UNLIKELY(r->team != t.team))
    return false;
  const std::uint32_t h = w->dq.head;
  if (PLAIT_UNLIKELY(!fast_push_ok(parent, w, h))) return false;
  PLAIT_ASSERT(parent->owner == &t && !parent->kids.flushed && !parent->sub.flushed);
  parent->add_locals(1);  // counted before anyone can run it (as make_task)
  fast_push(w, h, r);
  return true;
}
}  // namespace

bool descriptor_record_submit(void* task) noexcept { return record_submit(task); }

kmp_int32 descriptor_submit(void* task) noexcept {
  const KmpTail* const tl = static_cast<const KmpTail*>(task) - 1;
  if (PLAIT_LIKELY(tl->fast) && PLAIT_LIKELY(!tl->running) && PLAIT_LIKELY(record_submit(task))) return 0;
  return descriptor_submit_general(task);
}

detail::Pool* descriptor_record_pool(void* task) noexcept { return descriptor_record_of(task)->team->pool; }

void descriptor_record_discard(void* task) noexcept {
  TaskRec* const r = descriptor_record_of(task);
  PLAIT_ASSERT(r->rare == nullptr && r->team != nullptr);
  // Never counted, never run: memory only, its counts as new. Back to the ready records when this
  // thread made it (they are this thread's: ReadyRecords) and works for its pool, else freed.
  detail::Worker* const w = tls.thread.fast_w;
  if (PLAIT_LIKELY(r->ctx.owner == &tls.thread && w != nullptr && w->pool == r->team->pool)) {
    free_common(r, w);
    return;
  }
  free_record(r, r->team->pool);
}

}  // namespace plait::omp

using namespace plait::omp;
namespace detail = plait::detail;

namespace plait::omp {
namespace {

// ---- Undeferred and included tasks ----
//
// A task that runs at once on the thread that makes it — undeferred (if(0), the throttle, outside
// a team) or included (final, or a descendant of a final task) — costs about a function call, as
// in libgomp: its context lives on this thread's stack, it is counted nowhere (it is complete
// before its creator goes on, so no wait can miss it, and a later sibling's dependences find it
// done), and without a copy function its body runs on the creator's argument block itself (gcc's
// block for an undeferred task lives until the call returns; libgomp does the same). A record with
// counts, a free and a copy per task made a `final(depth >= cutoff)` fib 3.3x as many
// instructions as on libgomp (29.1 against 8.8 M for fib(22), cut-off 4).
//
// Children that are records. An included task makes included children only (final propagates),
// but an undeferred task that is not final may make deferred children, and either may make a
// child with a detach clause; those are records that point at their parent's context for their
// counts, possibly past the parent's return. At the first (task_general), the context moves into
// a record (promote), counted in its parent's counts as any task, and the body's end then ends the
// record (end_body) instead. Nothing else holds the stack context's address: the thread's current
// task pointer moves with it.
void included_fn(void*) {}  // the promoted record's function: a live record's fn is never null

TaskCtx* promote(Thread& t, detail::Worker* w, TaskCtx* c) {
  PLAIT_ASSERT(t.task == c && (c->mode & TaskCtx::mode_on_stack) != 0);
  PLAIT_ASSERT(c->kids.local == 0 && !c->kids.flushed && !c->sub.flushed);  // no child yet
  // Counted in the parent's counts (and the parent's taskgroup) as a task made now: the parent
  // is suspended in the GOMP_task call that runs this one, on this thread.
  TaskRec* r = make_task_general(t, w, c->parent, &included_fn, nullptr, nullptr, 0, 0, c->final ? task_final : 0u,
                                 false);
  r->ctx.group = c->group;  // taskgroups the body opened so far (their chain ends in the parent's)
  r->ctx.sched = c->sched;
  r->ctx.mode = static_cast<std::uint8_t>(c->mode & ~TaskCtx::mode_on_stack);
  r->ctx.sub.local = c->sub.local;  // 1, or 2 with a ChildSched's hold
  r->ctx.floor = c->floor;
  r->ctx.owner = &t;
#ifndef NDEBUG
  r->started = true;
#endif
  t.task = &r->ctx;
  return &r->ctx;
}

// fn on the task's own copy of its arguments, made by the compiler's copy function: on the stack,
// in the heap past 512 bytes.
PLAIT_INLINE void run_copied(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                             long arg_align) {
  const std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
  const std::size_t size = (arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0) + align;
  alignas(16) unsigned char small[512];
  std::unique_ptr<unsigned char[]> big;
  unsigned char* buf = small;
  if (size > sizeof small) {
    big = std::make_unique_for_overwrite<unsigned char[]>(size);
    buf = big.get();
  }
  void* arg = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(buf) + align - 1) & ~(align - 1));
  cpyfn(arg, data);
  fn(arg);
}

// Runs an undeferred or included task now (see above). (Not for detach: its completion waits for
// the event, which needs a record.)
PLAIT_INLINE void run_included(Thread& t, detail::Worker* w, TaskCtx* parent, void (*fn)(void*), void* data,
                                 void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags) {
  // relaxed: cancellation flags, as in canceled_slow.
  if (PLAIT_UNLIKELY(group_canceled(parent->group) ||
                     (t.team != nullptr && t.team->canceled.load(std::memory_order_relaxed))))
    return;
  const bool final = parent->final || (flags & task_final) != 0;
  TaskCtx ctx(TaskCtx::explicit_task{}, parent, parent->group, final);
  ctx.owner = &t;
  ctx.floor = w != nullptr ? w->dq.head : 0;
  ctx.mode = TaskCtx::mode_on_stack;
  TaskCtx* const saved = t.task;
  ompt::data_t ompt_task{};  // OMPT: an undeferred task's data lives here, for its length
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::task_create(ompt::task_data(parent), &ompt_task,
                      ompt::task_explicit | ompt::task_undeferred | (final ? ompt::task_final : 0) |
                          ((flags & task_untied) != 0 ? ompt::task_untied : 0),
                      (flags & task_depend) != 0, nullptr);
    ompt::task_schedule(ompt::task_data(saved), ompt::status_switch, &ompt_task);
    ompt_push_on_stack(&ctx, &ompt_task);
  }
  t.task = &ctx;
  if (cpyfn == nullptr) {
    fn(data);
  } else {
    run_copied(fn, data, cpyfn, arg_size, arg_align);
  }
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt_pop_on_stack();
    ompt::task_schedule(&ompt_task, ompt::status_complete, ompt::task_data(saved));
  }
  TaskCtx* const cur = t.task;
  if (PLAIT_UNLIKELY(cur != &ctx)) {
    // Promoted: the record's body ended here; end it as any (its children may still run).
    end_body(reinterpret_cast<TaskRec*>(cur), t, w);
  } else {
    PLAIT_ASSERT(ctx.kids.local == 0 && ctx.sub.local == 1 && ctx.sched == nullptr);
  }
  t.task = saved;
}

}  // namespace

// libomp's undeferred task (kmp_task.cpp): run_included's steps around a body the compiler calls.
void included_begin(IncludedFrame& f, bool final) noexcept {
  Thread& t = thread_state();
  TaskCtx* const parent = current_ctx(t);
  detail::Worker* const w = t.fast_w != nullptr ? t.fast_w : detail::current_worker();
  auto* ctx = new (f.ctx) TaskCtx(TaskCtx::explicit_task{}, parent, parent->group, parent->final || final);
  ctx->owner = &t;
  ctx->floor = w != nullptr ? w->dq.head : 0;
  ctx->mode = TaskCtx::mode_on_stack;
  f.saved = t.task;
  f.w = w;
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    f.ompt_task.value = 0;
    ompt::task_create(ompt::task_data(parent), &f.ompt_task,
                      ompt::task_explicit | ompt::task_undeferred | (ctx->final ? ompt::task_final : 0), false,
                      nullptr);
    ompt::task_schedule(ompt::task_data(f.saved), ompt::status_switch, &f.ompt_task);
    ompt_push_on_stack(ctx, &f.ompt_task);
  }
  t.task = ctx;
}

void included_end(IncludedFrame& f) noexcept {
  Thread& t = thread_state();
  auto* const ctx = reinterpret_cast<TaskCtx*>(f.ctx);
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt_pop_on_stack();
    ompt::task_schedule(&f.ompt_task, ompt::status_complete, ompt::task_data(f.saved));
  }
  TaskCtx* const cur = t.task;
  if (PLAIT_UNLIKELY(cur != ctx)) {
    end_body(reinterpret_cast<TaskRec*>(cur), t, f.w);  // promoted (see run_included)
  } else {
    PLAIT_ASSERT(ctx->kids.local == 0 && ctx->sub.local == 1 && ctx->sched == nullptr);
  }
  t.task = f.saved;
}

namespace {

// GOMP_task for a task that is undeferred (if(0)) or included (final, or made by a final task), with
// no dependences and no detach: run now (run_included).
PLAIT_NOINLINE void task_included(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                  long arg_align, unsigned flags) {
  Thread& t = thread_state();
  TaskCtx* const parent = current_ctx(t);
  detail::Worker* const w = t.fast_w != nullptr ? t.fast_w : detail::current_worker();
  run_included(t, w, parent, fn, data, cpyfn, arg_size, arg_align, flags);
}

// Every GOMP_task but the common case below: undeferred, final, dependences, detach, a copy
// function, taskgroups, large or over-aligned argument blocks, the throttle, outside a team.
PLAIT_NOINLINE void task_general(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                 long arg_align, bool if_clause, unsigned flags, void** depend, void* detach,
                                 int priority) {
  Thread& t = thread_state();
  TaskCtx* parent = current_ctx(t);
  detail::Worker* w = detail::current_worker();
  const bool in_team = t.team != nullptr && t.team->pool != nullptr && w != nullptr;
  bool undeferred = !if_clause || parent->final || !in_team;
  bool throttled = false;
  if (!undeferred && PLAIT_UNLIKELY(detail::over_throttle(w))) {
    throttled = true;
    // The throttle of task_group::run: enough private tasks are queued; run this one now. No push
    // or pop comes by while we run tasks here (a taskloop creates thousands in a row): answer a
    // thief's request ourselves, or the queued ones stay private and the team runs on one thread.
    // relaxed: a hint, as on the push path.
    PLAIT_COUNT(w, inlined, 1);
    if (w->dq.req.load(std::memory_order_relaxed) != 0) detail::serve_request(w);
    if ((flags & task_depend) == 0) undeferred = true;
  }
  if (PLAIT_UNLIKELY(undeferred && (flags & task_depend) != 0 && depend != nullptr)) wait_deps(t, parent, depend);
  if (undeferred && (flags & task_detach) == 0) {
    run_included(t, w, parent, fn, data, cpyfn, arg_size, arg_align, flags);
    return;
  }
  // A record child of a task running on the stack: the parent's context moves into a record.
  if (PLAIT_UNLIKELY((parent->mode & TaskCtx::mode_on_stack) != 0)) parent = promote(t, w, parent);
  // Queued by priority (deferred tasks only: an undeferred one runs now whatever its priority).
  int prio = -1;
  if (PLAIT_UNLIKELY(((flags & task_priority) != 0 || !parent->plain_children()) && !undeferred))
    prio = queued_priority(parent, flags, priority);
  // (A queued dependent task holds its node in its rare part, as a detached one does.)
  TaskRec* r = make_task_general(t, w, parent, fn, data, cpyfn, arg_size, arg_align, flags,
                                 PLAIT_UNLIKELY(prio >= 0) && (flags & task_depend) != 0 && depend != nullptr);
  if (PLAIT_UNLIKELY(ompt::enabled) && (flags & task_depend) != 0 && depend != nullptr) {
    DepList acc;  // (the task's create was told in make_task_general; its dependences follow)
    collect_deps(depend, acc);
    std::vector<ompt::dependence_t> list;
    list.reserve(acc.span().size());
    for (const plait::access& a : acc.span())
      list.push_back(ompt::dependence_t{ompt::data_t{.ptr = const_cast<void*>(a.addr)},
                                        a.mode == dep_mode::in              ? ompt::dependence_in
                                        : a.mode == dep_mode::mutexinoutset ? ompt::dependence_mutexinoutset
                                        : a.mode == dep_mode::inoutset      ? ompt::dependence_inoutset
                                                                            : ompt::dependence_inout});
    ompt::dependences(&r->rare->ompt_task, list.data(), static_cast<int>(list.size()));
  }
  if (PLAIT_UNLIKELY((flags & task_detach) != 0)) {
    r->rare->has_detach = true;  // published with the record (push, or the data-flow engine)
    // The omp_event_handle_t goes to the creator's event variable and to the first word of the
    // task's argument block, where gcc puts the task's own copy of it.
    *static_cast<void**>(detach) = r;
    if (arg_size >= static_cast<long>(sizeof(void*))) *static_cast<void**>(arg_of(r)) = r;
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
    r->rare->waiter = &done;
    run_body(r);
    if (w != nullptr)
      detail::group_wait(w, &done, parent->floor);
    else
      detail::run_until(nullptr, detail::latch_ref{nullptr, &done}, detail::BlockWait{});
    return;
  }
  if (PLAIT_UNLIKELY((flags & task_depend) != 0 && depend != nullptr)) {
    DepList acc;
    collect_deps(depend, acc);
    // A dependent task whose predecessors have all finished runs at once, without entering the
    // data-flow engine, where nothing is gained by deferring it: past the throttle (thieves have
    // the queued tasks), or in a team of one thread (nobody else could run it). It finishes before
    // the parent adds its next child, so no later sibling can need ordering after it
    // (dataflow_group::ready_now). libgomp does the same past its throttle.
    plait::dataflow_group* const deps = parent->sched != nullptr ? parent->sched->deps : nullptr;
    if ((throttled || t.team->n == 1) && (flags & task_detach) == 0 && prio < 0 &&
        (deps == nullptr || deps->ready_now(acc.span()))) {
      run_body(r);
      return;
    }
    // The parent's dependence group (an explicit task holds 1 more in its `sub` while it has one:
    // child_sched; an implicit task's group is waited for by member_leave, after the barrier).
    ChildSched& cs = child_sched(parent);
    if (cs.deps == nullptr) {
      cs.deps = new plait::dataflow_group;
      if (PLAIT_UNLIKELY(ompt::enabled)) detail::set_df_edge_observer(&ompt_edge);
    }
    // A queued task (prio >= 0) is ready when its dependences are met: into the queue then. The
    // engine holds the successors until complete() releases the node, so they wait for the task,
    // not for the queueing. A detached task is complete only at its fulfil: held the same way
    // (run_held stores the node before the task can start). With a tool every dependent task is
    // held: its record then outlives its node's unfinished state, which the edges told to the
    // tool (ompt_edge) read.
    const DepRun body{r, prio >= 0 ? prio_queue(parent) : nullptr, prio};
    if (prio >= 0 || (flags & task_detach) != 0 || PLAIT_UNLIKELY(ompt::enabled)) {
      r->rare->held_group = cs.deps;
      cs.deps->run_held(acc.span(), body, &r->rare->held_node);
    } else {
      cs.deps->run(acc.span(), body);
    }
    return;
  }
  if (prio >= 0) {
    queue_task(prio_queue(parent), r, prio, w);
    return;
  }
  if (PLAIT_UNLIKELY(!detail::push(w, &task_exec, r, detail::slot_kind::detached))) run_body(r);
}

// task_general for a plain task (see task_plain) that task_plain could not defer (no team on a
// pool, the throttle, a final or taskgrouped parent, a full deque or a thief's request, an empty
// allocator cache).
PLAIT_NOINLINE void task_simple_general(void (*fn)(void*), void* data, long arg_size) {
  task_general(fn, data, nullptr, arg_size, 8, true, 0, nullptr, nullptr, 0);
}

// task_general with GOMP_task's stack arguments by address: GOMP_task's fast path then reads only
// `flags`, in place (with the values, gcc loaded all four at its entry, into registers it had to
// save).
// GOMP_task's `priority` reaches the general way as the stack argument after `depend` (x86-64
// SysV: the 7th and later arguments in order, one 8-byte slot each, an int in the low half), read
// only with the priority flag. Passed any other way (a value, an address, a thread-local store) it
// cost GOMP_task's fast path two register moves per task (gcc allocated the whole function's
// registers anew: fib, 24.29 -> 24.53 M instructions). The sanitizers move address-taken arguments
// into frames of their own, so there it is passed as a value.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(PLAIT_TSAN)
#define PLAIT_OMP_PRIORITY_BY_VALUE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PLAIT_OMP_PRIORITY_BY_VALUE 1
#endif
#endif
#ifndef PLAIT_OMP_PRIORITY_BY_VALUE
#define PLAIT_OMP_PRIORITY_BY_VALUE 0
#endif
PLAIT_OMP_NOIPA void task_general_at(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                    long arg_align, bool if_clause, const unsigned* flags, void** const* depend,
                                    void* const* detach, [[maybe_unused]] int priority_value) {
  // Undeferred or included, with no dependences and no detach: now, on the stack (run_included,
  // inline here: one call less per task).
  if ((*flags & (task_depend | task_detach)) == 0 && (!if_clause || (*flags & task_final) != 0)) {
    Thread& t = thread_state();
    TaskCtx* const parent = current_ctx(t);
    detail::Worker* const w = t.fast_w != nullptr ? t.fast_w : detail::current_worker();
    run_included(t, w, parent, fn, data, cpyfn, arg_size, arg_align, *flags);
    return;
  }
  int priority = 0;
  if ((*flags & task_priority) != 0) {
#if PLAIT_OMP_PRIORITY_BY_VALUE
    priority = priority_value;
#else
    static_assert(sizeof(void*) == 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the GOMP ABI's stack slots");
    std::memcpy(&priority, reinterpret_cast<const char*>(depend) + sizeof(void*), sizeof priority);
#endif
  }
  task_general(fn, data, cpyfn, arg_size, arg_align, if_clause, *flags, *depend, *detach, priority);
}

// GOMP_task's common case (see there), for a task GOMP_task found plain (no clause, no copy
// function, a block of at most 32 bytes aligned to at most 8). (A thread with `fast_w` is inside
// a team and has a task.) Inline in GOMP_task; its exits are calls of the general way.
PLAIT_INLINE void task_plain(void (*fn)(void*), void* data, long arg_size) {
  Thread& t = tls.thread;
  detail::Worker* const w = t.fast_w;
  if (PLAIT_UNLIKELY(w == nullptr)) {
    task_simple_general(fn, data, arg_size);
    return;
  }
  TaskCtx* const parent = t.task;
  PLAIT_ASSERT(parent != nullptr && t.icv_set && w == detail::current_worker());
  // The head, read once: nothing but this thread moves it, and nothing here calls out. The
  // throttle's test is one subtraction: head - split wraps to a huge value in the all-stolen state
  // (head <= split, invariant 1 of docs/design.md), which sends that rare push to task_general,
  // where over_throttle decides exactly; so does a push the deque's limit refuses (full, or a
  // thief's request to serve: push_slow does that).
  const std::uint32_t h = w->dq.head;
  if (PLAIT_LIKELY(fast_push_ok(parent, w, h))) {
    if (TaskRec* r = make_task(t, w, parent, fn, data, static_cast<std::size_t>(arg_size)); PLAIT_LIKELY(r != nullptr)) {
      fast_push(w, h, r);
      return;
    }
  }
  if (parent->final) {  // included: a final task's child (out of line: it keeps this path's registers)
    task_included(fn, data, nullptr, arg_size, 8, 0);
    return;
  }
  task_simple_general(fn, data, arg_size);
}

// taskwait with children queued or outstanding, out of line: the loop saves registers, which a
// taskwait with nothing to do (fib's, after the inline call's own taskwait ran the sibling) skips.
PLAIT_NOINLINE void taskwait_owned(Thread& t, detail::Worker* w, TaskCtx* c) noexcept {
  wait_owned<false>(t, w, c, c->kids, c->floor);
}

// taskwait outside a team's pool worker (the initial thread outside a region, a thread of a
// serialised region, a thread of another pool): out of line for the same reason.
// With a tool no thread has fast_w: every taskwait comes here, where its OMPT region is told.
PLAIT_NOINLINE void taskwait_other() {
  Thread& t = thread_state();
  const bool told = PLAIT_UNLIKELY(ompt::enabled);
  if (told) ompt::sync_region(ompt::sync_taskwait, ompt::scope_begin, t, nullptr);
  wait_for(t, &TaskCtx::kids);
  if (told) ompt::sync_region(ompt::sync_taskwait, ompt::scope_end, t, nullptr);
}

}  // namespace
}  // namespace plait::omp

extern "C" {

// A deferred task in a team, the common case: no clause but shared/firstprivate data of a few
// words, no taskgroup, fewer than the throttle's private tasks queued. A common record from the
// worker's allocator, the arguments copied inline, the parent's counts bumped in place, a private
// push: no atomic RMW, no lock. Everything else goes to task_general.
//
// The path saves no register: GOMP_task tests its arguments, then task_plain (inline) makes and
// pushes the record. The general way gets GOMP_task's stack arguments by address: passed by value,
// gcc loaded all four at GOMP_task's entry, into registers it then had to save.
void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int priority, void* detach) {
  if (PLAIT_LIKELY((flags & (task_final | task_depend | task_detach | task_priority)) == 0 && if_clause &&
                   cpyfn == nullptr && static_cast<unsigned long>(arg_size) <= 32 && arg_align <= 8)) {
    task_plain(fn, data, arg_size);
    return;
  }
#if PLAIT_OMP_PRIORITY_BY_VALUE
  task_general_at(fn, data, cpyfn, arg_size, arg_align, if_clause, &flags, &depend, &detach, priority);
#else
  (void)priority;  // read by task_general_at from its stack slot (see there)
  task_general_at(fn, data, cpyfn, arg_size, arg_align, if_clause, &flags, &depend, &detach, 0);
#endif
}

void GOMP_taskwait(void) {
  Thread& t = tls.thread;
  if (detail::Worker* const w = t.fast_w; PLAIT_LIKELY(w != nullptr)) {
    TaskCtx* const c = t.task;
    // The running task's floor is never below the worker's base: both are heads, the floor taken
    // when the task started, inside the frame whose base holds since then (a nested frame raises
    // the base only while tasks of its own run).
    PLAIT_ASSERT(c->floor >= w->dq.base);
    // Nothing of ours above the floor and no child counted: wait_owned would do nothing (its loop
    // does not start; settled() holds on local == 0 alone, and the count is not flushed here).
    if (PLAIT_LIKELY(w->dq.head <= c->floor && c->kids.local == 0)) return;
    taskwait_owned(t, w, c);
    return;
  }
  taskwait_other();
}

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
  g->reductions = c->group != nullptr ? c->group->reductions : nullptr;  // the enclosing ones stay visible
  c->group = g;
}

void GOMP_taskgroup_end(void) {
  Thread& t = thread_state();
  TaskCtx* c = current_ctx(t);
  Taskgroup* g = c->group;
  if (g == nullptr) fatal("GOMP_taskgroup_end without GOMP_taskgroup_start");
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::sync_region(ompt::sync_taskgroup, ompt::scope_begin, t, nullptr);
  if (detail::Worker* w = detail::current_worker(); w != nullptr) detail::group_wait(w, &g->pending, g->floor);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::sync_region(ompt::sync_taskgroup, ompt::scope_end, t, nullptr);
  if (PLAIT_UNLIKELY(c->sched != nullptr)) end_taskgroup_queue(*c, g);
  c->group = g->prev;
  delete g;
}

void omp_fulfill_event(void* event) {
  // An odd handle is libomp's ABI's (kmp_task.cpp): it names the GOMP event, or completes an
  // undeferred task's wait itself (then null).
  if (PLAIT_UNLIKELY((reinterpret_cast<std::uintptr_t>(event) & 1) != 0)) {
    event = libomp_event_fulfilled(event);
    if (event == nullptr) return;
  }
  auto* r = static_cast<TaskRec*>(event);
  // (before the count: the task cannot complete, nor its record go, until it is counted)
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::detach_fulfil(&r->rare->ompt_task, &r->rare->ompt_detach);
  // acq_rel: as in end_body_general.
  if (r->rare->detach.fetch_sub(1, std::memory_order_acq_rel) == 1) fulfilled(r);
}

}  // extern "C"

namespace plait::omp {
namespace {

// taskloop: `ntasks` tasks over the logical iterations 0..n-1, each a task with its own copy of the
// argument block and its bounds written into the block's first two words.
template <class T>
void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
              int priority, unsigned long num_tasks, T start, T step, std::int64_t n) {
  if ((flags & task_reduction) != 0 && (flags & task_nogroup) != 0)
    fatal("GOMP_taskloop with a reduction and nogroup (the reduction needs the taskloop's taskgroup)");
  if (n <= 0 && (flags & task_reduction) == 0) return;
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
  if (flags & task_reduction) {
    // reduction on the taskloop: its taskgroup's task reduction, the compiler's block named by the
    // third word of the argument block (after the two bounds). The tasks find their private copy
    // through it; the combination and GOMP_taskgroup_reduction_unregister are the caller's.
    std::uintptr_t* red;
    std::memcpy(&red, static_cast<char*>(data) + 2 * sizeof(T), sizeof red);
    GOMP_taskgroup_reduction_register(red);
  }
  if (n <= 0) {
    if (group) GOMP_taskgroup_end();
    return;
  }
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
      GOMP_task(fn, block, nullptr, arg_size, arg_align, (flags & task_if) != 0,
                flags & (task_final | task_untied | task_priority), nullptr, priority, nullptr);
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
                arg_size, arg_align, (flags & task_if) != 0, flags & (task_final | task_untied | task_priority), nullptr,
                priority, nullptr);
    }
    lo = hi;
  }
  if (group) GOMP_taskgroup_end();
}

// taskloop with OMPT's work begin and end around it (on the encountering thread).
template <class T>
void taskloop_told(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                   unsigned flags, int priority, unsigned long num_tasks, T start, T step, std::int64_t n) {
  const bool told = PLAIT_UNLIKELY(ompt::enabled);
  const std::uint64_t count = n > 0 ? static_cast<std::uint64_t>(n) : 0;
  if (told) ompt::work(ompt::work_taskloop, ompt::scope_begin, thread_state(), count);
  taskloop<T>(fn, data, cpyfn, arg_size, arg_align, flags, priority, num_tasks, start, step, n);
  if (told) ompt::work(ompt::work_taskloop, ompt::scope_end, thread_state(), count);
}

}  // namespace
}  // namespace plait::omp

extern "C" {

void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                   unsigned flags, unsigned long num_tasks, int priority, long start, long end, long step) {
  std::int64_t n;
  if (step > 0) n = end > start ? (end - start + step - 1) / step : 0;
  else n = start > end ? (start - end - step - 1) / -step : 0;
  plait::omp::taskloop_told<long>(fn, data, cpyfn, arg_size, arg_align, flags, priority, num_tasks, start, step, n);
}

void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                       unsigned flags, unsigned long num_tasks, int priority, unsigned long long start,
                       unsigned long long end, unsigned long long step) {
  std::int64_t n;
  if (flags & task_up) n = end > start ? static_cast<std::int64_t>((end - start + step - 1) / step) : 0;
  else n = start > end ? static_cast<std::int64_t>((start - end - step - 1) / -step) : 0;
  plait::omp::taskloop_told<unsigned long long>(fn, data, cpyfn, arg_size, arg_align, flags, priority, num_tasks,
                                                start, step, n);
}

}  // extern "C"
