// plait::dataflow_group — sibling tasks ordered by the data they declare they touch (OpenMP 5.x
// `depend` semantics among the tasks of one group).
//
//   plait::dataflow_group g;
//   double a = 0, b = 0, c = 0;
//   g.run({plait::out(a)}, [&] { a = 1; });
//   g.run({plait::out(b)}, [&] { b = 2; });                      // may run at the same time as the first
//   g.run({plait::in(a), plait::in(b), plait::out(c)}, [&] { c = a + b; });  // after both
//   g.wait();
//
// A task waits for every earlier task (in the order of run() calls) whose declared access conflicts
// with one of its own:
//   in              after the last out/inout (or after every member of the last inoutset /
//                   mutexinoutset set); readers run concurrently with each other.
//   out, inout      after every reader since the last write, or, when there was none, after the last
//                   write (or every member of the last set). out and inout order the same way.
//   inoutset        consecutive inoutset tasks on the same data form a set: its members run
//                   concurrently with each other and are ordered like one writer against the
//                   in/out/inout tasks before and after the set.
//   mutexinoutset   like inoutset, but no two members of one set run at the same time (in any order).
// An access is an object (`in(x)`: the bytes of x) or an array section (`in(p, n)`: n elements from
// p). Sections are compared byte-wise: partially overlapping sections are ordered exactly on the
// bytes they share (the group keeps an interval map that splits ranges; see docs/dataflow.md).
// A section of zero elements declares nothing.
//
// Exceptions: the first exception thrown by a task cancels the group: tasks that have not started
// yet (its successors among them) are skipped, also those added later until wait(); wait()
// rethrows it and resets the group, which can then be used again.
//
// run() must be called from a task on a pool (inside plait::run / pool::run), else it throws
// std::logic_error. Ready tasks go onto the deque of the worker that made them ready (the creator,
// or the predecessor that finished last), so a consumer usually runs where its producer ran.
#pragma once

#include <plait/config.hpp>
#include <plait/event.hpp>
#include <plait/task_group.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace plait {

enum class dep_mode : std::uint8_t { in, out, inout, inoutset, mutexinoutset };

// One declared access: the bytes [addr, addr + bytes).
struct access {
  const void* addr;
  std::size_t bytes;
  dep_mode mode;
};

#define PLAIT_DATAFLOW_MODE(name)                                                             \
  template <class T>                                                                          \
  constexpr access name(const T& obj) noexcept {                                              \
    return access{static_cast<const void*>(std::addressof(obj)), sizeof(T), dep_mode::name};  \
  }                                                                                           \
  template <class T>                                                                          \
  constexpr access name(const T* p, std::size_t count) noexcept {                             \
    return access{static_cast<const void*>(p), count * sizeof(T), dep_mode::name};            \
  }
PLAIT_DATAFLOW_MODE(in)
PLAIT_DATAFLOW_MODE(out)
PLAIT_DATAFLOW_MODE(inout)
PLAIT_DATAFLOW_MODE(inoutset)
PLAIT_DATAFLOW_MODE(mutexinoutset)
#undef PLAIT_DATAFLOW_MODE

namespace detail {
struct df_event;

struct dataflow_state;
struct mutex_set;

class Pool;

// Node memory (src/dataflow.cpp): the workers' magazines of the creating task's pool, stored in
// *home (the task-record allocator, detail/task_alloc.hpp: a node is usually freed on another
// worker than the one that made it, in bursts that overflow malloc's own per-thread cache); on a
// thread that is no worker, operator new and *home = null. df_free takes the same home back.
void* df_alloc(std::size_t bytes, Pool** home);
void df_free(void* p, std::size_t bytes, Pool* home) noexcept;

// A short list that keeps its first N entries inline (nodes never move, so `data` may point into
// the node itself). Only touched under the group's lock.
template <class T, unsigned N>
struct small_list {
  T* data = inl;
  std::uint32_t size = 0;
  std::uint32_t cap = N;
  T inl[N];

  small_list() = default;
  small_list(const small_list&) = delete;
  small_list& operator=(const small_list&) = delete;
  ~small_list() { release(); }

  void push(T v) {
    if (PLAIT_UNLIKELY(size == cap)) grow();
    data[size++] = v;
  }
  T back() const noexcept { return data[size - 1]; }
  void release() noexcept {
    if (data != inl) delete[] data;
    data = inl;
    size = 0;
    cap = N;
  }

 private:
  PLAIT_NOINLINE void grow() {
    T* d = new T[cap * 2];
    for (std::uint32_t i = 0; i < size; ++i) d[i] = data[i];
    if (data != inl) delete[] data;
    data = d;
    cap *= 2;
  }
};

// The group's record of one task. Allocated once per task, closure included (dep_task<F>). All
// fields except `op` are protected by the group's lock (docs/dataflow.md, "Locking").
struct dep_node {
  // op_run: call the closure (exceptions propagate), then destroy it; op_skip: only destroy it;
  // op_free: delete the node (its closure is already gone).
  static constexpr int op_skip = 0, op_run = 1, op_free = 2;
  void (*op)(dep_node*, int what);
  // What must happen before the task counts as finished: its closure returns (1), and for a task
  // added with run_held also release_hold (2). acq_rel RMWs; the last one finishes the task.
  std::atomic<std::uint8_t> holds{1};
  std::int32_t npred = 0;      // predecessors that have not finished yet
  std::int32_t refs = 1;       // 1 until it finished + one per mention in the dependence table
  bool done = false;           // finished (ran or was skipped); no new edge to it is needed
  bool acquired = false;       // holds its mutexinoutset sets (while it runs)
  dep_node* link = nullptr;    // ready list / a mutex set's waiter queue
  Pool* home = nullptr;        // whose magazines hold the node's memory (df_alloc)
  small_list<dep_node*, 2> succ;     // tasks waiting for this one
  small_list<mutex_set*, 1> msets;   // mutexinoutset sets it belongs to
};

template <class F>
struct dep_task final : dep_node {
  union {
    F fn;
  };
  template <class G>
  explicit dep_task(G&& g) {
    op = &run_op;
    ::new (static_cast<void*>(std::addressof(fn))) F(std::forward<G>(g));
  }
  ~dep_task() {}  // fn is destroyed by op()
  static void run_op(dep_node* n, int what) {
    auto* t = static_cast<dep_task*>(n);
    if (what == op_free) {
      Pool* const home = t->home;
      t->~dep_task();
      df_free(t, sizeof(dep_task), home);
      return;
    }
    // (A trivially destructible closure is not ended here: it lives until the node's memory goes,
    // so an edge observer may still read it after it ran.)
    struct destroy_at_exit {
      dep_task* t;
      ~destroy_at_exit() {
        if constexpr (!std::is_trivially_destructible_v<F>) t->fn.~F();
      }
    } d{t};
    if (what == op_run) t->fn();
  }
};

// An observer of the engine's edges, for the OpenMP front door's tools interface (OMPT's
// task_dependence): called for each new edge `pred -> succ` (succ waits for pred) while the
// group's lock is held, so pred has not finished yet; it must not call into any dataflow_group.
// One per process; null (the default) costs one relaxed load per edge.
using df_edge_observer = void (*)(dep_node* pred, dep_node* succ) noexcept;
void set_df_edge_observer(df_edge_observer f) noexcept;

}  // namespace detail

class dataflow_group {
 public:
  // Create inside a task (like task_group); run() and wait() are called by that task.
  dataflow_group();
  dataflow_group(const dataflow_group&) = delete;
  dataflow_group& operator=(const dataflow_group&) = delete;
  // Waits for every task (their closures may refer to the enclosing frame); an exception they
  // threw is dropped here — call wait() to see it.
  ~dataflow_group();

  // Adds a task that runs f() once every earlier conflicting task of this group has finished.
  // Throws std::invalid_argument for an access whose section wraps around the address space or
  // whose mode is not a dep_mode, std::logic_error outside a pool's task; f is not run then.
  template <class F>
  void run(std::initializer_list<access> deps, F&& f) {
    run(std::span<const access>(deps.begin(), deps.size()), std::forward<F>(f));
  }
  template <class F>
  void run(std::span<const access> deps, F&& f) {
    submit(deps, make_node(std::forward<F>(f)));
  }

  // Like run, but the task finishes (releases its successors, counts for wait()) only once f has
  // returned and release_hold(handle) has been called, in either order: a task completed by an
  // outside event (an OpenMP detach clause, a request). The handle is stored to *handle before the
  // task can start (f itself may release it) and is valid until then. release_hold must be called
  // on a worker of the group's pool.
  template <class F>
  void run_held(std::span<const access> deps, F&& f, detail::dep_node** handle) {
    detail::dep_node* node = make_node(std::forward<F>(f));
    // relaxed: published with the node by submit (under the group's lock / the push).
    node->holds.store(2, std::memory_order_relaxed);
    *handle = node;
    submit(deps, node);
  }
  void release_hold(detail::dep_node* handle) noexcept;

  // Adds a task completed by an outside event (OpenMP's detach; plait/event.hpp): f is called
  // with a plait::event, and the task finishes -- releases its successors, counts for wait() --
  // once f has returned and the event has been fulfilled, from any thread. Throws as run() does,
  // before anything is made.
  template <class F>
  void run_detached(std::span<const access> deps, F&& f) {
    detail::df_event* cx = detached_begin(deps);
    run_held(deps, [ev = event(&detached_done, cx), fn = std::forward<F>(f)]() mutable { fn(std::move(ev)); },
             detached_node(cx));
  }
  template <class F>
  void run_detached(std::initializer_list<access> deps, F&& f) {
    run_detached(std::span<const access>(deps.begin(), deps.size()), std::forward<F>(f));
  }

  // Whether a task with these accesses, added now, would have no unfinished predecessor: no
  // task of the group that is not finished writes (or, for an out/inout/set access, reads) any
  // byte of them. A caller that is the only thread adding tasks to the group (OpenMP: a parent
  // task's siblings) may then run such a task itself at once instead of adding it: it finishes
  // before any later task is added, so nothing can need ordering after it. Used by the OpenMP
  // front door when its queue is full (its throttle) or its team has one thread.
  bool ready_now(std::span<const access> deps);
  bool ready_now(std::initializer_list<access> deps) {
    return ready_now(std::span<const access>(deps.begin(), deps.size()));
  }

  // Waits until every task added so far has finished (helping meanwhile: it runs this group's
  // tasks and steals others); rethrows the first exception a task threw. Afterwards the group is
  // empty and can be reused.
  void wait();

 private:
  // The node of a task running f (closure inside), from the group's node memory.
  template <class F>
  static detail::dep_node* make_node(F&& f) {
    using T = detail::dep_task<std::decay_t<F>>;
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned closures are not supported");
    detail::Pool* home = nullptr;
    void* mem = detail::df_alloc(sizeof(T), &home);
    try {
      T* t = ::new (mem) T(std::forward<F>(f));
      t->home = home;
      return t;
    } catch (...) {
      detail::df_free(mem, sizeof(T), home);
      throw;
    }
  }
  // Registers the node's accesses and hands it to the runtime if it is ready. Takes ownership of
  // `n` (destroys it, unrun, when it throws).
  void submit(std::span<const access> deps, detail::dep_node* n);
  void launch_list(detail::dep_node* head);
  void execute(detail::dep_node* n) noexcept;
  void finished(detail::dep_node* n) noexcept;
  // What run() would refuse (not a worker, a bad access): throws as submit does.
  void check(std::span<const access> deps) const;
  // run_detached: the event's context (the group's count raised by one until the fulfil), the
  // place run_held writes the node to, the fulfil itself, the release on a worker of the pool,
  // and the error of an event dropped unfulfilled.
  detail::df_event* detached_begin(std::span<const access> deps);
  static detail::dep_node** detached_node(detail::df_event* cx) noexcept;
  static void detached_done(void* cx, bool error) noexcept;
  static void release_on_worker(void* cx) noexcept;
  void event_error() noexcept;

  std::unique_ptr<detail::dataflow_state> st_;
  task_group tg_;  // declared after st_: destroyed (waited for) before the state goes
};

}  // namespace plait
