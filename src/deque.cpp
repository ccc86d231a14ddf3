// The split deque's slow paths: publishing private slots, taking shared slots back, stealing.
// The fast paths (push/pop of private slots) are inline in include/plait/detail/worker.hpp; the
// layout and the invariants are described there and in docs/design.md ("The split deque").
//
// Who writes what:
//   ts (tail|split)  thieves: CAS tail -> tail+1 (only while tail < split)
//                    owner:   fetch_add on split (publish), CAS split down (take back),
//                             plain store (reset, only while tail == split, when no CAS can succeed)
//   req, push_limit, thieves: request_work(); owner: settle()
//   pop_limit
//   slot.thief       thief: store(index+1, release) once it has read exec/data; owner: re-zero
//   everything else  owner only
#include "pool_impl.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace plait::detail {

constinit Worker no_worker{};
constinit thread_local Worker* tl_worker __attribute__((tls_model("initial-exec"))) = &no_worker;

// Thief: ask owner v to publish work (its next push or pop goes to the slow path), unless a
// request is already pending: then the line is left alone, as idle thieves keep reading it
// (relaxed load: a hint; a request that lands just after it is served all the same).
//   A: req.fetch_or(req_steal)  B: push_limit = 0  C: pop_limit = ~0       (in this order)
// acq_rel on A and release on B/C pair with the owner's acq_rel exchanges in settle(): see there.
void request_work(Worker* v) noexcept {
  if (v->req.load(std::memory_order_relaxed) != 0) return;
  v->req.fetch_or(req_steal, std::memory_order_acq_rel);
  v->push_limit.store(0, std::memory_order_release);
  v->pop_limit.store(pop_limit_requested, std::memory_order_release);
}

// Owner: make the `grow` oldest private slots [split, split + grow) stealable.
static void publish(Worker* w, std::uint32_t grow) noexcept {
  stress_point();
  // release: the slots being published were written with plain stores by this thread; a thief's
  // acquire CAS that reads this value (or any later RMW in its release sequence) sees them.
  // split lives in the low 32 bits and stays below 2^32, so the add never carries into tail.
  w->ts.fetch_add(grow, std::memory_order_acq_rel);
  w->split += grow;
  PLAIT_COUNT(w, publishes, 1);
  notify_work(w->pool, w);
}

// Owner: make the older half (rounded up) of the private slots [split, limit) stealable.
// Returns false when there is nothing private to publish.
static bool publish_half(Worker* w, std::uint32_t limit) noexcept {
  if (limit <= w->split) return false;
  publish(w, (limit - w->split + 1) / 2);
  return true;
}

// Owner, at the end of every slow path: put the fast-path limits back to what the deque state
// says (push_limit = capacity, or 0 while all-stolen; pop_limit = split) and serve any pending
// request by publishing half of the private slots below `protect` (the slot being pushed or
// popped is never published).
//
// No request is lost. The owner does R1: push_limit.exchange, R2: pop_limit.exchange, then
// X: req.exchange(0). A thief does A: req.fetch_or, then B/C: the limit stores (request_work).
//   * If A precedes X in req's order, X takes the bit and we publish now.
//   * Otherwise X precedes A; X (release) is read by A (acquire), so R1/R2 happen-before B/C, and
//     the thief's limits survive: the next push/pop comes back here.
//   * If instead our R1 (or R2) overwrites B (or C), the exchange (acquire) read the thief's
//     release store, so A happens-before R1 and hence before X, and X sees the bit.
// Each RMW is skipped when a relaxed load already shows the wanted value: idle thieves keep
// reading this line, and an RMW would pull it away from them on every slow path. Skipping is safe:
//   * a limit that reads as wanted is not overwritten, so a thief's request stored there (now or
//     later) survives and brings the owner back;
//   * if a limit exchange did overwrite a thief's request, its acquire made the thief's fetch_or
//     happen-before our load of req, which therefore sees the bit and takes it.
// All of this is on the slow path only.
// Debug builds: the deque invariants of docs/design.md ("Invariants"), checked at the end of every
// slow path (settle, which every slow path ends with). Release builds: nothing.
static void check_invariants(const Worker* w) noexcept {
#ifndef NDEBUG
  // relaxed: the owner's own word; thieves only move tail, and only up to split.
  const std::uint64_t v = w->ts.load(std::memory_order_relaxed);
  PLAIT_ASSERT(ts_split(v) == w->split);  // 3: the owner's split is the word's
  PLAIT_ASSERT(ts_tail(v) <= w->split);   // 1
  if (w->allstolen)
    PLAIT_ASSERT(ts_tail(v) == w->split && w->head <= w->split);  // 1, the all-stolen state
  else
    PLAIT_ASSERT(w->split <= w->head);  // 1
  PLAIT_ASSERT(w->base <= w->head);  // 6 (a frame's pops stop at its base)
#else
  (void)w;
#endif
}

static void settle_limits(Worker* w, std::uint32_t protect) noexcept;

static void settle(Worker* w, std::uint32_t protect) noexcept {
  settle_limits(w, protect);
  check_invariants(w);
}

static void settle_limits(Worker* w, std::uint32_t protect) noexcept {
  // A tracing worker keeps both limits at their "go slow" values (src/trace.cpp).
  bool tr = tracing(w);
  for (;;) {
    std::uint32_t want_push = w->allstolen || tr ? 0 : w->capacity;
    std::uint32_t want_pop = tr ? pop_limit_requested : w->split;
    if (w->push_limit.load(std::memory_order_relaxed) != want_push)
      w->push_limit.exchange(want_push, std::memory_order_acq_rel);
    if (w->pop_limit.load(std::memory_order_relaxed) != want_pop)
      w->pop_limit.exchange(want_pop, std::memory_order_acq_rel);
    if (w->req.load(std::memory_order_relaxed) == 0) return;
    if ((w->req.exchange(0, std::memory_order_acq_rel) & req_steal) == 0) return;
    if (!publish_half(w, protect)) {
      // Nothing private below `protect` to publish now. Dropping the request here lost it: a
      // thief that asked and then went to sleep was never woken (no publish, no notify) while
      // this owner went on spawning privately, and ran the rest of the loop alone (found by the
      // loops study: taskloop grain 16 at 0.99 s vs 0.49 s, one steal in the whole run). Keep
      // it pending instead, so that the next spawn or join serves it. relaxed: these are this
      // worker's own flags; a thief's concurrent request_work writes the same values.
      w->req.fetch_or(req_steal, std::memory_order_relaxed);
      w->push_limit.store(0, std::memory_order_relaxed);
      w->pop_limit.store(pop_limit_requested, std::memory_order_relaxed);
      return;
    }
  }
}

// Owner, entering a task_group wait with private children of the group still queued: if some of
// the group's children were published while it added them (split rose above the group's floor),
// a thief asked for work during that burst, and it got half of what existed *at that moment* —
// often one or two slots, when the request came early in the burst. The rest stay private until
// the next request is served, which is at our next pop: after the task we are about to run. With
// coarse children that is milliseconds of an idle thief (alignment: a 4 ms gap after the thief's
// first task, 2.5 % of the run). So top up now: publish half of the group's private children.
// Only owner-private fields decide, and nothing is done unless a thief asked during the burst.
// The top slot (head - 1) stays private: the wait pops it next. settle() then raises pop_limit to
// the new split; without it the pop fast path would take a published slot as private while a
// thief may take it too.
void top_up_for_wait(Worker* w, std::uint32_t floor) noexcept {
  if (w->split <= floor || w->head < w->split + 2) return;
  const std::uint32_t top = w->head - 1;
  publish_half(w, top);
  settle(w, top);
}

// Owner, in a task_group wait whose children are coarse (group_wait times them), about to run the
// next child: publish every private slot. Otherwise a request is served only at our next pop,
// after the child we are about to run, and with children of milliseconds the thief that takes the
// last shared slot idles for that long (alignment: a 5 ms gap in 3 of 4 traced runs, 3 % of the
// run, while the owner still held private children). Publishing only when the thieves are down to
// a few shared slots is not enough: which child is long is not known in advance (a 12 ms child
// ran while the thief finished the two 2.5 ms ones left to it and then waited 7 ms for a private
// one). In this mode group_wait's pops take back only the popped slot (take_one), so after the
// first call nothing is private any more and this returns at its first test: one take-back CAS
// per coarse child, no publish.
void supply_thieves(Worker* w) noexcept {
  if (w->head <= w->split) return;  // nothing private (also true while all-stolen)
  publish(w, w->head - w->split);
  settle(w, w->head);  // pop_limit up to the new split: the next pop must take the slow path
}

// (Only task_group::run's throttled path calls it, after its no_worker check.)
void serve_request(Worker* w) noexcept { settle(w, w->head); }

std::uint32_t push_slow(Worker* w, exec_fn exec, std::uintptr_t tagged) noexcept {
  if (w->pool == nullptr) return no_slot;  // no_worker: the caller throws
  std::uint32_t h = w->head;
  if (h >= w->capacity) {  // full: the caller runs the task inline
    settle(w, h);
    return no_slot;
  }
  Slot& s = w->odq[h];
  s.exec = exec;
  s.tagged = tagged;
  if (tracing(w)) trace_on_push(w, s);  // before any publication below makes the slot shared
  w->head = h + 1;
  PLAIT_COUNT(w, spawns, 1);
  if (w->allstolen) {
    // Every shared slot was stolen and tail == split, so no thief CAS can succeed until ts changes:
    // a plain store is safe. The new slot (h) becomes shared at once, which is what a thief that
    // emptied us wants next.
    stress_point();
    // release: publishes the slot written above to thieves' acquire CAS.
    w->ts.store(ts_pack(h, h + 1), std::memory_order_release);
    w->split = h + 1;
    w->allstolen = false;
    PLAIT_COUNT(w, publishes, 1);
    notify_work(w->pool, w);
  }
  settle(w, h + 1);
  return h;
}

// The owner took slot h back: `local`, or `traced` after recording the task's begin (not for a
// tombstone: the task that was there already has its begin and end).
static pop_result popped_local(Worker* w, std::uint32_t h) noexcept {
  if (PLAIT_LIKELY(!tracing(w))) return pop_result::local;
  if (w->odq[h].exec == &tombstone_exec) return pop_result::local;
  trace_task_begin(w, w->odq[h].trace_id, w->odq[h].trace_label);
  return pop_result::traced;
}

pop_result pop_slow(Worker* w, std::uint32_t h) noexcept {
  if (h >= w->split) {
    // Slot h is private; we got here because a thief asked for work (or the pool traces).
    // Publish half of the private slots below h (never h itself: we are about to run it).
    settle(w, h);
    return popped_local(w, h);
  }
  // Slot h was shared. Invariant: h == split - 1 (LIFO), so it is the newest shared slot.
  if (!w->allstolen) {
    std::uint64_t v = w->ts.load(std::memory_order_relaxed);
    for (;;) {
      std::uint32_t t = ts_tail(v), s = ts_split(v);
      if (t == s) {
        // Thieves took every shared slot, h included (h < s == t). The word is now frozen until we
        // store a new one (push_slow), so later pops need not look at it.
        w->allstolen = true;
        break;
      }
      // Take back the newer half of [t, s); h = s-1 >= t + (s-t)/2 stays with us. With coarse
      // task_group children (take_one, set by group_wait around this pop) only h: the rest stay
      // the thieves', and one CAS per child costs nothing next to the child.
      std::uint32_t ns = w->take_one ? s - 1 : t + (s - t) / 2;
      stress_point();
      // acq_rel/relaxed: the CAS is what makes slot h ours (thieves CAS the same word, so exactly
      // one of us wins); no data flows from thieves to us here. acq_rel rather than relaxed keeps
      // the release sequence of our earlier publish obviously intact for readers of the proof and
      // for ThreadSanitizer. On failure v is reloaded and we retry: a thief moved tail.
      if (w->ts.compare_exchange_weak(v, ts_pack(t, ns), std::memory_order_acq_rel, std::memory_order_relaxed)) {
        w->split = ns;
        settle(w, h);
        return popped_local(w, h);
      }
    }
  }
  settle(w, h);
  // Stolen. Before the slot may be reused, its thief must have read exec/data: wait for its mark.
  Slot& s = w->odq[h];
  Backoff b(w->pool->spin_limit);
  std::uint32_t mark;
  // acquire: pairs with the thief's release store after its reads of the slot.
  while ((mark = s.thief.load(std::memory_order_acquire)) == 0) b.pause();
  // The slot is ours again: restore the "free slots hold 0" invariant that lets push() skip it.
  // relaxed: no thief reads this slot until a later publish (a release) covers it.
  s.thief.store(0, std::memory_order_relaxed);
  w->last_thief = mark;
  return pop_result::stolen;
}

// How many of the victim's `avail` shared tasks one steal takes (the pool's steal policy), capped
// so that the extra tasks fit in half of the thief's free deque slots.
static std::uint32_t steal_amount(const Worker* self, std::uint32_t avail) noexcept {
  const Pool* p = self->pool;
  std::uint32_t k;
  switch (p->steal) {
    case steal_policy::one: return 1;
    case steal_policy::chunk: k = p->steal_k; break;
    case steal_policy::half: k = (avail + 1) / 2; break;
    case steal_policy::adaptive: k = avail >= 2 * p->n ? avail / p->n : 1; break;
    default: return 1;
  }
  if (k > avail) k = avail;
  std::uint32_t room = (self->capacity - self->head) / 2;
  if (k > room) k = room;
  return k < 1 ? 1 : k;
}

steal_result steal_one(Worker* self, Worker* v) noexcept {
  PLAIT_COUNT(self, steal_attempts, 1);
  // relaxed: only a hint; the CAS below re-validates and acquires.
  std::uint64_t cur = v->ts.load(std::memory_order_relaxed);
  std::uint32_t t = ts_tail(cur), s = ts_split(cur);
  if (t >= s) {
    // Nothing shared: ask the owner to publish at its next spawn/join. The request is made also
    // while the owner is all-stolen (push_limit 0): an owner that runs a loop without spawning
    // learns from `req` that someone is hungry (parallel_for's adaptive partitioner splits on it);
    // an earlier test of push_limit skipped those owners, and the adaptive loop then never split
    // (flatloop ran serially on 2 workers).
    request_work(v);
    PLAIT_COUNT(self, steal_failures, 1);
    if (PLAIT_UNLIKELY(tracing(self))) trace_steal_failed(self, v);
    return steal_result::empty;
  }
  std::uint32_t k = steal_amount(self, s - t);
  stress_point();
  // acquire on success: synchronises with the owner's release that published slots [t, t+k), so
  // the reads of exec/data below see what push() wrote. Taking k slots is the same single-word
  // CAS as taking one: the owner's take-back CAS (pop_slow) and other thieves' CASes on `ts` are
  // totally ordered with it, so each slot goes to exactly one of them.
  if (!v->ts.compare_exchange_strong(cur, ts_pack(t + k, s), std::memory_order_acq_rel, std::memory_order_relaxed)) {
    PLAIT_COUNT(self, steal_failures, 1);
    if (PLAIT_UNLIKELY(tracing(self))) trace_steal_failed(self, v);
    return steal_result::contended;
  }
  PLAIT_COUNT(self, steals, k);
  PLAIT_COUNT(self, steal_chunks, 1);
  end_idle(self);
  if (t + k == s) {
    // We emptied the victim's shared part. Ask for more now, while our task runs, rather than
    // when we come back empty-handed: the owner serves a request only at its next spawn or join,
    // which a worker running a long leaf task may not reach for milliseconds, and the thief would
    // idle for that long on every refill. Asked now, the refill is usually ready by the time we
    // return.
    request_work(v);
  }
  if (k == 1) {
    Slot& sl = v->dq[t];
    exec_fn fn = sl.exec;
    void* data = sl.data();
    std::uint64_t id = sl.trace_id;
    std::uint32_t label = sl.trace_label;
    // release: our reads of the slot happen-before the owner reuses it (it acquires this mark).
    sl.thief.store(self->index + 1, std::memory_order_release);
    if (PLAIT_UNLIKELY(tracing(self))) {
      if (fn != &tombstone_exec) trace_stolen(self, v, id);  // a tombstone's task is traced already
      run_stolen_traced(self, fn, data, id, label);
    } else {
      run_stolen(self, fn, data);
    }
    return steal_result::success;
  }
  run_chunk(self, v, t, k);
  return steal_result::success;
}

// Thief: run the k slots [t, t+k) just claimed from v, oldest first. The first runs at once; the
// other k-1 go on our own deque as detached slots, pushed newest-first so that our pops take them
// in their original order (t+1, t+2, ...: consecutive tasks stay together on this worker) while
// other thieves, stealing from our oldest end, take the last ones (t+k-1, ...) first. They are
// ordinary slots of ours from then on: published on request, stealable, run by drain_detached.
PLAIT_NOINLINE void run_chunk(Worker* self, Worker* v, std::uint32_t t, std::uint32_t k) noexcept {
  std::uint32_t saved = self->base;
  // Our pops must not go below the slots we are about to push (they belong to this chunk's frame).
  self->base = self->head;
  exec_fn first_fn = v->dq[t].exec;
  void* first_data = v->dq[t].data();
  std::uint64_t first_id = v->dq[t].trace_id;
  std::uint32_t first_label = v->dq[t].trace_label;
  bool tr = tracing(self);
  for (std::uint32_t i = k - 1; i >= 1; --i) {
    Slot& sl = v->dq[t + i];
    exec_fn fn = sl.exec;
    std::uintptr_t tagged = (sl.tagged & ~std::uintptr_t{1}) | static_cast<std::uintptr_t>(slot_kind::detached);
    if (fn == &tombstone_exec) {  // its task ran in place already: nothing to keep
      // release: as below.
      sl.thief.store(self->index + 1, std::memory_order_release);
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
    // release: our reads of this slot happen-before the owner reuses it (it acquires this mark).
    sl.thief.store(self->index + 1, std::memory_order_release);
    // steal_amount left room for k slots, so the push cannot fail for a full deque.
    bool ok = push(self, fn, reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}), slot_kind::detached);
    if (PLAIT_UNLIKELY(!ok)) fn(reinterpret_cast<void*>(tagged & ~std::uintptr_t{1}), self);
  }
  // release: as above, for the first slot (read before the loop).
  v->dq[t].thief.store(self->index + 1, std::memory_order_release);
  if (tr) {
    if (first_fn != &tombstone_exec) trace_stolen(self, v, first_id);
    run_stolen_traced(self, first_fn, first_data, first_id, first_label);
  } else {
    run_stolen(self, first_fn, first_data);
  }
  drain_detached(self);
  self->base = saved;
}

void run_stolen(Worker* w, exec_fn exec, void* data) noexcept {
  // The task starts a new frame on this worker: its pops must stop at the current head, below
  // which lie slots of the frame we interrupted (a join waiting for a thief, say).
  std::uint32_t saved = w->base;
  w->base = w->head;
  exec(data, w);
  drain_detached(w);
  w->base = saved;
}

void run_stolen_traced(Worker* w, exec_fn exec, void* data, std::uint64_t id, std::uint32_t label) noexcept {
  if (exec == &tombstone_exec) return;  // its task ran in place, and was traced there
  std::uint32_t saved = w->base;
  w->base = w->head;
  trace_task_begin(w, id, label);
  exec(data, w);
  trace_task_end(w);
  drain_detached(w);
  w->base = saved;
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
  while (w->head > w->base) {
    Slot& s = w->odq[w->head - 1];
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
    if (w->head > w->base) __builtin_prefetch(w->odq[w->head - 1].data());
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
// waiting task) holds a detached child. Make it private so that it can run in place: a private
// slot needs nothing; a shared one is taken back with the same CAS on `ts` that pop_slow uses,
// moving split down to i ([i, split) becomes private again: thieves' CASes and ours are totally
// ordered on the one word, so slot i goes to exactly one side). Returns false when a thief
// claimed it first (i < tail): the thief runs it and the group counts it as usual.
bool reclaim_buried(Worker* w, std::uint32_t i) noexcept {
  PLAIT_ASSERT(i + 1 < w->head && i >= w->base);
  if (i >= w->split) return true;
  if (w->allstolen) return false;  // every shared slot, i among them, was stolen
  std::uint64_t v = w->ts.load(std::memory_order_relaxed);
  for (;;) {
    std::uint32_t t = ts_tail(v);
    PLAIT_ASSERT(i < ts_split(v));  // invariant 3: our split is the word's split
    if (i < t) return false;
    stress_point();
    // acq_rel/relaxed: as the take-back CAS in pop_slow. On failure v is reloaded: a thief moved tail.
    if (w->ts.compare_exchange_weak(v, ts_pack(t, i), std::memory_order_acq_rel, std::memory_order_relaxed)) {
      w->split = i;
      // pop_limit down to the new split (slots [i, head) are private now); a pending request is
      // kept pending, as nothing below i is private.
      settle(w, i);
      return true;
    }
  }
}

void uncover(Worker* w, const void* handle) noexcept {
  if (w->pool == nullptr) {
    std::fprintf(stderr,
                 "plait: spawn_handle::join called on a thread that is not a plait worker (handle %p); a handle "
                 "must be joined by the task that spawned it\n",
                 handle);
    std::abort();
  }
  // Children run here pay their own completion RMW: this is no drain loop that would pop their
  // siblings next.
  bool saved_ok = w->defer_ok;
  w->defer_ok = false;
  for (;;) {
    if (w->head <= w->base) {
      std::fprintf(stderr,
                   "plait: spawn_handle::join on worker %u: handle %p is not among the unjoined spawns of the "
                   "calling task; a handle must be joined once, by the task that spawned it\n",
                   w->index, handle);
      std::abort();
    }
    const std::uint32_t h = w->head - 1;
    Slot& s = w->odq[h];
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
               w->index, expected, w->odq[h].data(), h);
  std::abort();
}

void not_a_worker(const char* what) {
  throw std::logic_error(std::string(what) +
                         " called on a thread that is not a plait worker; run the code through plait::run(...) "
                         "or pool::run(...) first");
}

}  // namespace plait::detail
