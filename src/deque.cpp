// The split deque's slow paths: publishing private slots, taking shared slots back, stealing.
// The fast paths (push/pop of private slots) are inline in include/plait/detail/worker.hpp; the
// layout and the invariants are described there and in docs/design.md ("The split deque").
//
// Who writes what:
//   ts (tail|split)  thieves: CAS tail -> tail+1 (only while tail < split)
//                    owner:   fetch_add on split (publish), CAS split down (take back),
//                             plain store (reset, only while tail == split, when no CAS can succeed)
//   req              thieves: fetch_or(req_steal); owner: fetch_or(req_allstolen), store(0)
//   slot.thief       thief: store(index+1, release) once it has read exec/data
//   everything else  owner only
#include "pool_impl.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace plait::detail {

constinit thread_local Worker* tl_worker __attribute__((tls_model("initial-exec"))) = nullptr;

// Owner: make the older half (rounded up) of the private slots [split, limit) stealable.
static void publish_half(Worker* w, std::uint32_t limit) noexcept {
  std::uint32_t priv = limit - w->split;
  // relaxed store: clearing the request is a hint; a request set concurrently and lost here is
  // re-sent by its thief on its next failed attempt.
  w->req.store(0, std::memory_order_relaxed);
  if (priv == 0) return;
  std::uint32_t grow = (priv + 1) / 2;
  stress_point();
  // release: the slots being published were written with plain stores by this thread; a thief's
  // acquire CAS that reads this value (or any later RMW in its release sequence) sees them.
  // split lives in the low 32 bits and stays below 2^32, so the add never carries into tail.
  w->ts.fetch_add(grow, std::memory_order_acq_rel);
  w->split += grow;
  PLAIT_COUNT(w, publishes, 1);
  notify_work(w->pool, w);
}

void push_slow(Worker* w) noexcept {
  // relaxed: req_allstolen is only written by this thread.
  std::uint32_t req = w->req.load(std::memory_order_relaxed);
  if (req & req_allstolen) {
    // Every shared slot was stolen and tail == split, so no thief CAS can succeed until ts changes:
    // a plain store is safe. The new slot (head-1) becomes shared at once, which is what a thief
    // that emptied us wants next.
    std::uint32_t h = w->head - 1;
    stress_point();
    // release: publishes the slot written by push() to thieves' acquire CAS.
    w->ts.store(ts_pack(h, h + 1), std::memory_order_release);
    w->split = h + 1;
    w->req.store(0, std::memory_order_relaxed);
    PLAIT_COUNT(w, publishes, 1);
    notify_work(w->pool, w);
  } else {
    publish_half(w, w->head);
  }
}

pop_result pop_slow(Worker* w, std::uint32_t h) noexcept {
  if (h >= w->split) {
    // Slot h is private; we got here because a thief asked for work. Publish half of the private
    // slots below h (never h itself: we are about to run it).
    publish_half(w, h);
    return pop_result::local;
  }
  // Slot h was shared. Invariant: h == split - 1 (LIFO), so it is the newest shared slot.
  // relaxed: req_allstolen is only written by this thread.
  if ((w->req.load(std::memory_order_relaxed) & req_allstolen) == 0) {
    std::uint64_t v = w->ts.load(std::memory_order_relaxed);
    for (;;) {
      std::uint32_t t = ts_tail(v), s = ts_split(v);
      if (t == s) {
        // Thieves took every shared slot, h included (h < s == t). The word is now frozen until we
        // store a new one (push_slow), so later pops need not look at it.
        w->req.fetch_or(req_allstolen, std::memory_order_relaxed);
        break;
      }
      // Take back the newer half of [t, s); h = s-1 >= t + (s-t)/2 stays with us.
      std::uint32_t ns = t + (s - t) / 2;
      stress_point();
      // acq_rel/relaxed: the CAS is what makes slot h ours (thieves CAS the same word, so exactly
      // one of us wins); no data flows from thieves to us here. acq_rel rather than relaxed keeps
      // the release sequence of our earlier publish obviously intact for readers of the proof and
      // for ThreadSanitizer. On failure v is reloaded and we retry: a thief moved tail.
      if (w->ts.compare_exchange_weak(v, ts_pack(t, ns), std::memory_order_acq_rel, std::memory_order_relaxed)) {
        w->split = ns;
        return pop_result::local;
      }
    }
  }
  // Stolen. Before the slot may be reused, its thief must have read exec/data: wait for its mark.
  Slot& s = w->odq[h];
  Backoff b;
  std::uint32_t mark;
  // acquire: pairs with the thief's release store after its reads of the slot.
  while ((mark = s.thief.load(std::memory_order_acquire)) == 0) b.pause();
  // The slot is ours again: restore the "free slots hold 0" invariant that lets push() skip it.
  // relaxed: no thief reads this slot until a later publish (a release) covers it.
  s.thief.store(0, std::memory_order_relaxed);
  w->last_thief = mark;
  return pop_result::stolen;
}

steal_result steal_one(Worker* self, Worker* v) noexcept {
  PLAIT_COUNT(self, steal_attempts, 1);
  // relaxed: only a hint; the CAS below re-validates and acquires.
  std::uint64_t cur = v->ts.load(std::memory_order_relaxed);
  std::uint32_t t = ts_tail(cur), s = ts_split(cur);
  if (t >= s) {
    // Nothing shared: ask the owner to publish at its next spawn/join. relaxed: a hint.
    if ((v->req.load(std::memory_order_relaxed) & req_steal) == 0) v->req.fetch_or(req_steal, std::memory_order_relaxed);
    PLAIT_COUNT(self, steal_failures, 1);
    return steal_result::empty;
  }
  stress_point();
  // acquire on success: synchronises with the owner's release that published slot t, so the
  // reads of exec/data below see what push() wrote.
  if (!v->ts.compare_exchange_strong(cur, ts_pack(t + 1, s), std::memory_order_acq_rel, std::memory_order_relaxed)) {
    PLAIT_COUNT(self, steal_failures, 1);
    return steal_result::contended;
  }
  Slot& sl = v->dq[t];
  exec_fn fn = sl.exec;
  void* data = sl.data();
  // release: our reads of the slot happen-before the owner reuses it (it acquires this mark).
  sl.thief.store(self->index + 1, std::memory_order_release);
  PLAIT_COUNT(self, steals, 1);
  run_stolen(self, fn, data);
  return steal_result::success;
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

void drain_detached(Worker* w) noexcept {
  // A task may leave task_group children on our deque (it added them and returned without
  // waiting: the group's wait() runs elsewhere). Fork-join slots cannot be left: every handle is
  // joined before its frame returns. Run the leftovers here, newest first.
  while (w->head > w->base) {
    Slot& s = w->odq[w->head - 1];
    exec_fn fn = s.exec;
    void* data = s.data();
    if (pop(w) == pop_result::local) fn(data, w);
  }
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
