// Worksharing loops (long and unsigned long long iteration variables), ordered, and sections.
//
// Every loop is cut in the logical iteration space 0..n-1 (iteration i is start + i * incr), so
// the schedules are written once for both types. A loop's shared state lives in one of the team's
// worksharing slots (Team::ws, a ring): the first member to reach the construct sets it up, the last
// to leave frees it for the construct ws_ring later. static schedules need no shared state beyond
// that; dynamic hands out chunks with one fetch_add; guided with a CAS.
#include "omp_internal.hpp"

#include <plait/detail/backoff.hpp>


#include <stdlib.h>  // posix_memalign

#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace plait::omp {

// A short protocol wait (a worksharing slot still in use by a member ws_ring constructs behind, a
// slot being set up, an ordered turn): spin, then yield. These are waits for a few instructions
// of another member, or for its turn in a loop it is running — not waits for tasks.
template <class Cond>
static void spin_until(Cond done) noexcept {
  detail::Backoff<detail::omp_protocol_spins> b;
  while (!done()) b.pause();
}

template <class Init>
static WorkShare* ws_enter(Thread& t, Init init) noexcept {
  Team& team = *t.team;
  const std::uint64_t k = t.ws_seq++;
  WorkShare& s = team.ws[k % ws_ring];
  // acquire: pairs with ws_leave's release of the slot for construct k.
  spin_until([&] { return s.serves.load(std::memory_order_acquire) == k; });
  int st = 0;
  // acquire/release: the member that moves state 0 -> 1 sets the slot up and publishes it with 2.
  if (s.state.compare_exchange_strong(st, 1, std::memory_order_acquire, std::memory_order_acquire)) {
    init(s);
    s.state.store(2, std::memory_order_release);
  } else {
    spin_until([&] { return s.state.load(std::memory_order_acquire) == 2; });
  }
  t.ws = &s;
  return &s;
}

// ---- Doacross ----------------------------------------------------------------------------------
//
// A loop nest with ordered(n) and depend(sink/source) (GOMP_loop_doacross_*, GOMP_doacross_post
// and _wait). gcc hands the runtime the trip counts of the n ordered loops, counts[0] for the
// outermost (the collapsed loops, if any, flattened into it), and every post or wait names an
// iteration by its 0-based logical indices. The loop is shared out over the outermost index only,
// so each outermost iteration runs whole on one thread, its inner iterations in lexicographic
// order: one word per outermost iteration can say how far it got. `done[i]` is the position of
// the last posted iteration of outermost iteration i among its inner iterations, plus one (0:
// none). post stores it (release: the iteration's writes go with it); wait spins until the word
// of the iteration it names reaches that iteration's position plus one (acquire). A wait for an
// iteration outside the space returns at once (the standard ignores such a dependence). The cost:
// 8 bytes per outermost iteration, zeroed by the member that sets the loop up.
struct Doacross {
  unsigned dims = 0;
  std::vector<std::uint64_t> counts;        // the trip counts, outermost first
  std::unique_ptr<std::atomic<std::uint64_t>[]> done;
  // libomp's ABI (doacross_nest_*): the loop is shared out over the collapsed loops, which may be
  // more than the outermost, so iterations of one outermost index run on several threads; there
  // one bit per iteration of the whole nest says it was posted (libomp keeps the same table).
  std::unique_ptr<std::atomic<std::uint64_t>[]> bits;
};

static void free_doacross(WorkShare* s) noexcept {
  delete s->doacross;
  s->doacross = nullptr;
}

template <class T>
static Doacross* make_doacross(unsigned ncounts, const T* counts) {
  if (ncounts == 0) fatal("a doacross loop with no ordered loop (ncounts 0)");
  auto* d = new Doacross;
  d->dims = ncounts;
  d->counts.resize(ncounts);
  for (unsigned i = 0; i < ncounts; ++i) d->counts[i] = static_cast<std::uint64_t>(counts[i]);
  // (inner_position's arithmetic stays below 2^62)
  std::uint64_t inner = 1;
  for (unsigned i = 1; i < ncounts; ++i) {
    if (d->counts[i] != 0 && inner > (std::uint64_t{1} << 62) / d->counts[i])
      fatal("a doacross loop of more than 2^62 inner iterations per outermost one is not supported");
    inner *= d->counts[i];
  }
  const std::uint64_t n = d->counts[0];
  if (n > (std::uint64_t{1} << 40)) fatal("a doacross loop of %llu outermost iterations is not supported (at most 2^40)",
                                          static_cast<unsigned long long>(n));
  d->done.reset(new (std::nothrow) std::atomic<std::uint64_t>[n]());
  if (d->done == nullptr && n != 0)
    fatal("out of memory for a doacross loop of %llu outermost iterations", static_cast<unsigned long long>(n));
  return d;
}

// The position of iteration (idx(1), ..., idx(dims-1)) among the inner iterations, plus one; 0
// when an index lies outside its loop. idx is called in order, each index once.
template <class Get>
static std::uint64_t inner_position(const Doacross& d, Get idx) {
  std::uint64_t pos = 0;
  for (unsigned i = 1; i < d.dims; ++i) {
    const std::uint64_t v = idx(i);
    if (v >= d.counts[i]) return 0;
    pos = pos * d.counts[i] + v;
  }
  return pos + 1;
}

template <class T>
static void doacross_post(const T* counts) {
  Thread& t = thread_state();
  if (t.ws == nullptr || t.ws->doacross == nullptr) return;
  const Doacross& d = *t.ws->doacross;
  const std::uint64_t first = static_cast<std::uint64_t>(counts[0]);
  if (first >= d.counts[0]) return;
  const std::uint64_t pos = inner_position(d, [&](unsigned i) { return static_cast<std::uint64_t>(counts[i]); });
  if (pos == 0) return;
  // release: the iteration's writes before the post are visible to a wait that reads it.
  d.done[first].store(pos, std::memory_order_release);
}

template <class T>
static void doacross_wait(T first, std::va_list ap) {
  Thread& t = thread_state();
  if (t.ws == nullptr || t.ws->doacross == nullptr) return;
  const Doacross& d = *t.ws->doacross;
  const std::uint64_t f = static_cast<std::uint64_t>(first);
  if (f >= d.counts[0]) return;
  const std::uint64_t pos = inner_position(d, [&](unsigned) { return static_cast<std::uint64_t>(va_arg(ap, T)); });
  if (pos == 0) return;
  // acquire: pairs with the post's release.
  spin_until([&] { return d.done[f].load(std::memory_order_acquire) >= pos; });
}

static void ws_leave(Thread& t) noexcept {
  WorkShare* s = t.ws;
  t.ws = nullptr;
  if (s == nullptr) return;
  // acq_rel: the last member to leave sees every other member done with the slot.
  if (s->finished.fetch_add(1, std::memory_order_acq_rel) == t.team->n - 1) {
    const std::uint64_t k = s->serves.load(std::memory_order_relaxed);
    // relaxed: published by the release store of `serves` below.
    s->finished.store(0, std::memory_order_relaxed);
    s->state.store(0, std::memory_order_relaxed);
    s->next.store(0, std::memory_order_relaxed);
    s->ordered_next.store(0, std::memory_order_relaxed);
    s->canceled.store(false, std::memory_order_relaxed);
    free_doacross(s);
    s->red_state.store(0, std::memory_order_relaxed);
    s->red_first = nullptr;
    s->serves.store(k + ws_ring, std::memory_order_release);
  }
}

// A worksharing construct with a reduction(task, ...) (`reductions`, the compiler's block in the
// member's frame): every member opens a taskgroup for the construct's tasks and registers its own
// block; the first to get here allocates the team's private copies, the others share them (their
// blocks point to the same copies). GOMP_workshare_task_reduction_unregister ends it.
static void ws_task_reductions(Thread& t, WorkShare& s, std::uintptr_t* reductions) {
  GOMP_taskgroup_start();
  Taskgroup* g = innermost_taskgroup(t);
  g->workshare = true;
  const unsigned n = t.team != nullptr ? t.team->n : 1;
  int st = 0;
  // acquire/release: the member that moves 0 -> 1 registers first and publishes its block with 2.
  if (s.red_state.compare_exchange_strong(st, 1, std::memory_order_acquire, std::memory_order_acquire)) {
    register_task_reductions(reductions, g->reductions, nullptr, n);
    s.red_first = reductions;
    s.red_state.store(2, std::memory_order_release);
  } else {
    spin_until([&] { return s.red_state.load(std::memory_order_acquire) == 2; });
    register_task_reductions(reductions, g->reductions, s.red_first, n);
  }
  g->reductions = reductions;
}

// Team memory (the `mem` argument of the 5.0 worksharing entry points: lastprivate(conditional:)
// and scan): *mem holds the size asked for; every member gets the same zeroed block. The slot keeps
// its block (grown when a construct asks for more) and zeroes it for each construct, so the block
// outlives the construct as libgomp's does: until the slot serves again, ws_ring constructs later,
// by which time every member has left this one. The team frees it (~Team).
static void team_memory_init(WorkShare& s, void* const* mem) {
  if (mem == nullptr) return;
  const std::size_t size = reinterpret_cast<std::uintptr_t>(*mem);
  if (size > s.mem_cap) {
    std::free(s.mem_buf);
    s.mem_buf = nullptr;
    s.mem_cap = 0;
    if (posix_memalign(&s.mem_buf, cache_line, size) != 0) fatal("out of memory for %zu bytes of team memory", size);
    s.mem_cap = size;
  }
  if (size != 0) std::memset(s.mem_buf, 0, size);
}

// ---- The iteration space -----------------------------------------------------------------------

static std::int64_t trip_long(long start, long end, long incr) {
  if (incr > 0) {
    if (end <= start) return 0;
    return static_cast<std::int64_t>((static_cast<unsigned long>(end) - static_cast<unsigned long>(start) +
                                      static_cast<unsigned long>(incr) - 1) / static_cast<unsigned long>(incr));
  }
  if (start <= end) return 0;
  const unsigned long step = static_cast<unsigned long>(-(incr + 1)) + 1;  // -incr without overflow
  return static_cast<std::int64_t>((static_cast<unsigned long>(start) - static_cast<unsigned long>(end) + step - 1) / step);
}

static std::int64_t trip_ull(bool up, unsigned long long start, unsigned long long end, unsigned long long incr) {
  if (up) {
    if (end <= start) return 0;
    return static_cast<std::int64_t>((end - start + incr - 1) / incr);
  }
  if (start <= end) return 0;
  const unsigned long long step = -incr;
  return static_cast<std::int64_t>((start - end + step - 1) / step);
}

static void set_long(WorkShare& s, long start, long end, long incr, long chunk, int kind) {
  s.start = start;
  s.incr = incr;
  s.n = trip_long(start, end, incr);
  s.chunk = chunk;
  s.kind = kind;
}

static void set_ull(WorkShare& s, bool up, unsigned long long start, unsigned long long end, unsigned long long incr,
                    unsigned long long chunk, int kind) {
  s.ustart = start;
  s.uincr = incr;
  s.n = trip_ull(up, start, end, incr);
  s.chunk = static_cast<std::int64_t>(chunk);
  s.kind = kind;
}

// The kind and chunk a `runtime` (or auto) schedule means now.
static void resolve_kind(const Thread& t, int* kind, std::int64_t* chunk) {
  if (*kind == sched_runtime) {
    *kind = t.icv.run_sched == 4 ? sched_guided : t.icv.run_sched;
    *chunk = t.icv.run_chunk;
  } else if (*kind == sched_auto) {
    *kind = sched_guided;
    *chunk = 1;
  }
  if (*kind != sched_static && *chunk < 1) *chunk = 1;
}

// The next chunk [lo, hi) of logical iterations for thread t, or false when none is left.
static bool next_chunk(Thread& t, std::int64_t* lo, std::int64_t* hi, bool whole_ok) {
  WorkShare& s = *t.ws;
  const std::int64_t n = s.n;
  const std::int64_t nth = t.team->n;
  // relaxed: a cancellation flag; the loop's end orders the rest.
  if (s.canceled.load(std::memory_order_relaxed)) return false;
  if (nth == 1 && whole_ok) {
    // A team of one gets the rest of a loop's space as one chunk, whatever the schedule (libomp
    // does the same): with nobody to share the iterations with, they run in the same order either
    // way, and no program can tell chunks apart (ordered turns pass per chunk, a cancelled loop is
    // left at its cancellation point). A dynamic loop with chunk 1 otherwise pays a call per
    // iteration. (Not for sections: each call hands out one section by number.)
    std::int64_t a;
    if (s.kind == sched_static) {
      if (t.static_next > 0) return false;
      t.static_next = 1;
      a = 0;
    } else {
      // relaxed: as for dynamic below (and the team has no other member).
      a = s.next.load(std::memory_order_relaxed);
      s.next.store(n, std::memory_order_relaxed);
    }
    if (a >= n) return false;
    *lo = a;
    *hi = n;
    return true;
  }
  switch (s.kind) {
    case sched_static: {
      if (s.chunk <= 0) {  // one block per member: the first n % nth members get one more
        if (t.static_next > 0) return false;
        t.static_next = 1;
        const std::int64_t q = n / nth, r = n % nth, k = t.num;
        *lo = k * q + (k < r ? k : r);
        *hi = *lo + q + (k < r ? 1 : 0);
        return *lo < *hi;
      }
      const std::int64_t c = t.static_next++ * nth + t.num;  // this member's next chunk index
      if (c > (n - 1) / s.chunk || n == 0) return false;
      *lo = c * s.chunk;
      *hi = n - *lo > s.chunk ? *lo + s.chunk : n;
      return true;
    }
    case sched_dynamic: {
      // relaxed: the counter only hands out disjoint ranges; no data flows through it.
      const std::int64_t a = s.next.fetch_add(s.chunk, std::memory_order_relaxed);
      if (a >= n) return false;
      *lo = a;
      *hi = n - a > s.chunk ? a + s.chunk : n;
      return true;
    }
    default: {  // guided: about 1/(2 nth) of what is left, at least the chunk
      std::int64_t a = s.next.load(std::memory_order_relaxed);
      for (;;) {
        if (a >= n) return false;
        const std::int64_t rem = n - a;
        std::int64_t c = (rem + 2 * nth - 1) / (2 * nth);
        if (c < s.chunk) c = s.chunk;
        if (c > rem) c = rem;
        // relaxed: as for dynamic; on failure `a` is reloaded.
        if (s.next.compare_exchange_weak(a, a + c, std::memory_order_relaxed)) {
          *lo = a;
          *hi = a + c;
          return true;
        }
      }
    }
  }
}

// ordered: a member may enter the ordered region of logical iteration i once ordered_next == i.
// A member that leaves a chunk (or the loop) first waits for its turn and then passes the rest of
// its chunk, so iterations that skipped the ordered region do not hold the others up.
static void ordered_pass(Thread& t) {
  WorkShare& s = *t.ws;
  if (t.ord_iter >= t.ord_end) return;
  const std::int64_t mine = t.ord_iter;
  // acquire: pairs with the release store of the member before us.
  spin_until([&] { return s.ordered_next.load(std::memory_order_acquire) >= mine; });
  s.ordered_next.store(t.ord_end, std::memory_order_release);
  t.ord_iter = t.ord_end;
}

template <class T>
static bool hand_out(Thread& t, bool ordered, T* istart, T* iend, bool whole_ok = true) {
  if (ordered) ordered_pass(t);
  std::int64_t lo, hi;
  if (!next_chunk(t, &lo, &hi, whole_ok)) return false;
  if (ordered) {
    t.ord_iter = lo;
    t.ord_end = hi;
  }
  const WorkShare& s = *t.ws;
  if constexpr (sizeof(T) == sizeof(long) && static_cast<T>(-1) < 0) {
    *istart = static_cast<T>(static_cast<unsigned long>(s.start) + static_cast<unsigned long>(lo) * static_cast<unsigned long>(s.incr));
    *iend = static_cast<T>(static_cast<unsigned long>(s.start) + static_cast<unsigned long>(hi) * static_cast<unsigned long>(s.incr));
  } else {
    *istart = static_cast<T>(s.ustart + static_cast<unsigned long long>(lo) * s.uincr);
    *iend = static_cast<T>(s.ustart + static_cast<unsigned long long>(hi) * s.uincr);
  }
  return true;
}

// A thread outside every team runs a loop alone: the whole space is its one chunk. It still uses
// a team of one, so that the same code serves; made on first use and kept.
static Thread& loop_thread() {
  Thread& t = thread_state();
  if (t.team == nullptr) {
    static thread_local Team solo;
    static thread_local bool ready = false;
    if (!ready) {
      for (unsigned i = 0; i < ws_ring; ++i) solo.ws[i].serves.store(i, std::memory_order_relaxed);
      ready = true;
    }
    solo.n = 1;
    t.team = &solo;  // cleared again by loop_end (orphaned constructs outside a region)
  }
  return t;
}

static void loop_end_common(Thread& t, bool barrier) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_end(t);
  if (t.ws != nullptr && t.ord_end > 0) ordered_pass(t);
  t.ord_iter = t.ord_end = 0;
  ws_leave(t);
  if (t.team != nullptr && t.team->pool == nullptr && t.team->level == 0) {
    t.team = nullptr;  // the solo team of an orphaned loop outside every region
    return;
  }
  if (barrier) team_barrier(t);
}

// The end of a cancellable loop or sections (its barrier included): whether the team was cancelled.
static bool loop_end_cancel(Thread& t) {
  loop_end_common(t, true);
  return t.team != nullptr && t.team->canceled.load(std::memory_order_relaxed);
}

// scope with a reduction(task, ...): a worksharing slot only to meet the other members (entered,
// registered, left at once: the slot is freed when the last member has registered).
void scope_task_reductions(std::uintptr_t* reductions) {
  Thread& t = loop_thread();
  WorkShare* s = ws_enter(t, [](WorkShare& w) { w.n = 0; });
  ws_task_reductions(t, *s, reductions);
  loop_end_common(t, false);
}

// What every loop start does once its slot is set up: the construct's task reductions and team
// memory, the member's own state, then its first chunk.
template <class T>
static bool begin_loop(Thread& t, WorkShare& s, bool ordered, T* istart, T* iend, std::uintptr_t* reductions,
                       void** mem) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_begin(t, ompt::work_loop, static_cast<std::uint64_t>(s.n));
  if (reductions != nullptr) ws_task_reductions(t, s, reductions);
  if (mem != nullptr) *mem = s.mem_buf;
  t.static_next = 0;
  t.ord_iter = t.ord_end = 0;
  if (istart == nullptr) return true;  // a construct for its team memory alone (scan)
  return hand_out(t, ordered, istart, iend);
}

static bool start_long(long start, long end, long incr, int kind, long chunk, bool ordered, long* istart, long* iend,
                       std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
  Thread& t = loop_thread();
  std::int64_t ch = chunk;
  resolve_kind(t, &kind, &ch);
  WorkShare* s = ws_enter(t, [&](WorkShare& w) {
    set_long(w, start, end, incr, static_cast<long>(ch), kind);
    team_memory_init(w, mem);
  });
  return begin_loop(t, *s, ordered, istart, iend, reductions, mem);
}

static bool start_ull(bool up, unsigned long long start, unsigned long long end, unsigned long long incr, int kind,
                      unsigned long long chunk, bool ordered, unsigned long long* istart, unsigned long long* iend,
                      std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
  Thread& t = loop_thread();
  std::int64_t ch = static_cast<std::int64_t>(chunk);
  resolve_kind(t, &kind, &ch);
  WorkShare* s = ws_enter(t, [&](WorkShare& w) {
    set_ull(w, up, start, end, incr, static_cast<unsigned long long>(ch), kind);
    team_memory_init(w, mem);
  });
  return begin_loop(t, *s, ordered, istart, iend, reductions, mem);
}

// A doacross loop: the outermost ordered loop's 0..counts[0]-1 shared out as a loop of its own,
// with the doacross state set up with it.
template <class T>
static bool start_doacross(unsigned ncounts, const T* counts, int kind, std::int64_t chunk, T* istart, T* iend,
                           std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
  Thread& t = loop_thread();
  resolve_kind(t, &kind, &chunk);
  WorkShare* ws = ws_enter(t, [&](WorkShare& s) {
    team_memory_init(s, mem);
    if constexpr (std::is_signed_v<T>)
      set_long(s, 0, counts[0], 1, static_cast<long>(chunk), kind);
    else
      set_ull(s, true, 0, counts[0], 1, static_cast<unsigned long long>(chunk), kind);
    s.doacross = make_doacross(ncounts, counts);
  });
  return begin_loop(t, *ws, false, istart, iend, reductions, mem);
}

static bool next_long(bool ordered, long* istart, long* iend) {
  Thread& t = thread_state();
  if (t.ws == nullptr) return false;
  return hand_out(t, ordered, istart, iend);
}

static bool next_ull(bool ordered, unsigned long long* istart, unsigned long long* iend) {
  Thread& t = thread_state();
  if (t.ws == nullptr) return false;
  return hand_out(t, ordered, istart, iend);
}

// ---- libomp's ABI (kmp_loop.cpp) ----------------------------------------------------------------
//
// A dispatch loop runs the same schedules over the logical iterations 0..n-1; kmp_loop.cpp maps
// each chunk back to the program's bounds. The first chunk is handed out by the first `next`
// (libomp's init hands out nothing), and the last `next` leaves the loop (libomp's compilers call
// nothing after it but the barrier).
void dispatch_start_logical(std::int64_t n, int kind, std::int64_t chunk, bool ordered) {
  start_long(0, static_cast<long>(n), 1, kind, static_cast<long>(chunk), ordered, static_cast<long*>(nullptr),
             nullptr);
}

bool dispatch_next_logical(bool ordered, std::int64_t* lo, std::int64_t* hi) {
  Thread& t = thread_state();
  if (t.ws == nullptr) return false;
  long a, b;
  if (hand_out(t, ordered, &a, &b)) {
    *lo = a;
    *hi = b;
    return true;
  }
  loop_end_common(t, false);
  return false;
}

// A doacross nest of clang's: the loop itself is shared out by __kmpc_for_static_init (or a
// dispatch loop), so the nest's slot is entered for its table only and is not the thread's
// current loop (t.ws): the loop's own construct, if any, takes the next slot.
WorkShare* doacross_nest_start(unsigned dims, const std::uint64_t* counts) {
  Thread& t = loop_thread();
  WorkShare* ws = ws_enter(t, [&](WorkShare& s) {
    set_long(s, 0, 0, 1, 1, sched_static);
    auto* d = new Doacross;
    d->dims = dims;
    d->counts.assign(counts, counts + dims);
    std::uint64_t total = 1;
    for (unsigned i = 0; i < dims; ++i) {
      if (counts[i] != 0 && total > (std::uint64_t{1} << 40) / counts[i])
        fatal("a doacross loop nest of more than 2^40 iterations is not supported");
      total *= counts[i];
    }
    const std::uint64_t words = (total + 63) / 64;
    d->bits.reset(new (std::nothrow) std::atomic<std::uint64_t>[words == 0 ? 1 : words]());
    if (d->bits == nullptr)
      fatal("out of memory for a doacross loop nest of %llu iterations", static_cast<unsigned long long>(total));
    s.doacross = d;
  });
  t.ws = nullptr;
  return ws;
}

// The iteration's number in the nest (lexicographic), or false when an index lies outside.
static bool nest_position(const Doacross& d, const std::uint64_t* idx, std::uint64_t* pos) {
  std::uint64_t p = 0;
  for (unsigned i = 0; i < d.dims; ++i) {
    if (idx[i] >= d.counts[i]) return false;
    p = p * d.counts[i] + idx[i];
  }
  *pos = p;
  return true;
}

void doacross_nest_post(WorkShare& s, const std::uint64_t* idx) {
  const Doacross& d = *s.doacross;
  std::uint64_t p;
  if (!nest_position(d, idx, &p)) return;
  // release: the iteration's writes before the post are visible to a wait that sees the bit.
  d.bits[p / 64].fetch_or(std::uint64_t{1} << (p % 64), std::memory_order_release);
}

void doacross_nest_wait(WorkShare& s, const std::uint64_t* idx) {
  const Doacross& d = *s.doacross;
  std::uint64_t p;
  if (!nest_position(d, idx, &p)) return;  // a sink outside the nest is ignored
  const std::uint64_t bit = std::uint64_t{1} << (p % 64);
  // acquire: pairs with the post's release.
  spin_until([&] { return (d.bits[p / 64].load(std::memory_order_acquire) & bit) != 0; });
}

void doacross_nest_end(WorkShare* s) {
  Thread& t = thread_state();
  WorkShare* const cur = t.ws;
  t.ws = s;
  ws_leave(t);
  t.ws = cur;
  if (cur == nullptr && t.team != nullptr && t.team->pool == nullptr && t.team->level == 0)
    t.team = nullptr;  // the solo team of an orphaned nest outside every region (as loop_end_common)
}

// Combined parallel loops: each member enters the loop before running fn, which then calls _next.
namespace {
struct LoopParams {
  long start, end, incr, chunk;
  int kind;
};
struct SectionsParams {
  unsigned count;
};
}  // namespace

static void setup_loop(Thread& t, const void* p) {
  const auto& lp = *static_cast<const LoopParams*>(p);
  int kind = lp.kind;
  std::int64_t ch = lp.chunk;
  resolve_kind(t, &kind, &ch);
  WorkShare* s =
      ws_enter(t, [&](WorkShare& w) { set_long(w, lp.start, lp.end, lp.incr, static_cast<long>(ch), kind); });
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_begin(t, ompt::work_loop, static_cast<std::uint64_t>(s->n));
  t.static_next = 0;
  t.ord_iter = t.ord_end = 0;
}

static void setup_sections(Thread& t, const void* p) {
  const auto& sp = *static_cast<const SectionsParams*>(p);
  ws_enter(t, [&](WorkShare& s) { set_long(s, 1, static_cast<long>(sp.count) + 1, 1, 1, sched_dynamic); });
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_begin(t, ompt::work_sections, sp.count);
}

static void parallel_loop(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, long chunk, int kind) {
  note_abi(abi_gomp);
  LoopParams lp{start, end, incr, chunk, kind};
  parallel_with(fn, data, n, &setup_loop, &lp);
}

// The GOMP_1.0 split form: the team starts with the loop set up; the program runs fn(data) as
// member 0, then calls GOMP_parallel_end.
static void parallel_loop_start(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, long chunk,
                                int kind) {
  note_abi(abi_gomp);
  LoopParams lp{start, end, incr, chunk, kind};
  parallel_start_with(fn, data, n, &setup_loop, &lp, sizeof lp);
}

static unsigned section_next(Thread& t) {
  long lo, hi;
  if (t.ws == nullptr || !hand_out(t, false, &lo, &hi, /*whole_ok=*/false)) return 0;
  return static_cast<unsigned>(lo);
}

}  // namespace plait::omp

using namespace plait::omp;

using ull = unsigned long long;

extern "C" {

// ---- long loops ----
bool GOMP_loop_static_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_static, c, false, a, b); }
bool GOMP_loop_dynamic_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_dynamic, c, false, a, b); }
bool GOMP_loop_guided_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_guided, c, false, a, b); }
bool GOMP_loop_runtime_start(long s, long e, long i, long* a, long* b) { return start_long(s, e, i, sched_runtime, 0, false, a, b); }
bool GOMP_loop_nonmonotonic_dynamic_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_dynamic, c, false, a, b); }
bool GOMP_loop_nonmonotonic_guided_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_guided, c, false, a, b); }
bool GOMP_loop_nonmonotonic_runtime_start(long s, long e, long i, long* a, long* b) { return start_long(s, e, i, sched_runtime, 0, false, a, b); }
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long s, long e, long i, long* a, long* b) { return start_long(s, e, i, sched_runtime, 0, false, a, b); }

bool GOMP_loop_start(long s, long e, long i, long sched, long c, long* a, long* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_long(s, e, i, kind, c, false, a, b, reductions, mem);
}

// ---- doacross ----
bool GOMP_loop_doacross_static_start(unsigned n, long* counts, long c, long* a, long* b) { return start_doacross(n, counts, sched_static, c, a, b); }
bool GOMP_loop_doacross_dynamic_start(unsigned n, long* counts, long c, long* a, long* b) { return start_doacross(n, counts, sched_dynamic, c, a, b); }
bool GOMP_loop_doacross_guided_start(unsigned n, long* counts, long c, long* a, long* b) { return start_doacross(n, counts, sched_guided, c, a, b); }
bool GOMP_loop_doacross_runtime_start(unsigned n, long* counts, long* a, long* b) { return start_doacross(n, counts, sched_runtime, 0, a, b); }
bool GOMP_loop_doacross_start(unsigned n, long* counts, long sched, long c, long* a, long* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_doacross(n, counts, kind, c, a, b, reductions, mem);
}
bool GOMP_loop_ull_doacross_static_start(unsigned n, ull* counts, ull c, ull* a, ull* b) { return start_doacross(n, counts, sched_static, static_cast<std::int64_t>(c), a, b); }
bool GOMP_loop_ull_doacross_dynamic_start(unsigned n, ull* counts, ull c, ull* a, ull* b) { return start_doacross(n, counts, sched_dynamic, static_cast<std::int64_t>(c), a, b); }
bool GOMP_loop_ull_doacross_guided_start(unsigned n, ull* counts, ull c, ull* a, ull* b) { return start_doacross(n, counts, sched_guided, static_cast<std::int64_t>(c), a, b); }
bool GOMP_loop_ull_doacross_runtime_start(unsigned n, ull* counts, ull* a, ull* b) { return start_doacross(n, counts, sched_runtime, 0, a, b); }
bool GOMP_loop_ull_doacross_start(unsigned n, ull* counts, long sched, ull c, ull* a, ull* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_doacross(n, counts, kind, static_cast<std::int64_t>(c), a, b, reductions, mem);
}
void GOMP_doacross_post(long* counts) { doacross_post(counts); }
void GOMP_doacross_ull_post(ull* counts) { doacross_post(counts); }
void GOMP_doacross_wait(long first, ...) {
  std::va_list ap;
  va_start(ap, first);
  doacross_wait(first, ap);
  va_end(ap);
}
void GOMP_doacross_ull_wait(ull first, ...) {
  std::va_list ap;
  va_start(ap, first);
  doacross_wait(first, ap);
  va_end(ap);
}

bool GOMP_loop_ordered_static_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_static, c, true, a, b); }
bool GOMP_loop_ordered_dynamic_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_dynamic, c, true, a, b); }
bool GOMP_loop_ordered_guided_start(long s, long e, long i, long c, long* a, long* b) { return start_long(s, e, i, sched_guided, c, true, a, b); }
bool GOMP_loop_ordered_runtime_start(long s, long e, long i, long* a, long* b) { return start_long(s, e, i, sched_runtime, 0, true, a, b); }
bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long* a, long* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_long(s, e, i, kind, c, true, a, b, reductions, mem);
}

bool GOMP_loop_static_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_dynamic_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_guided_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_runtime_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_nonmonotonic_dynamic_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_nonmonotonic_guided_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_nonmonotonic_runtime_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* a, long* b) { return next_long(false, a, b); }
bool GOMP_loop_ordered_static_next(long* a, long* b) { return next_long(true, a, b); }
bool GOMP_loop_ordered_dynamic_next(long* a, long* b) { return next_long(true, a, b); }
bool GOMP_loop_ordered_guided_next(long* a, long* b) { return next_long(true, a, b); }
bool GOMP_loop_ordered_runtime_next(long* a, long* b) { return next_long(true, a, b); }

// ---- unsigned long long loops ----
bool GOMP_loop_ull_static_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_static, c, false, a, b); }
bool GOMP_loop_ull_dynamic_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_dynamic, c, false, a, b); }
bool GOMP_loop_ull_guided_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_guided, c, false, a, b); }
bool GOMP_loop_ull_runtime_start(bool up, ull s, ull e, ull i, ull* a, ull* b) { return start_ull(up, s, e, i, sched_runtime, 0, false, a, b); }
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_dynamic, c, false, a, b); }
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_guided, c, false, a, b); }
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* a, ull* b) { return start_ull(up, s, e, i, sched_runtime, 0, false, a, b); }
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* a, ull* b) { return start_ull(up, s, e, i, sched_runtime, 0, false, a, b); }
bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull c, ull* a, ull* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_ull(up, s, e, i, kind, c, false, a, b, reductions, mem);
}
bool GOMP_loop_ull_ordered_static_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_static, c, true, a, b); }
bool GOMP_loop_ull_ordered_dynamic_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_dynamic, c, true, a, b); }
bool GOMP_loop_ull_ordered_guided_start(bool up, ull s, ull e, ull i, ull c, ull* a, ull* b) { return start_ull(up, s, e, i, sched_guided, c, true, a, b); }
bool GOMP_loop_ull_ordered_runtime_start(bool up, ull s, ull e, ull i, ull* a, ull* b) { return start_ull(up, s, e, i, sched_runtime, 0, true, a, b); }
bool GOMP_loop_ull_ordered_start(bool up, ull s, ull e, ull i, long sched, ull c, ull* a, ull* b, std::uintptr_t* reductions, void** mem) {
  const int kind = static_cast<int>(static_cast<unsigned long>(sched) & ~sched_monotonic);
  return start_ull(up, s, e, i, kind, c, true, a, b, reductions, mem);
}
bool GOMP_loop_ull_static_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_dynamic_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_guided_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_runtime_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_nonmonotonic_dynamic_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_nonmonotonic_guided_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_nonmonotonic_runtime_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(ull* a, ull* b) { return next_ull(false, a, b); }
bool GOMP_loop_ull_ordered_static_next(ull* a, ull* b) { return next_ull(true, a, b); }
bool GOMP_loop_ull_ordered_dynamic_next(ull* a, ull* b) { return next_ull(true, a, b); }
bool GOMP_loop_ull_ordered_guided_next(ull* a, ull* b) { return next_ull(true, a, b); }
bool GOMP_loop_ull_ordered_runtime_next(ull* a, ull* b) { return next_ull(true, a, b); }

void GOMP_loop_end(void) { loop_end_common(thread_state(), true); }
void GOMP_loop_end_nowait(void) { loop_end_common(thread_state(), false); }
bool GOMP_loop_end_cancel(void) { return loop_end_cancel(thread_state()); }

// ---- ordered ----
void GOMP_ordered_start(void) {
  Thread& t = thread_state();
  if (t.ws == nullptr) return;
  WorkShare& s = *t.ws;
  const std::int64_t mine = t.ord_iter;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquire(ompt::mutex_ordered, 0, &s);  // (the loop's slot: its wait id)
  // acquire: pairs with the release store of the member whose turn came before.
  spin_until([&] { return s.ordered_next.load(std::memory_order_acquire) >= mine; });
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquired(ompt::mutex_ordered, &s);
}
void GOMP_ordered_end(void) {
  Thread& t = thread_state();
  if (t.ws == nullptr) return;
  ++t.ord_iter;
  // release: this iteration's ordered region happens-before the next one's.
  t.ws->ordered_next.store(t.ord_iter, std::memory_order_release);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_released(ompt::mutex_ordered, t.ws);
}

// ---- combined parallel loops ----
void GOMP_parallel_loop_static(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c, unsigned) { parallel_loop(fn, d, n, s, e, i, c, sched_static); }
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c, unsigned) { parallel_loop(fn, d, n, s, e, i, c, sched_dynamic); }
void GOMP_parallel_loop_guided(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c, unsigned) { parallel_loop(fn, d, n, s, e, i, c, sched_guided); }
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, unsigned) { parallel_loop(fn, d, n, s, e, i, 0, sched_runtime); }
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c, unsigned) { parallel_loop(fn, d, n, s, e, i, c, sched_dynamic); }
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c, unsigned) { parallel_loop(fn, d, n, s, e, i, c, sched_guided); }
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, unsigned) { parallel_loop(fn, d, n, s, e, i, 0, sched_runtime); }
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, unsigned) { parallel_loop(fn, d, n, s, e, i, 0, sched_runtime); }
void GOMP_parallel_loop_static_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) { parallel_loop_start(fn, d, n, s, e, i, c, sched_static); }
void GOMP_parallel_loop_dynamic_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) { parallel_loop_start(fn, d, n, s, e, i, c, sched_dynamic); }
void GOMP_parallel_loop_guided_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) { parallel_loop_start(fn, d, n, s, e, i, c, sched_guided); }
void GOMP_parallel_loop_runtime_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i) { parallel_loop_start(fn, d, n, s, e, i, 0, sched_runtime); }

// ---- sections ----
unsigned GOMP_sections_start(unsigned count) {
  Thread& t = loop_thread();
  ws_enter(t, [&](WorkShare& s) { set_long(s, 1, static_cast<long>(count) + 1, 1, 1, sched_dynamic); });
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_begin(t, ompt::work_sections, count);
  return section_next(t);
}
unsigned GOMP_sections2_start(unsigned count, std::uintptr_t* reductions, void** mem) {
  if (reductions == nullptr && mem == nullptr) return GOMP_sections_start(count);
  Thread& t = loop_thread();
  WorkShare* s = ws_enter(t, [&](WorkShare& w) {
    set_long(w, 1, static_cast<long>(count) + 1, 1, 1, sched_dynamic);
    team_memory_init(w, mem);
  });
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_begin(t, ompt::work_sections, count);
  if (reductions != nullptr) ws_task_reductions(t, *s, reductions);
  if (mem != nullptr) *mem = s->mem_buf;
  return section_next(t);
}
unsigned GOMP_sections_next(void) { return section_next(thread_state()); }
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned n, unsigned count, unsigned) {
  note_abi(abi_gomp);
  SectionsParams sp{count};
  parallel_with(fn, data, n, &setup_sections, &sp);
}
void GOMP_parallel_sections_start(void (*fn)(void*), void* data, unsigned n, unsigned count) {
  note_abi(abi_gomp);
  SectionsParams sp{count};
  parallel_start_with(fn, data, n, &setup_sections, &sp, sizeof sp);
}
void GOMP_sections_end(void) { loop_end_common(thread_state(), true); }
void GOMP_sections_end_nowait(void) { loop_end_common(thread_state(), false); }
bool GOMP_sections_end_cancel(void) { return loop_end_cancel(thread_state()); }

}  // extern "C"
