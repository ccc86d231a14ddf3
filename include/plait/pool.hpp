// plait::pool — a set of worker threads with work-stealing deques — and plait::run.
#pragma once

#include <plait/config.hpp>
#include <plait/counters.hpp>
#include <plait/detail/worker.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace plait {

// What idle workers do when they find nothing to steal.
enum class idle_policy {
  sleep,  // spin briefly, then yield, then sleep on a futex after ~1 ms idle (default)
  spin,   // never sleep: lowest wake-up latency, burns a core per idle worker (benchmarks)
};

// Where workers run.
enum class pin_policy {
  none,   // let the OS place threads (default), unless places are given
  cores,  // worker i on the i-th PU in topology order: one PU of every physical core first (by
          // package, NUMA node, core), SMT siblings after all cores (hwloc; docs/design.md)
};

// How much a thief takes from a victim in one steal (PLAIT_STEAL=one|chunk:K|half|adaptive).
// Every policy takes the oldest shared tasks, in order, with one CAS; the thief runs the first and
// keeps the rest on its own deque in the same order (consecutive tasks stay together). See
// docs/design.md, "Chunked stealing".
enum class steal_policy {
  one,       // the oldest shared task (default)
  chunk,     // up to pool_options::steal_chunk tasks
  half,      // half of the victim's shared tasks, rounded up
  adaptive,  // a fair share (shared / workers) while the victim has >= 2 per worker, then one
};
#define PLAIT_HAS_STEAL_POLICIES 1

// The fields an environment variable can fill have a "not set" state, which from_env resolves:
// 0 for num_workers, stack_size and group_throttle, std::nullopt for the three policies, an empty
// trace_path. A value set here, including one equal to the built-in default (say
// `.steal = steal_policy::one`), wins over the variable, which is then not read. pool::options()
// returns the resolved options: every policy set.
// The most workers one pool has (pool_options::num_workers, PLAIT_NUM_THREADS; the OpenMP front
// door's largest team).
inline constexpr unsigned max_workers = 1024;

struct pool_options {
  // 0: PLAIT_NUM_THREADS, else OMP_NUM_THREADS (its first entry), else the hardware's CPU count.
  unsigned num_workers = 0;  // at most max_workers
  // Unset: PLAIT_PIN, else pin_policy::none.
  std::optional<pin_policy> pin = std::nullopt;
  // Unset: PLAIT_IDLE, else idle_policy::sleep.
  std::optional<idle_policy> idle = std::nullopt;
  // Unset: PLAIT_STEAL (which may set steal_chunk too), else steal_policy::one.
  std::optional<steal_policy> steal = std::nullopt;
  std::size_t steal_chunk = 8;  // tasks per steal for steal_policy::chunk (1 .. 2^20)
  // Worker thread stack size in bytes; 0 means PLAIT_STACK_SIZE or 1 GiB. Stacks are reserved, not
  // committed: only touched pages use memory. 1 GiB runs a chain of 10^6 nested spawn/join.
  std::size_t stack_size = 0;
  // Deque slots per worker (power of two); 0 means 2^21 (128 MiB reserved per worker, touched
  // lazily). A full deque runs further spawns inline.
  std::size_t deque_capacity = 0;
  // task_group throttle: while the adding worker already holds at least this many unstarted tasks
  // of its own (private deque slots), task_group::run runs the new child at once instead of
  // queueing it, as OpenMP runtimes run tasks undeferred past a queue limit. Keeps the memory of
  // one-creator loops bounded and in cache. 0: PLAIT_GROUP_THROTTLE, else 1024; `group_throttle_off`
  // (or PLAIT_GROUP_THROTTLE=off): never. Range 1..2^30.
  std::size_t group_throttle = 0;
  static constexpr std::size_t group_throttle_off = ~std::size_t{0};
  // Per-task tracing: a ".json" (Chrome trace events) or ".csv" (study 002) file written when the
  // pool shuts down. Empty: PLAIT_TRACE if set (the second and later pools of a process that take
  // it write NAME.2.EXT, NAME.3.EXT, ...), else off. An unwritable path prints one line and leaves
  // tracing off; the program runs on. docs/tracing.md.
  std::string trace_path = {};
  // Polling services (pool::add_poller) run at most once per this many microseconds; idle and
  // waiting workers sleep no longer than this while a poller is registered. 0: PLAIT_POLL_US,
  // else 100. Range 1..10^7 (10 s).
  std::uint64_t poll_period_us = 0;
  // Where workers run, as OpenMP's OMP_PLACES: "threads", "cores", "ll_caches", "numa_domains",
  // "sockets", or CPU sets "{0,1},{2:4},{8:4:2}" ({first:length[:stride]}); worker i runs on
  // place i % places. Empty: PLAIT_PLACES, else the pin policy decides. Given places pin the
  // workers (whatever `pin` says), and pinned workers steal from the nearest victims first.
  std::string places = {};

  // Resolves the options: reads PLAIT_NUM_THREADS / OMP_NUM_THREADS / PLAIT_PIN / PLAIT_PLACES /
  // PLAIT_IDLE / PLAIT_STEAL / PLAIT_STACK_SIZE / PLAIT_GROUP_THROTTLE / PLAIT_POLL_US for every
  // field that is not set (PLAIT_PLACES is checked against the machine by the pool), and
  // checks PLAIT_STRESS. Throws std::invalid_argument with a one-line message naming the variable
  // and the accepted values when one is malformed, or naming the field and its accepted values when
  // a set field is out of range (an enum value outside its enumerators included). The pool
  // constructor calls it.
  static pool_options from_env(pool_options base);
  static pool_options from_env();
};

namespace detail {

class Pool;

// Used by pool::run: submit a root job and block the calling (non-worker) thread until it ran.
void run_root(Pool* p, exec_fn exec, void* data);

template <class R>
using result_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

}  // namespace detail

class pool {
 public:
  // Starts the workers. Throws std::invalid_argument for bad options (one-line message).
  explicit pool(pool_options opts = {});
  ~pool();  // waits for running roots to finish, then stops and joins the workers
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  // Runs f() as a root task on one of this pool's workers and returns its result (or rethrows its
  // exception). Callable from any thread that is not a worker, also from several at once. Called
  // from inside one of this pool's own tasks, it simply calls f() on the current worker. Called
  // from a task of another pool, that worker does not block: until f is done it runs the roots
  // handed to its own pool, so pools may call each other in cycles (A's task runs B.run, whose
  // task runs A.run) even with one worker each.
  template <class F>
  std::invoke_result_t<F&> run(F&& f);

  unsigned num_workers() const noexcept;
  const pool_options& options() const noexcept;

  // Snapshot of every worker's counters (relaxed reads; exact once the pool is quiescent).
  std::vector<worker_counters> counters() const;
  worker_counters total_counters() const;
  void reset_counters();  // only while no root is running

  // Tracing (pool_options::trace_path). write_trace writes the events recorded so far to `path`
  // (".json" or ".csv"); call it only while no root is running. Throws std::logic_error when the
  // pool does not trace, std::runtime_error (one line) when the file cannot be written.
  bool tracing() const noexcept;
  void write_trace(const std::string& path) const;

  // Polling services: fn is called by this pool's workers, one call at a time, at most once per
  // poll_period_us: by idle and waiting workers (task_group / dataflow_group waits, joins whose
  // task was stolen) whenever they find no work, and by busy workers when they enter a group wait
  // and in poll_services(). It drives outside progress that completes events (an MPI request, a device
  // queue). It must not throw (the process stops with a message) and should return quickly.
  // Safe to call while tasks run, from any thread and from a poller; remove_poller returns only
  // when no call of the poller is in progress (except the calling poller's own), and says
  // whether the id was registered. docs/design.md, "External progress".
  using poller_id = std::uint64_t;
  poller_id add_poller(std::function<void()> fn);
  bool remove_poller(poller_id id);

  detail::Pool* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<detail::Pool> impl_;
};

// Called from a long-running task: runs its pool's pollers if they are due (a task that waits in
// a group gets them there anyway). No-op off a pool's worker.
void poll_services() noexcept;

// Called from a long-running task that spawns rarely: if another worker asked for work, makes the
// tasks this worker has queued stealable now. Plait publishes a worker's queued tasks when a thief
// asks, at the owner's next push or pop; a task that does neither for a long time would keep them
// private meanwhile (its last queued task until it returns). One relaxed load when nobody asked.
// No-op off a pool's worker.
void serve_thieves() noexcept;

// The process-wide pool, created on first use with pool_options::from_env(). A malformed
// environment variable there prints one line ("plait: PLAIT_NUM_THREADS='abc' ...") and exits
// with status 2, since there is no caller to hand an exception to.
pool& default_pool();

// Runs f on the default pool (see pool::run).
template <class F>
std::invoke_result_t<F&> run(F&& f) {
  return default_pool().run(std::forward<F>(f));
}

// Index of the calling worker in its pool, or -1 on a thread that is no worker.
// Labels the next task (spawn or task_group::run) the calling worker creates, in the trace.
// `label` must stay valid until the pool is destroyed (a string literal). No-op when not tracing.
void label_next_task(const char* label) noexcept;

inline int this_worker_index() noexcept {
  detail::Worker* w = detail::current_worker();
  return w ? static_cast<int>(w->index) : -1;
}

// ---------------------------------------------------------------------------------------------
namespace detail {
bool is_worker_of(const Pool* p) noexcept;

template <class F>
struct RootTask {
  using R = std::invoke_result_t<F&>;
  F& fn;
  std::optional<result_t<R>> value;
  std::exception_ptr error;

  static void exec(void* d, Worker*) {
    auto* self = static_cast<RootTask*>(d);
    try {
      if constexpr (std::is_void_v<R>) {
        self->fn();
        self->value.emplace();
      } else {
        self->value.emplace(self->fn());
      }
    } catch (...) {
      self->error = std::current_exception();
    }
  }
};
}  // namespace detail

template <class F>
std::invoke_result_t<F&> pool::run(F&& f) {
  using R = std::invoke_result_t<F&>;
  if (detail::is_worker_of(impl_.get())) return f();
  detail::RootTask<std::remove_reference_t<F>> task{f, std::nullopt, nullptr};
  detail::run_root(impl_.get(), &detail::RootTask<std::remove_reference_t<F>>::exec, &task);
  if (task.error) std::rethrow_exception(task.error);
  if constexpr (!std::is_void_v<R>) return std::move(*task.value);
}

}  // namespace plait
