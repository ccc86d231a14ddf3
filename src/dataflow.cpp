// plait::dataflow_group: the dependence table (an interval map over byte addresses), the edges
// between task nodes, mutexinoutset exclusion, and the hand-over of ready tasks to a task_group.
// docs/dataflow.md explains the data structures, the rules per mode and every memory order.
#include <plait/dataflow.hpp>
#include <plait/detail/backoff.hpp>

#include "pool_impl.hpp"
#include "task_alloc_resource.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>


namespace plait::detail {

// Test-and-test-and-set lock. Held only for table updates (run()) and for the bookkeeping of a
// finishing task: short critical sections that never call user code or push to a deque (but
// for an edge observer's call: set_df_edge_observer).
class spin_lock {
 public:
  void lock() noexcept {
    for (;;) {
      // acquire: everything the previous holder wrote inside its critical section (table,
      // counts, `done` flags) is visible to us once we own the lock.
      if (!held_.exchange(true, std::memory_order_acquire)) return;
      // The holder may be preempted (more workers than cores): the backoff yields after its spins.
      Backoff<spin_lock_spins> b;
      // relaxed: only a hint to retry the exchange, which does the synchronising.
      while (held_.load(std::memory_order_relaxed)) b.pause();
    }
  }
  // release: publishes our critical section to the next acquirer.
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// The members of one mutexinoutset set: at most one of them holds it at a time; members that
// became ready while it was held queue here (FIFO, through dep_node::link).
struct mutex_set {
  std::int32_t refs = 0;  // segments whose current set it is + member nodes not yet finished
  bool held = false;
  dep_node* head = nullptr;
  dep_node* tail = nullptr;
};

// What the last accesses to one byte range were. Every byte of the range has the same history.
enum class seg_kind : std::uint8_t {
  none,   // nothing written yet (only readers, if any)
  write,  // gen = the last out/inout task
  set,    // gen = the members of the current inoutset set; before = what they wait for
  mset,   // the same for mutexinoutset; ms = the set's exclusion record
};

// A list of nodes with room for one inline (most segments have one writer and no reader).
// Segments live in map nodes, which never move, so `data` may point at `inl`.
struct node_vec {
  dep_node** data = inl;
  std::uint32_t n = 0, cap = 1;
  dep_node* inl[1];

  node_vec() = default;
  node_vec(const node_vec&) = delete;
  node_vec& operator=(const node_vec&) = delete;
  ~node_vec() {
    if (data != inl) delete[] data;
  }
  bool empty() const noexcept { return n == 0; }
  dep_node** begin() const noexcept { return data; }
  dep_node** end() const noexcept { return data + n; }
  void push_back(dep_node* x) {
    if (PLAIT_UNLIKELY(n == cap)) {
      auto* d = new dep_node*[cap * 2];
      for (std::uint32_t i = 0; i < n; ++i) d[i] = data[i];
      if (data != inl) delete[] data;
      data = d;
      cap *= 2;
    }
    data[n++] = x;
  }
  void clear() noexcept { n = 0; }
  void copy_from(const node_vec& o) {
    clear();
    for (dep_node* x : o) push_back(x);
  }
  // Takes o's entries (this must be empty); o is left empty.
  void take(node_vec& o) noexcept {
    if (o.data == o.inl) {
      if (o.n) data[0] = o.inl[0];  // our buffer (inline or not) has room for one
      n = o.n;
    } else {
      if (data != inl) delete[] data;
      data = o.data;
      n = o.n;
      cap = o.cap;
      o.data = o.inl;
      o.cap = 1;
    }
    o.n = 0;
  }
};

struct segment {
  std::uintptr_t end;  // the range is [key, end)
  seg_kind kind = seg_kind::none;
  mutex_set* ms = nullptr;
  node_vec gen;      // last write generation (one writer, or the members of a set)
  node_vec before;   // for sets: the predecessors every member waits for (joiners need them)
  node_vec readers;  // in-tasks since the last write generation
  explicit segment(std::uintptr_t e) : end(e) {}
};

using seg_map = std::pmr::map<std::uintptr_t, segment>;

inline constexpr std::size_t sweep_min = 16384;  // segments before the first sweep

struct dataflow_state {
  spin_lock mu;
  // Everything below is protected by mu.
  task_alloc_resource nodes;  // the map's nodes: the pool's magazines (used under mu only)
  seg_map segs{&nodes};
  seg_map::iterator finger = segs.end();  // the segment touched last: most accesses start there or just after
  Worker* creator = nullptr;  // the worker (or no_worker) and dataflow depth of the creating task
  int creator_depth = 0;
  std::size_t sweep_at = sweep_min;  // sweep the table when it has this many segments
  std::int64_t live = 0;  // tasks submitted and not finished
  bool has_error = false;
  std::exception_ptr error;
  // relaxed everywhere: a hint read before running a task; a task that misses a concurrent
  // cancellation simply runs (as if it had started just before). The exception itself travels
  // under mu.
  std::atomic<bool> canceled{false};
};

// Unfinished tasks at which run() stops creating and helps until the group is drained.
inline constexpr std::int64_t throttle_tasks = 4096;

// How many dataflow task bodies (of any group) this thread is inside. run() throttles only when
// called by the task that created the group: on the creating worker, at the depth of the
// creation. From inside a dataflow task the drain could wait for a task that (directly or
// through a nested group) waits for the caller: a deadlock.
constinit thread_local int tl_df_depth __attribute__((tls_model("initial-exec"))) = 0;

void* df_alloc(std::size_t bytes, Pool** home) {
  constexpr std::size_t align = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  Pool* const p = task_alloc_resource::current_pool();
  *home = p;
  if (p == nullptr) return ::operator new(bytes, std::align_val_t{align});  // run() will refuse it
  return pool_alloc_bytes(p, bytes, align);
}

void df_free(void* mem, std::size_t bytes, Pool* home) noexcept {
  constexpr std::size_t align = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  if (home == nullptr) {
    ::operator delete(mem, std::align_val_t{align});
    return;
  }
  pool_free_bytes(home, mem, bytes, align);
}

namespace {

void free_node(dep_node* n) noexcept {
  n->succ.release();
  n->msets.release();
  n->op(n, dep_node::op_free);
}

inline void ref(dep_node* n) noexcept { ++n->refs; }
inline void unref(dep_node* n) noexcept {
  if (--n->refs == 0) free_node(n);
}
inline void ms_unref(mutex_set* m) noexcept {
  if (m && --m->refs == 0) delete m;
}

void drop(node_vec& v) noexcept {
  for (dep_node* n : v) unref(n);
  v.clear();
}

bool all_done(const node_vec& v) noexcept {
  for (dep_node* n : v)
    if (!n->done) return false;
  return true;
}

// Before a list of readers (or set members) grows, the finished ones leave it: a long run of
// readers without a writer must not keep every finished reader alive.
void push_pruned(node_vec& v, dep_node* x) {
  if (v.n == v.cap) {
    std::uint32_t k = 0;
    for (std::uint32_t i = 0; i < v.n; ++i) {
      if (v.data[i]->done) {
        unref(v.data[i]);
      } else {
        v.data[k++] = v.data[i];
      }
    }
    v.n = k;
  }
  v.push_back(x);
  ref(x);
}

void add_ref_all(const node_vec& v) noexcept {
  for (dep_node* n : v) ref(n);
}

// p -> x. No edge to oneself (a task with two overlapping accesses), none from a finished task,
// and none twice: while x is being registered nothing else appends to p->succ (we hold the lock),
// so a duplicate would be p->succ's last entry.
std::atomic<df_edge_observer> edge_observer{nullptr};

inline void add_edge(dep_node* p, dep_node* x) {
  if (p == x || p->done) return;
  if (Worker* w = tl_worker; PLAIT_UNLIKELY(tracing(w))) trace_df(w, trace::ev::df_edge, x, p);
  if (p->succ.size != 0 && p->succ.back() == x) return;
  p->succ.push(x);
  ++x->npred;
  // relaxed: set once, before the tasks it observes exist (set_df_edge_observer).
  if (df_edge_observer f = edge_observer.load(std::memory_order_relaxed); PLAIT_UNLIKELY(f != nullptr)) f(p, x);
}

inline void edges_from(const node_vec& v, dep_node* x) {
  for (dep_node* p : v) add_edge(p, x);
}

void join_set(dep_node* x, mutex_set* m) {
  for (std::uint32_t i = 0; i < x->msets.size; ++i)
    if (x->msets.data[i] == m) return;
  x->msets.push(m);
  ++m->refs;
}

// All of x's sets free: take them all (all or nothing, under the one lock: no deadlock between
// tasks that share several sets). Otherwise x waits in the queue of the first busy one.
bool try_acquire(dep_node* x) noexcept {
  for (std::uint32_t i = 0; i < x->msets.size; ++i) {
    mutex_set* m = x->msets.data[i];
    if (m->held) {
      x->link = nullptr;
      if (m->tail) {
        m->tail->link = x;
      } else {
        m->head = x;
      }
      m->tail = x;
      return false;
    }
  }
  for (std::uint32_t i = 0; i < x->msets.size; ++i) x->msets.data[i]->held = true;
  x->acquired = true;
  return true;
}

// x has no unfinished predecessor: put it on the ready list unless it must wait for a set.
inline void make_ready(dep_node* x, dep_node*& ready) noexcept {
  if (x->msets.size != 0 && !try_acquire(x)) return;
  x->link = ready;
  ready = x;
}

// Splits the segment at `at` (strictly inside it); returns the upper half. Both halves have the
// same history, so the nodes and the set they mention gain one reference each.
seg_map::iterator split(dataflow_state& st, seg_map::iterator it, std::uintptr_t at) {
  segment& s = it->second;
  auto hi = st.segs.emplace_hint(std::next(it), std::piecewise_construct, std::forward_as_tuple(at),
                                 std::forward_as_tuple(s.end));
  segment& h = hi->second;
  h.kind = s.kind;
  h.ms = s.ms;
  if (h.ms) ++h.ms->refs;
  h.gen.copy_from(s.gen);
  h.before.copy_from(s.before);
  h.readers.copy_from(s.readers);
  add_ref_all(h.gen);
  add_ref_all(h.before);
  add_ref_all(h.readers);
  s.end = at;
  return hi;
}

// The segment that contains byte a, else the first one after a (or end). Tries the finger and
// its successor first: a chain hits the finger, increasing addresses hit the gap after it.
seg_map::iterator locate(dataflow_state& st, std::uintptr_t a) {
  seg_map& m = st.segs;
  seg_map::iterator f = st.finger;
  if (f != m.end() && f->first <= a) {
    if (a < f->second.end) return f;
    // std::next of the last node climbs to the root: test for it first (increasing addresses).
    if (f == std::prev(m.end())) return m.end();
    auto nx = std::next(f);
    if (nx == m.end() || a < nx->first || a < nx->second.end) return nx;
  }
  auto it = m.upper_bound(a);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (a < p->second.end) return p;
  }
  return it;
}

// x alone is segment s's new generation, of kind k: the readers, the last generation and its
// mutexinoutset set (if any) are forgotten.
void new_generation(segment& s, dep_node* x, seg_kind k) {
  drop(s.readers);
  drop(s.gen);
  ms_unref(s.ms);
  s.ms = nullptr;
  s.gen.push_back(x);
  ref(x);
  s.kind = k;
}

// The OpenMP rules for one access of x to every byte of segment s (docs/dataflow.md, table 1).
void update(segment& s, dep_mode mode, dep_node* x) {
  switch (mode) {
    case dep_mode::in:
      edges_from(s.gen, x);  // the last writer, or every member of the last set
      push_pruned(s.readers, x);
      return;
    case dep_mode::out:
    case dep_mode::inout:
      // The readers since the last write waited for that write; with none, wait for it directly.
      edges_from(s.readers.empty() ? s.gen : s.readers, x);
      drop(s.before);
      new_generation(s, x, seg_kind::write);
      return;
    case dep_mode::inoutset:
    case dep_mode::mutexinoutset: {
      seg_kind k = mode == dep_mode::inoutset ? seg_kind::set : seg_kind::mset;
      if (s.kind == k && s.readers.empty()) {
        // Joins the current set: wait for what its members wait for, not for the members.
        edges_from(s.before, x);
        push_pruned(s.gen, x);  // finished members need not be waited for by later tasks
        if (k == seg_kind::mset) join_set(x, s.ms);
        return;
      }
      // Starts a new set after the readers (or, with none, after the last write generation).
      node_vec& prev = s.readers.empty() ? s.gen : s.readers;
      edges_from(prev, x);
      drop(s.before);
      s.before.take(prev);  // the references move with the entries
      new_generation(s, x, k);
      if (k == seg_kind::mset) {
        s.ms = new mutex_set;
        s.ms->refs = 1;
        join_set(x, s.ms);
      }
      return;
    }
  }
}

// Applies one access [a, b) of x: splits the segments that straddle a or b, creates segments for
// the gaps, and updates every segment inside.
void apply(dataflow_state& st, std::uintptr_t a, std::uintptr_t b, dep_mode mode, dep_node* x) {
  seg_map& m = st.segs;
  auto it = locate(st, a);
  if (it != m.end() && it->first < a) it = split(st, it, a);
  std::uintptr_t cur = a;
  seg_map::iterator last = m.end();
  while (cur < b) {
    if (it == m.end() || it->first > cur) {
      // A gap: bytes no unfinished task touches.
      std::uintptr_t gend = (it == m.end() || it->first > b) ? b : it->first;
      last = m.emplace_hint(it, std::piecewise_construct, std::forward_as_tuple(cur), std::forward_as_tuple(gend));
      update(last->second, mode, x);
      cur = gend;
    } else {
      if (it->second.end > b) split(st, it, b);
      update(it->second, mode, x);
      cur = it->second.end;
      last = it;
      if (cur < b) ++it;  // only when more is to come: ++ of the last node climbs to the root
    }
  }
  st.finger = last;
}

// Segments whose tasks have all finished order nothing any more (a new access there needs no
// edge), but they hold references to finished nodes. Rather than erasing them one by one when
// tasks finish (a search and a rebalancing per access), the table is swept when it has doubled
// since the last sweep: the live segments are moved to a fresh map (appended in order, so each
// insertion is at the end) and the old map is dropped whole. Amortised O(1) per segment.
void sweep(dataflow_state& st) noexcept {
  // Rebuild only when at least half the segments are dead; else just wait for twice as many.
  std::size_t dead = 0;
  for (auto& [key, s] : st.segs) dead += all_done(s.gen) && all_done(s.readers);
  if (2 * dead < st.segs.size()) {
    st.sweep_at = 2 * st.segs.size();
    return;
  }
  seg_map fresh(&st.nodes);
  for (auto& [key, s] : st.segs) {
    if (all_done(s.gen) && all_done(s.readers)) {
      // before: its tasks finished before any of gen started.
      drop(s.gen);
      drop(s.before);
      drop(s.readers);
      ms_unref(s.ms);
      s.ms = nullptr;
      continue;
    }
    auto h = fresh.emplace_hint(fresh.end(), std::piecewise_construct, std::forward_as_tuple(key),
                                std::forward_as_tuple(s.end));
    segment& d = h->second;
    d.kind = s.kind;
    d.ms = s.ms;
    s.ms = nullptr;
    d.gen.take(s.gen);
    d.before.take(s.before);
    d.readers.take(s.readers);
  }
  st.segs.swap(fresh);
  st.finger = st.segs.end();
  st.sweep_at = std::max<std::size_t>(sweep_min, 2 * st.segs.size());
}

// x finished (ran or was skipped). Releases its successors and its sets; ready ones go on `ready`.
void complete(dataflow_state& st, dep_node* x, dep_node*& ready) noexcept {
  x->done = true;
  for (std::uint32_t i = 0; i < x->succ.size; ++i) {
    dep_node* s = x->succ.data[i];
    if (--s->npred == 0) make_ready(s, ready);
  }
  x->succ.release();
  if (x->msets.size != 0) {
    for (std::uint32_t i = 0; i < x->msets.size; ++i) x->msets.data[i]->held = false;
    for (std::uint32_t i = 0; i < x->msets.size; ++i) {
      mutex_set* m = x->msets.data[i];
      // Hand the set to the first waiter that can take all of its sets; the others move on to
      // the queue of a set that is still busy.
      while (!m->held && m->head) {
        dep_node* w = m->head;
        m->head = w->link;
        if (!m->head) m->tail = nullptr;
        if (try_acquire(w)) {
          w->link = ready;
          ready = w;
        }
      }
    }
    for (std::uint32_t i = 0; i < x->msets.size; ++i) ms_unref(x->msets.data[i]);
    x->msets.release();
  }
  --st.live;
  unref(x);  // the reference it held while unfinished
}

void clear_table(dataflow_state& st) noexcept {
  for (auto& [key, s] : st.segs) {
    drop(s.gen);
    drop(s.before);
    drop(s.readers);
    ms_unref(s.ms);
    s.ms = nullptr;
  }
  st.segs.clear();
  st.finger = st.segs.end();
  st.sweep_at = sweep_min;
}

[[noreturn]] void bad_access(std::size_t i, const std::string& what) {
  throw std::invalid_argument("plait::dataflow_group::run: access " + std::to_string(i) + ": " + what);
}

}  // namespace

void set_df_edge_observer(df_edge_observer f) noexcept { edge_observer.store(f, std::memory_order_relaxed); }

}  // namespace plait::detail

namespace plait {

dataflow_group::dataflow_group() : st_(std::make_unique<detail::dataflow_state>()) {
  st_->creator = detail::tl_worker;
  st_->creator_depth = detail::tl_df_depth;
}

dataflow_group::~dataflow_group() {
  try {
    wait();
  } catch (...) {
    // Dropped: the destructor cannot report it (documented in the header).
  }
}

void dataflow_group::check(std::span<const access> deps) const {
  if (PLAIT_UNLIKELY(!detail::current_worker())) detail::not_a_worker("plait::dataflow_group::run");
  for (std::size_t i = 0; i < deps.size(); ++i) {
    const access& d = deps[i];
    if (static_cast<unsigned>(d.mode) > static_cast<unsigned>(dep_mode::mutexinoutset))
      detail::bad_access(i, "mode " + std::to_string(static_cast<unsigned>(d.mode)) +
                             " is not in, out, inout, inoutset or mutexinoutset");
    auto a = reinterpret_cast<std::uintptr_t>(d.addr);
    if (d.bytes > UINTPTR_MAX - a)
      detail::bad_access(i, "the section of " + std::to_string(d.bytes) + " bytes wraps around the address space");
  }
}

void dataflow_group::submit(std::span<const access> deps, detail::dep_node* n) {
  detail::dataflow_state& st = *st_;
  auto discard = [n] {
    // holds 0: never registered (a detached task's event, destroyed with the closure, reads it:
    // detached_done). relaxed: read by this thread only.
    n->holds.store(0, std::memory_order_relaxed);
    n->op(n, detail::dep_node::op_skip);
    n->op(n, detail::dep_node::op_free);
  };
  try {
    check(deps);
  } catch (...) {
    discard();
    throw;
  }
  // relaxed: see dataflow_state::canceled. A canceled group skips new tasks until wait().
  if (st.canceled.load(std::memory_order_relaxed)) {
    discard();
    return;
  }
  detail::dep_node* ready = nullptr;
  std::int64_t live = 0;
  if (detail::Worker* w = detail::tl_worker; PLAIT_UNLIKELY(detail::tracing(w)))
    detail::trace_df(w, trace::ev::df_submit, n);
  // The table update runs under the lock and must not fail half-way: an allocation failure in
  // here terminates (noexcept), it cannot leave a half-registered task behind.
  [&]() noexcept {
    st.mu.lock();
    ++st.live;
    for (const access& d : deps) {
      if (d.bytes == 0) continue;
      auto a = reinterpret_cast<std::uintptr_t>(d.addr);
      detail::apply(st, a, a + d.bytes, d.mode, n);
    }
    if (PLAIT_UNLIKELY(st.segs.size() >= st.sweep_at)) detail::sweep(st);
    // Under the lock, npred is final for now: a predecessor finishing later decrements it under
    // the same lock and makes n ready itself, so exactly one side launches n.
    if (n->npred == 0) detail::make_ready(n, ready);
    live = st.live;
    st.mu.unlock();
  }();
  launch_list(ready);
  // Throttle (like libomp's task throttling): with too many unfinished tasks the creator stops
  // creating and helps until they are done, so the nodes and the table stay in cache instead of
  // growing with the whole task graph. Not from inside one of this group's own tasks: the
  // group's wait would then wait for the calling task itself.
  if (PLAIT_UNLIKELY(live >= detail::throttle_tasks) && detail::tl_worker == st.creator &&
      detail::tl_df_depth == st.creator_depth) {
    tg_.wait();
    st.mu.lock();
    if (st.live == 0) detail::clear_table(st);  // all finished: the whole table is history
    st.mu.unlock();
  }
}

void dataflow_group::launch_list(detail::dep_node* head) {
  while (head) {
    detail::dep_node* n = head;
    head = n->link;
    // task_group::run pushes onto the current worker's deque: a successor released by a
    // finishing task starts on that task's worker unless someone steals it.
    tg_.run([this, n] { execute(n); });
  }
}

void dataflow_group::execute(detail::dep_node* n) noexcept {
  detail::dataflow_state& st = *st_;
  // relaxed: see dataflow_state::canceled.
  if (st.canceled.load(std::memory_order_relaxed)) {
    n->op(n, detail::dep_node::op_skip);
  } else {
    if (detail::Worker* w = detail::tl_worker; PLAIT_UNLIKELY(detail::tracing(w)))
      detail::trace_df(w, trace::ev::df_run, n);
    ++detail::tl_df_depth;
    try {
      n->op(n, detail::dep_node::op_run);
      --detail::tl_df_depth;
    } catch (...) {
      --detail::tl_df_depth;
      std::exception_ptr e = std::current_exception();
      st.mu.lock();
      if (!st.has_error) {
        st.has_error = true;
        st.error = std::move(e);
      }
      st.mu.unlock();
      st.canceled.store(true, std::memory_order_relaxed);
    }
  }
  // A node not added by run_held has holds == 1 for its whole life and nobody else touches the
  // field: finish without an RMW (acquire: if release_hold came first, its writes are ours). With run_held (holds 2, set
  // before the node was published), acq_rel: the later of this and release_hold finishes it.
  if (n->holds.load(std::memory_order_acquire) == 1 || n->holds.fetch_sub(1, std::memory_order_acq_rel) == 1)
    finished(n);
}

bool dataflow_group::ready_now(std::span<const access> deps) {
  detail::dataflow_state& st = *st_;
  bool ok = true;
  st.mu.lock();
  for (const access& d : deps) {
    if (d.bytes == 0) continue;
    const auto a = reinterpret_cast<std::uintptr_t>(d.addr);
    const std::uintptr_t b = d.bytes > UINTPTR_MAX - a ? UINTPTR_MAX : a + d.bytes;
    // The first segment that ends past a, then every one that starts before b.
    auto it = st.segs.upper_bound(a);
    if (it != st.segs.begin() && std::prev(it)->second.end > a) --it;
    for (; ok && it != st.segs.end() && it->first < b; ++it) {
      const detail::segment& sg = it->second;
      // in: after the last write generation (and the predecessors of a set); everything else also
      // after the readers since then.
      ok = detail::all_done(sg.gen) && detail::all_done(sg.before) &&
           (d.mode == dep_mode::in || detail::all_done(sg.readers));
    }
    if (!ok) break;
  }
  st.mu.unlock();
  return ok;
}

// ---- run_detached (docs/design.md, "Events"; the counting is described in src/event.cpp) ----

namespace detail {
// A data-flow task's event: its group, its node (written by run_held before the task can start;
// null while it is not made) and the group's pool.
struct df_event {
  dataflow_group* g;
  dep_node* node = nullptr;
  Pool* pool = nullptr;
};
}  // namespace detail

detail::df_event* dataflow_group::detached_begin(std::span<const access> deps) {
  check(deps);  // what submit would refuse, refused before anything is made
  auto* cx = new detail::df_event{this, nullptr, detail::tl_worker->pool};
  tg_.pending_.add(1);  // the event's share, before the task can run
  return cx;
}

void dataflow_group::detached_done(void* p, bool error) noexcept {
  auto* cx = static_cast<detail::df_event*>(p);
  dataflow_group* g = cx->g;
  if (error) g->event_error();
  // relaxed: a node that submit discarded (never registered) has holds 0, written by the same
  // thread before it destroyed the closure that held this event.
  if (cx->node == nullptr || cx->node->holds.load(std::memory_order_relaxed) == 0) {
    g->tg_.pending_.count_down(1);
    delete cx;
    return;
  }
  detail::Worker* w = detail::current_worker();
  if (w != nullptr && w->pool == cx->pool) {
    release_on_worker(cx);
  } else {
    try {
      detail::hand_completion(cx->pool, &release_on_worker, cx);
    } catch (...) {
      detail::event_misuse("plait::event::fulfill: out of memory handing the completion to the pool");
    }
  }
}

void dataflow_group::release_on_worker(void* p) noexcept {
  auto* cx = static_cast<detail::df_event*>(p);
  dataflow_group* g = cx->g;
  g->release_hold(cx->node);
  delete cx;
  // After the release: its successors are the group's children now, counted before this.
  g->tg_.pending_.count_down(1);
}

detail::dep_node** dataflow_group::detached_node(detail::df_event* cx) noexcept { return &cx->node; }

void dataflow_group::event_error() noexcept {
  detail::dataflow_state& st = *st_;
  // relaxed: see dataflow_state::canceled (a skipped task's event is no error).
  if (st.canceled.load(std::memory_order_relaxed)) return;
  if (std::uncaught_exceptions() > 0) return;
  st.mu.lock();
  if (!st.has_error) {
    st.has_error = true;
    st.error = detail::abandoned_event_error();
  }
  st.mu.unlock();
  st.canceled.store(true, std::memory_order_relaxed);
}


void dataflow_group::release_hold(detail::dep_node* n) noexcept {
  // acq_rel: as in execute.
  if (n->holds.fetch_sub(1, std::memory_order_acq_rel) == 1) finished(n);
}

void dataflow_group::finished(detail::dep_node* n) noexcept {
  detail::dataflow_state& st = *st_;
  detail::dep_node* ready = nullptr;
  st.mu.lock();
  detail::complete(st, n, ready);
  st.mu.unlock();
  launch_list(ready);
}

void dataflow_group::wait() {
  detail::dataflow_state& st = *st_;
  for (;;) {
    // Every unfinished task is on a deque, running, or waiting for one that is: each launch
    // happens inside a task_group child before that child finishes, so the group's pending
    // count stays above zero until the last task finished. The task_group wait comes first even
    // when no task is live: a task takes itself off `live` under the lock and only then returns
    // from its task_group child, whose decrement of the group's counter is its last access.
    // Returning on live == 0 alone let the destructor free the group under that decrement.
    // The loop is a guard for run() calls made by tasks of this group while we waited.
    const bool on_worker = detail::current_worker() != nullptr;
    if (on_worker) tg_.wait();
    st.mu.lock();
    std::int64_t live = st.live;
    st.mu.unlock();
    if (live == 0) break;  // (off a worker, ~task_group still waits for the last decrement)
    if (!on_worker) detail::not_a_worker("plait::dataflow_group::wait");
  }
  st.mu.lock();
  detail::clear_table(st);
  std::exception_ptr e = std::move(st.error);
  st.error = nullptr;
  st.has_error = false;
  st.canceled.store(false, std::memory_order_relaxed);
  st.mu.unlock();
  if (e) std::rethrow_exception(e);
}

}  // namespace plait
