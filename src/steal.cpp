// The worker's use of its split deque: the slow paths of spawn and join with their hooks
// (counters, trace events, waking sleepers), stealing and running stolen tasks, draining a
// task's leftover children, and the join's help for slots above its own (mixing spawn/join with
// task groups). The deque's own protocol is in src/split_deque.cpp.
#include "hooks.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace plait::detail {

constinit Worker no_worker{};
constinit thread_local Worker* tl_worker __attribute__((tls_model("initial-exec"))) = &no_worker;

void top_up_for_wait(Worker* w, std::uint32_t floor) noexcept {
  w->dq.top_up(floor);
  hook::published(w);
}

void supply_thieves(Worker* w) noexcept {
  w->dq.supply_all();
  hook::published(w);
}

// (Only task_group::run's throttled path and waiting workers call it, after their no_worker check.)
void serve_request(Worker* w) noexcept {
  frame_check(w, "task_group::run");
  w->dq.serve();
  hook::published(w);
}

std::uint32_t push_slow(Worker* w, exec_fn exec, std::uintptr_t tagged) noexcept {
  if (w->pool == nullptr) return no_slot;  // no_worker: the caller throws
  frame_check(w, "a spawn or task_group::run (a push on the deque)");
  // Before the deque may publish the slot: its trace id and label travel with it.
  if (w->dq.head < w->dq.capacity) hook::pushing(w, w->dq.own[w->dq.head], tagged);
  const std::uint32_t at = w->dq.push_slow(exec, tagged);
  if (at != no_slot) PLAIT_COUNT(w, spawns, 1);
  hook::published(w);
  return at;
}

// A thief claimed slot i of v and found no task in it. Every slot of a mapping starts zeroed and a
// push writes exec before it publishes the slot, so a null exec means a slot that was published
// without being written (a broken push fast path: a limit compare that let a push through when
// it should have gone slow, or a store that did not happen before the publication). Calling it
// would jump to address 0; say what happened instead.
[[noreturn]] PLAIT_NOINLINE static void unwritten_slot(const Worker* self, const Worker* v, std::uint32_t i) noexcept {
  std::fprintf(stderr,
               "plait: internal error: worker %u claimed slot %u of worker %u, which was published without a "
               "task written into it\n",
               self->index, i, v->index);
  std::abort();
}

// The task of slot i of v, which self has claimed. Checked in every build: a compare per claimed slot.
PLAIT_INLINE static exec_fn claimed_exec(const Worker* self, const Worker* v, std::uint32_t i) noexcept {
  const exec_fn fn = v->dq.slots[i].exec;
  if (PLAIT_UNLIKELY(fn == nullptr)) unwritten_slot(self, v, i);
  return fn;
}

pop_result pop_slow(Worker* w) noexcept {
  const std::uint32_t h = w->dq.head;  // pop_private already took the slot off
  const bool ours = w->dq.take_back(h);
  hook::published(w);
  if (!ours) {
    // A join that waits next waits for this task (the DAG's join edge, wait_stolen).
    if (PLAIT_UNLIKELY(tracing(w))) w->trace->stolen_join = w->dq.own[h].trace_id;
    return pop_result::stolen;
  }
  return hook::popped(w, w->dq.own[h]);
}

steal_result steal_one(Worker* self, Worker* v) noexcept {
  PLAIT_COUNT(self, steal_attempts, 1);
  const Pool* p = self->pool;
  claim_rule rule;
  switch (p->steal.policy) {
    case steal_policy::chunk: rule.how = claim_rule::kind::chunk; break;
    case steal_policy::half: rule.how = claim_rule::kind::half; break;
    case steal_policy::adaptive: rule.how = claim_rule::kind::share; break;
    default: break;
  }
  rule.chunk = p->steal.k;
  rule.workers = p->n;
  rule.room = (self->dq.capacity - self->dq.head) / 2;  // the extra k-1 go on our deque
  const claim c = v->dq.try_claim(rule);
  if (c.result != steal_result::success) {
    hook::steal_failed(self, v);
    return c.result;
  }
  PLAIT_COUNT(self, steals, c.k);
  PLAIT_COUNT(self, steal_chunks, 1);
  end_idle(self);
  if (c.k == 1) {
    const Slot& sl = v->dq.slots[c.first];
    const exec_fn fn = claimed_exec(self, v, c.first);
    void* const data = sl.data();
    const std::uint64_t id = sl.trace_id;
    const std::uint32_t label = sl.trace_label;
    v->dq.release(c.first, self->index + 1);
    if (PLAIT_UNLIKELY(tracing(self))) {
      if (fn != &tombstone_exec) trace_stolen(self, v, id);  // a tombstone's task is traced already
      run_stolen_traced(self, fn, data, id, label);
    } else {
      run_stolen(self, fn, data);
    }
    return steal_result::success;
  }
  run_chunk(self, v, c.first, c.k);
  return steal_result::success;
}

// Thief: run the k slots [t, t+k) just claimed from v, oldest first. The first runs at once; the
// other k-1 go on our own deque as detached slots, pushed newest-first so that our pops take them
// in their original order (t+1, t+2, ...: consecutive tasks stay together on this worker) while
// other thieves, stealing from our oldest end, take the last ones (t+k-1, ...) first. They are
// ordinary slots of ours from then on: published on request, stealable, run by drain_detached.
PLAIT_NOINLINE void run_chunk(Worker* self, Worker* v, std::uint32_t t, std::uint32_t k) noexcept {
  std::uint32_t saved = self->dq.base;
  // Our pops must not go below the slots we are about to push (they belong to this chunk's frame).
  self->dq.base = self->dq.head;
  exec_fn first_fn = claimed_exec(self, v, t);
  void* first_data = v->dq.slots[t].data();
  std::uint64_t first_id = v->dq.slots[t].trace_id;
  std::uint32_t first_label = v->dq.slots[t].trace_label;
  bool tr = tracing(self);
  for (std::uint32_t i = k - 1; i >= 1; --i) {
    Slot& sl = v->dq.slots[t + i];
    exec_fn fn = claimed_exec(self, v, t + i);
    std::uintptr_t tagged = (sl.tagged & ~std::uintptr_t{1}) | static_cast<std::uintptr_t>(slot_kind::detached);
    if (fn == &tombstone_exec) {  // its task ran in place already: nothing to keep
      v->dq.release(t + i, self->index + 1);
      continue;
    }
    if (tr) {  // the re-pushed slot keeps the task's id (and so its creator) and label
      self->trace->forward_id = sl.trace_id;
      self->trace->forward_label = sl.trace_label;
      trace_stolen(self, v, sl.trace_id);
    }
    // The record was written on the victim's core: start fetching it now, so that it has arrived
    // by the time we run it (k-1 tasks from now at the latest).
    __builtin_prefetch(reinterpret_cast<const void*>(tagged & ~std::uintptr_t{1}));
    v->dq.release(t + i, self->index + 1);
    // steal_amount left room for k slots, so the push cannot fail for a full deque.
    bool ok = push(self, fn, reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}), slot_kind::detached);
    if (PLAIT_UNLIKELY(!ok)) fn(reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}), self);
  }
  v->dq.release(t, self->index + 1);  // the first slot was read before the loop
  if (tr) {
    if (first_fn != &tombstone_exec) trace_stolen(self, v, first_id);
    run_stolen_traced(self, first_fn, first_data, first_id, first_label);
  } else {
    run_stolen(self, first_fn, first_data);
  }
  drain_detached(self);
  self->dq.base = saved;
}

void run_stolen(Worker* w, exec_fn exec, void* data) noexcept {
  // The task starts a new frame on this worker: its pops must stop at the current head, below
  // which lie slots of the frame we interrupted (a join waiting for a thief, say).
  std::uint32_t saved = w->dq.base;
  w->dq.base = w->dq.head;
  exec(data, w);
  drain_detached(w);
  w->dq.base = saved;
}

void run_stolen_traced(Worker* w, exec_fn exec, void* data, std::uint64_t id, std::uint32_t label) noexcept {
  if (exec == &tombstone_exec) return;  // its task ran in place, and was traced there
  std::uint32_t saved = w->dq.base;
  w->dq.base = w->dq.head;
  trace_task_begin(w, id, label);
  exec(data, w);
  trace_task_end(w);
  drain_detached(w);
  w->dq.base = saved;
}

void hook::published_slow(Worker* w) noexcept {
  PLAIT_COUNT(w, publishes, w->dq.fresh);
  w->dq.fresh = 0;
  notify_published(w->pool, w);
}

void end_idle_slow(Worker* w) noexcept {
  PLAIT_COUNT(w, idle_ns, now_ns() - w->idle_from_ns);
  w->idle_from_ns = 0;
  if (tracing(w)) trace_event(w, trace::ev::idle_end, 0, 0, 0);
}

void trace_stolen(Worker* self, Worker* v, std::uint64_t id) noexcept {
  self->trace->in_fail_streak = false;
  trace_event(self, trace::ev::steal, id, v->index, 0);
}

void trace_steal_failed(Worker* self, Worker* v) noexcept {
  if (self->trace->in_fail_streak) return;
  self->trace->in_fail_streak = true;
  trace_event(self, trace::ev::steal_fail, 0, v->index, 0);
}

void drain_detached(Worker* w) noexcept {
  // A task may leave task_group children on our deque (it added them and returned without
  // waiting: the group's wait() runs elsewhere). Fork-join slots cannot be left: every handle is
  // joined before its frame returns. Run the leftovers here, newest first. Siblings run back to
  // back share their completion RMW (defer_done); the flush below ends the run.
  bool saved_ok = w->defer_ok;
  w->defer_ok = true;
  while (w->dq.head > w->dq.base) {
    Slot& s = w->dq.own[w->dq.head - 1];
    PLAIT_ASSERT(s.kind() == slot_kind::detached);  // 7: only detached slots outlive their task
    exec_fn fn = s.exec;
    void* data = s.data();
    pop_result r = pop(w);
    if (r == pop_result::stolen) {
      flush_deferred(w);  // the run of siblings is broken: no deferred count may outlive it
      continue;
    }
    // The next slot's record (written long ago, or on another core) starts loading while this
    // task runs. Only the owner writes slots, so reading one a thief may take is no race.
    if (w->dq.head > w->dq.base) __builtin_prefetch(w->dq.own[w->dq.head - 1].data());
    fn(data, w);
    if (r == pop_result::traced) trace_task_end(w);
  }
  flush_deferred(w);
  w->defer_ok = saved_ok;
}

void tombstone_exec(void*, Worker*) noexcept {}

void assert_failed(const char* cond, const char* file, int line) noexcept {
  std::fprintf(stderr, "plait: internal invariant violated: %s (%s:%d)\n", cond, file, line);
  std::abort();
}

// Owner, in a task_group wait: slot i (below the newest slot, which is a spawn handle of the
// waiting task) holds a detached child. Make it private so that it can run in place
// (SplitDeque::reclaim). False when a thief claimed it first: the thief runs it and the group
// counts it as usual.
bool reclaim_buried(Worker* w, std::uint32_t i) noexcept {
  const bool ours = w->dq.reclaim(i);
  hook::published(w);
  return ours;
}

void uncover(Worker* w, const void* handle) noexcept {
  if (w->pool == nullptr) {
    std::fprintf(stderr,
                 "plait: spawn_handle::join called on a thread that is not a plait worker (handle %p); a handle "
                 "must be joined by the task that spawned it\n",
                 handle);
    std::abort();
  }
  frame_check(w, "spawn_handle::join");
  // Children run here pay their own completion RMW: this is no drain loop that would pop their
  // siblings next.
  bool saved_ok = w->defer_ok;
  w->defer_ok = false;
  for (;;) {
    if (w->dq.head <= w->dq.base) {
      std::fprintf(stderr,
                   "plait: spawn_handle::join on worker %u: handle %p is not among the unjoined spawns of the "
                   "calling task; a handle must be joined once, by the task that spawned it\n",
                   w->index, handle);
      std::abort();
    }
    const std::uint32_t h = w->dq.head - 1;
    Slot& s = w->dq.own[h];
    if (s.kind() == slot_kind::joinable) {
      if (s.data() == handle) break;
      lifo_violation(w, h, handle);
    }
    // A task_group child (or a loop record, or the tombstone of a child that ran in place) added
    // after our spawn and still queued. It must leave the deque before our slot can be popped, and
    // running it now is what the group needs anyway (a scheduling point, as in OpenMP).
    exec_fn fn = s.exec;
    void* data = s.data();
    pop_result r = pop(w);
    if (r == pop_result::stolen) continue;  // its thief runs it; the group counts it
    fn(data, w);
    if (r == pop_result::traced) trace_task_end(w);
  }
  w->defer_ok = saved_ok;
}

void lifo_violation(Worker* w, std::uint32_t h, const void* expected) {
  std::fprintf(stderr,
               "plait: join order violated on worker %u: joining handle %p, but the most recent unjoined "
               "spawn on this task is %p (slot %u). Joins must be LIFO: join the newest handle first.\n",
               w->index, expected, w->dq.own[h].data(), h);
  std::abort();
}

void not_a_worker(const char* what) {
  throw std::logic_error(std::string(what) +
                         " called on a thread that is not a plait worker; run the code through plait::run(...) "
                         "or pool::run(...) first");
}

}  // namespace plait::detail
