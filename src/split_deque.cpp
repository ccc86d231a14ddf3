// The split deque's slow paths: publishing private slots, taking shared slots back, claiming
// them. The fast paths (push/pop of private slots) are inline in
// include/plait/detail/split_deque.hpp, with the layout; docs/design.md ("The split deque") has
// the invariants and the memory-order argument.
//
// Who writes what:
//   ts (tail|split)  thieves: CAS tail -> tail+k (only while tail+k <= split)
//                    owner:   fetch_add on split (publish), CAS split down (take back, reclaim),
//                             plain store (reset, only while tail == split, when no CAS can succeed)
//   req, push_limit, thieves: request(); owner: settle()
//   pop_limit
//   slot.thief       thief: store(mark, release) once it has read exec/data; owner: re-zero
//   everything else  owner only
#include <plait/detail/backoff.hpp>
#include <plait/detail/split_deque.hpp>


namespace plait::detail {

protocol_hook g_protocol_hook = nullptr;

// Thief: ask the owner to publish work (its next push or pop goes to the slow path), unless a
// request is already pending: then the line is left alone, as idle thieves keep reading it
// (relaxed load: a hint; a request that lands just after it is served all the same).
//   A: req.fetch_or(req_steal)  B: push_limit = 0  C: pop_limit = ~0       (in this order)
// acq_rel on A and release on B/C pair with the owner's acq_rel exchanges in settle(): see there.
void SplitDeque::request() noexcept {
  if (req.load(std::memory_order_relaxed) != 0) return;
  req.fetch_or(req_steal, std::memory_order_acq_rel);
  push_limit.store(0, std::memory_order_release);
  pop_limit.store(pop_limit_requested, std::memory_order_release);
}

// Owner: make the `grow` oldest private slots [split, split + grow) stealable.
void SplitDeque::publish(std::uint32_t grow) noexcept {
  at_point(protocol_point::publish);
  // release: the slots being published were written with plain stores by this thread; a thief's
  // acquire CAS that reads this value (or any later RMW in its release sequence) sees them.
  // split lives in the low 32 bits and stays below 2^32, so the add never carries into tail.
  ts.fetch_add(grow, std::memory_order_acq_rel);
  split += grow;
  ++fresh;
}

// Owner: make the older half (rounded up) of the private slots [split, limit) stealable.
// Returns false when there is nothing private to publish.
bool SplitDeque::publish_half(std::uint32_t limit) noexcept {
  if (limit <= split) return false;
  publish((limit - split + 1) / 2);
  return true;
}

void SplitDeque::check_invariants() const noexcept {
#ifndef NDEBUG
  // relaxed: the owner's own word; thieves only move tail, and only up to split.
  const std::uint64_t v = ts.load(std::memory_order_relaxed);
  PLAIT_ASSERT(ts_split(v) == split);  // 3: the owner's split is the word's
  PLAIT_ASSERT(ts_tail(v) <= split);   // 1
  if (allstolen)
    PLAIT_ASSERT(ts_tail(v) == split && head <= split);  // 1, the all-stolen state
  else
    PLAIT_ASSERT(split <= head);  // 1
  PLAIT_ASSERT(base <= head);     // 6 (a frame's pops stop at its base)
  PLAIT_ASSERT(head <= capacity);
#endif
}

// Owner, at the end of every slow path: put the fast-path limits back to what the deque state
// says (push_limit = capacity, or 0 while all-stolen; pop_limit = split) and serve any pending
// request by publishing half of the private slots below `protect` (the slot being pushed or
// popped is never published).
//
// No request is lost. The owner does R1: push_limit.exchange, R2: pop_limit.exchange, then
// X: req.exchange(0). A thief does A: req.fetch_or, then B/C: the limit stores (request).
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
// Debug builds then check the invariants.
void SplitDeque::settle(std::uint32_t protect) noexcept {
  for (;;) {
    const std::uint32_t want_push = allstolen || go_slow ? 0 : capacity;
    const std::uint32_t want_pop = go_slow ? pop_limit_requested : split;
    if (push_limit.load(std::memory_order_relaxed) != want_push) push_limit.exchange(want_push, std::memory_order_acq_rel);
    if (pop_limit.load(std::memory_order_relaxed) != want_pop) pop_limit.exchange(want_pop, std::memory_order_acq_rel);
    if (req.load(std::memory_order_relaxed) == 0) break;
    if ((req.exchange(0, std::memory_order_acq_rel) & req_steal) == 0) break;
    if (!publish_half(protect)) {
      // Nothing private below `protect` to publish now. Dropping the request here would lose it: a
      // thief that asked and then went to sleep would never be woken (no publish, no wake-up)
      // while this owner went on pushing privately. Keep it pending instead, so that the next
      // push or pop serves it. relaxed: the owner's own flags; a thief's concurrent request()
      // writes the same values.
      req.fetch_or(req_steal, std::memory_order_relaxed);
      push_limit.store(0, std::memory_order_relaxed);
      pop_limit.store(pop_limit_requested, std::memory_order_relaxed);
      break;
    }
  }
  check_invariants();
}

// Owner, entering a task_group wait with private children of the group still queued: if some
// were published while it added them (split rose above the group's floor), a thief asked during
// that burst and got half of what existed *at that moment*. The rest would stay private until our
// next pop, after the child we are about to run. So top up now: publish half of the group's
// private children; the top slot (head - 1) stays private, the wait pops it next. settle() then
// raises pop_limit to the new split, so that the pop fast path cannot take a published slot.
void SplitDeque::top_up(std::uint32_t floor) noexcept {
  if (split <= floor || head < split + 2) return;
  const std::uint32_t top = head - 1;
  publish_half(top);
  settle(top);
}

// Owner, about to run a coarse child: publish every private slot, so no thief waits for one we
// hold while the child runs. settle() raises pop_limit to the new split (the next pop goes slow).
void SplitDeque::supply_all() noexcept {
  if (head <= split) return;  // nothing private (also true while all-stolen)
  publish(head - split);
  settle(head);
}

void SplitDeque::serve() noexcept { settle(head); }

std::uint32_t SplitDeque::push_slow(exec_fn exec, std::uintptr_t tagged) noexcept {
  const std::uint32_t h = head;
  if (h >= capacity) {  // full: the caller runs the task inline
    settle(h);
    return no_slot;
  }
  Slot& s = own[h];
  s.exec = exec;
  s.tagged = tagged;
  head = h + 1;
  if (allstolen) {
    // Every shared slot was stolen and tail == split, so no thief CAS can succeed until ts
    // changes: a plain store is safe. The new slot (h) becomes shared at once, which is what a
    // thief that emptied us wants next.
    at_point(protocol_point::reset);
    // release: publishes the slot written above to thieves' acquire CAS.
    ts.store(ts_pack(h, h + 1), std::memory_order_release);
    split = h + 1;
    allstolen = false;
    ++fresh;
  }
  settle(h + 1);
  return h;
}

bool SplitDeque::take_back(std::uint32_t h) noexcept {
  if (h >= split) {
    // Slot h is private; we got here because a thief asked for work (or go_slow). Publish half of
    // the private slots below h (never h itself: we are about to run it).
    settle(h);
    return true;
  }
  // Slot h was shared.
  if (!allstolen) {
    PLAIT_ASSERT(h + 1 == split);  // pops are LIFO: h is the newest shared slot
    std::uint64_t v = ts.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t t = ts_tail(v), s = ts_split(v);
      if (t == s) {
        // Thieves took every shared slot, h included (h < s == t). The word is now frozen until we
        // store a new one (push_slow), so later pops need not look at it.
        allstolen = true;
        break;
      }
      // Take back the newer half of [t, s); h = s-1 >= t + (s-t)/2 stays with us. With take_one
      // only h: the rest stay the thieves'.
      const std::uint32_t ns = take_one ? s - 1 : t + (s - t) / 2;
      at_point(protocol_point::take_back);
      // acq_rel/relaxed: the CAS is what makes slot h ours (thieves CAS the same word, so exactly
      // one of us wins); no data flows from thieves to us here. acq_rel rather than relaxed keeps
      // the release sequence of our earlier publish obviously intact for readers of the proof and
      // for ThreadSanitizer. On failure v is reloaded and we retry: a thief moved tail.
      if (ts.compare_exchange_weak(v, ts_pack(t, ns), std::memory_order_acq_rel, std::memory_order_relaxed)) {
        split = ns;
        settle(h);
        return true;
      }
    }
  }
  settle(h);
  // Stolen. Before the slot may be reused, its thief must have read exec/data: wait for its mark
  // (the thief is between its CAS and its release store: a few instructions, unless preempted).
  Slot& s = own[h];
  std::uint32_t mark;
  Backoff<thief_mark_spins> b;
  // acquire: pairs with the thief's release store after its reads of the slot.
  while ((mark = s.thief.load(std::memory_order_acquire)) == 0) {
    at_point(protocol_point::wait_mark);
    b.pause();
  }
  // The slot is ours again: restore the "free slots hold 0" invariant that lets a push skip it.
  // relaxed: no thief reads this slot until a later publish (a release) covers it.
  s.thief.store(0, std::memory_order_relaxed);
  last_thief = mark;
  return false;
}

bool SplitDeque::reclaim(std::uint32_t i) noexcept {
  PLAIT_ASSERT(i + 1 < head && i >= base);
  if (i >= split) return true;
  if (allstolen) return false;  // every shared slot, i among them, was stolen
  std::uint64_t v = ts.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint32_t t = ts_tail(v);
    PLAIT_ASSERT(i < ts_split(v));  // invariant 3: our split is the word's split
    if (i < t) return false;
    at_point(protocol_point::reclaim);
    // acq_rel/relaxed: as the take-back CAS. On failure v is reloaded: a thief moved tail.
    if (ts.compare_exchange_weak(v, ts_pack(t, i), std::memory_order_acq_rel, std::memory_order_relaxed)) {
      split = i;
      // pop_limit down to the new split (slots [i, head) are private now); a pending request is
      // kept pending, as nothing below i is private.
      settle(i);
      return true;
    }
  }
}

void SplitDeque::hold_stolen(std::uint32_t h) noexcept {
  // take_back found slot h stolen and left the deque all-stolen (h < split == tail), head h.
  PLAIT_ASSERT(head == h && allstolen && h < split);
  head = h + 1;  // <= split: still the all-stolen state
  check_invariants();
}

void SplitDeque::release_stolen(std::uint32_t h) noexcept {
  // Whatever ran since hold_stolen pushed above h + 1 and popped it all again. If the first of
  // those pushes reset the all-stolen deque (push_slow: tail = split = h + 1, then a publish
  // above), their pops may have taken the shared slots back down to tail = split = h + 1 and left
  // allstolen clear. Every slot below h + 1 was stolen then (tail passed it): that is the
  // all-stolen state again, now with head h <= split.
  PLAIT_ASSERT(head == h + 1);
  if (!allstolen) {
    // relaxed: our own word; thieves only move tail, and only up to split.
    PLAIT_ASSERT(ts_tail(ts.load(std::memory_order_relaxed)) == h + 1 && split == h + 1);
    allstolen = true;
  }
  head = h;
  settle(h);  // push_limit back to 0 (all-stolen); a pending request stays pending (nothing private)
}

claim SplitDeque::try_claim(const claim_rule& rule) noexcept {
  // relaxed: only a hint; the CAS below re-validates and acquires.
  std::uint64_t cur = ts.load(std::memory_order_relaxed);
  const std::uint32_t t = ts_tail(cur), s = ts_split(cur);
  if (t >= s) {
    // Nothing shared: ask the owner to publish at its next push or pop. Also while the owner is
    // all-stolen (push_limit 0): an owner that runs a loop without pushing learns from `req` that
    // someone is hungry (the adaptive loop partitioner splits on it).
    request();
    return {steal_result::empty};
  }
  const std::uint32_t k = rule.amount(s - t);
  at_point(protocol_point::steal);
  // acquire on success: synchronises with the owner's release that published slots [t, t+k), so
  // the thief's reads of exec/data see what the owner wrote. Taking k slots is the same
  // single-word CAS as taking one: the owner's take-back CAS and other thieves' CASes on `ts` are
  // totally ordered with it, so each slot goes to exactly one of them.
  if (!ts.compare_exchange_strong(cur, ts_pack(t + k, s), std::memory_order_acq_rel, std::memory_order_relaxed))
    return {steal_result::contended};
  // We emptied the shared part: ask for the refill now, while our task runs, rather than when we
  // come back empty-handed (the owner serves a request only at its next push or pop).
  if (t + k == s) request();
  return {steal_result::success, t, k};
}

}  // namespace plait::detail
