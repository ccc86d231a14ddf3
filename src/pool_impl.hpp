// Internal: the pool's shared state and the functions the src/ files share.
#pragma once

#include <plait/pool.hpp>
#include <plait/detail/latch.hpp>
#include <plait/detail/task_alloc.hpp>

#include <pthread.h>

#include "sleep.hpp"
#include "topology.hpp"
#include "trace_event.hpp"
#include "wait.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace plait::detail {

// A root task handed in by pool::run from a non-worker thread; lives on that thread's stack.
struct Injected {
  exec_fn exec;
  void* data;
  OnceLatch done;  // set (code 1) by the worker that ran it; its last access to the job
};

// Victims a look for work samples per CPU in an oversubscribed pool (Pool::look_attempts).
inline constexpr unsigned look_sample_per_cpu = 4;

class Pool {
 public:
  // caller_is_worker0: no thread is started for worker 0; a thread that wants to work in the
  // pool adopts it (the OpenMP front door's master thread, for the length of a parallel region).
  explicit Pool(const pool_options& o, bool caller_is_worker0 = false);
  ~Pool();

  pool_options opts;
  unsigned n = 0;
  Worker* workers = nullptr;  // n workers, cache-line aligned
  std::vector<pthread_t> threads;  // index i: worker i's thread (unused for an adopted worker 0)
  bool external0 = false;
  // With pin_policy::cores and external0: the CPU worker 0 belongs on (the thread that adopts it
  // binds itself there: the OpenMP front door's initial thread, team.cpp); -1 otherwise.
  int worker0_cpu = -1;
  std::vector<Place> places;              // pinned workers: worker i on places[i % size]; else empty
  std::vector<VictimOrder> victim_order;  // pinned workers' victims, nearest first

  // Root tasks waiting for a worker. inj_count mirrors the queue length so that idle workers can
  // poll it without taking the lock.
  std::mutex inj_mu;
  std::deque<Injected*> inj_q;
  alignas(cache_line) std::atomic<std::uint32_t> inj_count{0};

  // Sleep and wake-ups (src/sleep.hpp): idle workers' word, latch waiters' slots.
  PoolSleep sleep;
  alignas(cache_line) std::atomic<bool> shutdown{false};

  // Pauses a waiting or idle worker spins before yielding its core (run_until, wait.cpp):
  // long when every worker has a core of its own, short when the pool is oversubscribed — by its
  // own size, or by other pools running at the same time (the OpenMP front door's nested teams
  // lower it while they run). relaxed: a tuning value, read once per wait.
  std::atomic<unsigned> spin_limit{2048};
  unsigned spin_limit_alone = 2048;  // what the pool's own size calls for
  // Victims one look for work tries (find_work): every other worker while each has a CPU; with
  // more workers than CPUs a random sample (look_sample_per_cpu per CPU, at least 8): a look of
  // every waiting worker at every other is O(n^2) requests on the victims' lines, and a team of
  // 1000 threads on 2 CPUs spent 80 % of its time there.
  unsigned look_attempts = 1;

  // Tracing (src/trace.cpp): on when trace_path is non-empty. Clock: TSC ticks, mapped to ns at
  // write time from two (ticks, CLOCK_MONOTONIC) pairs.
  std::string trace_path;  // non-empty iff the pool traces (trace_init clears an unusable path)
  std::uint64_t trace_tsc0 = 0, trace_mono0 = 0, trace_unix0 = 0;
  std::mutex trace_mu;                     // the label table
  std::vector<std::string> trace_labels;   // [0] == ""
  std::vector<const char*> trace_label_keys;

  // Chunked stealing (claim_rule in detail/split_deque.hpp, filled in by steal_one): the policy and, for steal_policy::chunk, k.
  steal_policy steal = steal_policy::one;
  std::uint32_t steal_k = 1;

  // External progress (src/poll.cpp). Polling services: run one caller at a time under poll_mu
  // (held while they run and while the list changes), at most once per poll_period_ns by the
  // pool's waiting and idle workers and by busy workers entering a group wait. Completions: work
  // handed in by threads that are no worker of the pool (an event fulfilled there), run by the
  // next worker that looks for work. `npollers` and `ncompletions` mirror the two lists for the
  // lock-free checks of the wait loop; both share one line that only changes on registration
  // and hand-in.
  struct Poller {
    std::uint64_t id;
    std::function<void()> fn;
  };
  std::mutex poll_mu;
  std::vector<Poller> pollers;  // under poll_mu
  std::uint64_t poller_next_id = 1;  // under poll_mu
  std::uint64_t poll_period_ns = 100'000;
  std::atomic<std::uint64_t> next_poll_ns{0};
  std::mutex done_mu;
  std::vector<std::pair<void (*)(void*), void*>> completions;  // under done_mu
  alignas(cache_line) std::atomic<std::uint32_t> npollers{0};
  std::atomic<std::uint32_t> ncompletions{0};
  // Hand-ins in progress: threads inside hand_completion, which may still touch the pool after
  // their completion became visible (and so after a worker ran it, the region ended and its owner
  // went on to destroy the pool). ~Pool waits for zero before it frees anything (poll.cpp, "The
  // pool's lifetime").
  std::atomic<std::uint32_t> handing{0};

  // Task-record depot (src/task_alloc.cpp), one per size class: full batches that workers handed
  // back, and every slab ever carved (freed in ~Pool).
  struct Depot {
    std::mutex mu;
    FreeBlock* batches = nullptr;  // linked through FreeBlock::next_batch of each batch's first block
    // Blocks given back by threads that are no worker of the pool (task_free_foreign), linked
    // through `next`; made into a batch once there are a batch's worth.
    FreeBlock* strays = nullptr;
    std::uint32_t stray_n = 0;
    std::vector<void*> slabs;
  };
  Depot depot[alloc_classes];
};

// task_alloc.cpp: returns every slab of the pool's depots to the system (the workers are gone).
void alloc_release(Pool* p) noexcept;

// steal.cpp
// Steals from `victim` as many tasks as the pool's steal policy says (one by default) and runs them.
steal_result steal_one(Worker* self, Worker* victim) noexcept;
void top_up_for_wait(Worker* w, std::uint32_t floor) noexcept;
void supply_thieves(Worker* w) noexcept;
void run_stolen(Worker* w, exec_fn exec, void* data) noexcept;
void run_chunk(Worker* self, Worker* victim, std::uint32_t tail, std::uint32_t k) noexcept;
void drain_detached(Worker* w) noexcept;
// What a detached slot holds once its task ran in place (group_wait, below a spawn handle): a
// no-op, with a null record. Whoever pops or steals it later runs nothing.
void tombstone_exec(void* data, Worker* w) noexcept;
bool reclaim_buried(Worker* w, std::uint32_t i) noexcept;

// poll.cpp: external progress (the Pool fields above; docs/design.md, "External progress").
// Whether anything external may want this worker: a registered poller or a handed-in completion.
// relaxed: a hint; run_external takes the locks.
inline bool external_pending(const Pool* p) noexcept {
  return (p->npollers.load(std::memory_order_relaxed) | p->ncompletions.load(std::memory_order_relaxed)) != 0;
}
// Runs the handed-in completions, and the pollers if they are due and no other worker runs them;
// true when it ran a completion (work may have appeared).
bool run_external(Worker* w) noexcept;
// A busy worker entering a group wait: the pollers if they are due (no clock read without
// pollers).
inline void poll_if_due(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(external_pending(w->pool))) run_external(w);
}
// Hands fn(arg) to a worker of p (called by a thread that is no worker of p); wakes one.
void hand_completion(Pool* p, void (*fn)(void*), void* arg);
// ~Pool: returns once no thread is inside hand_completion (poll.cpp, "The pool's lifetime").
void wait_hand_ins(Pool* p) noexcept;
// How long a sleeper of p may sleep before it must poll: 0 (no limit) without pollers.
std::uint64_t sleep_limit_ns(const Pool* p) noexcept;

// event.cpp: the error a task finishes with when its event was dropped unfulfilled.
std::exception_ptr abandoned_event_error() noexcept;

// worker.cpp
void* worker_main(void* arg);
// The worker's own random sequence (xorshift64*; owner-only state): victims to sample.
unsigned next_random(Worker* w) noexcept;
bool find_work(Worker* w) noexcept;
// Runs one root task queued on w's pool, if any (true when it ran one).
bool take_injected(Worker* w) noexcept;

// trace.cpp. Every function is called only while w->trace != null (the pool traces).
struct TraceBuf {
  // Held by the owner while it appends, and by pool::write_trace while it copies: an on-demand
  // write may run while idle workers still record idle/sleep events. Uncontended but for that.
  std::atomic<bool> busy{false};
  // t_ns holds TSC ticks until the trace is written. Chunks of 32 Ki events: growing never
  // copies what was recorded (a vector's doubling copied 30 MB inside some task at 10^6 events,
  // and the DAG's work/span analysis saw that task take milliseconds), and allocating is rare (a
  // std::deque's 512-byte blocks cost a malloc every 12 events, inside whatever task ran).
  static constexpr std::size_t chunk_events = std::size_t{1} << 15;
  std::vector<std::unique_ptr<trace::Event[]>> chunks;
  std::size_t nev = 0;
  void append(const trace::Event& e) {
    if (nev % chunk_events == 0) chunks.push_back(std::make_unique_for_overwrite<trace::Event[]>(chunk_events));
    chunks[nev / chunk_events][nev % chunk_events] = e;
    ++nev;
  }
  template <class Out>
  void copy_to(Out& out) const {
    out.clear();
    out.reserve(nev);
    for (std::size_t i = 0; i < nev; ++i) out.push_back(chunks[i / chunk_events][i % chunk_events]);
  }
  std::vector<std::uint64_t> open; // ids of the tasks begun and not yet ended on this worker (nesting)
  std::uint64_t seq = 0;           // tasks created here
  std::uint64_t forward_id = 0;    // run_chunk: the id the next push carries instead of a new one
  std::uint32_t forward_label = 0;
  std::uint32_t next_label = 0;    // label_next_task: label of the next task created here
  bool in_fail_streak = false;     // only the first of consecutive failed steals is recorded
  std::uint64_t stolen_join = 0;   // pop_slow found this frame child stolen: the join's wait is for it
};
PLAIT_INLINE bool tracing(const Worker* w) noexcept { return w->trace != nullptr; }
void trace_init(Pool* p);                 // after the workers exist, before the threads start
void trace_finish(Pool* p) noexcept;      // after the threads joined: write, free
// Writes the pool's trace to its trace_path now, while it runs (a pool that is never destroyed:
// the OpenMP front door's, at exit); a failure is one line on stderr.
void trace_write_now(Pool* p) noexcept;
void trace_event(Worker* w, trace::ev k, std::uint64_t task, std::uint32_t other, std::uint32_t label,
                 std::uint64_t aux = 0) noexcept;
// The DAG's waits (a group's wait, a stolen frame child's join) and data-flow bookkeeping.
void trace_wait(Worker* w, bool begin, std::uint64_t key, std::uint32_t key_kind) noexcept;
void trace_df(Worker* w, trace::ev k, const void* node, const void* pred = nullptr) noexcept;
std::uint64_t trace_new_id(Worker* w) noexcept;
inline std::uint32_t trace_creator(std::uint64_t id) noexcept { return static_cast<std::uint32_t>(id >> 40) - 1; }
void trace_task_begin(Worker* w, std::uint64_t id, std::uint32_t label) noexcept;
void trace_on_push(Worker* w, Slot& s, std::uintptr_t tagged) noexcept;
void run_stolen_traced(Worker* w, exec_fn exec, void* data, std::uint64_t id, std::uint32_t label) noexcept;
void trace_stolen(Worker* self, Worker* victim, std::uint64_t id) noexcept;
void trace_steal_failed(Worker* self, Worker* victim) noexcept;

// A worker that was idle (in worker_main) got a task: credit the idle time, close the trace's idle
// slice. Called before the task runs.
PLAIT_COLD void end_idle_slow(Worker* w) noexcept;
PLAIT_INLINE void end_idle(Worker* w) noexcept {
  if (PLAIT_UNLIKELY(w->idle_from_ns != 0)) end_idle_slow(w);
}

// stress.cpp: PLAIT_STRESS=1 installs a random yield as the protocol-point hook (at_point).
void stress_init() noexcept;

}  // namespace plait::detail
