// Internal: the pool's shared state and the functions the src/ files share.
#pragma once

#include <plait/pool.hpp>

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace plait::detail {

// A root task handed in by pool::run from a non-worker thread; lives on that thread's stack.
struct Injected {
  exec_fn exec;
  void* data;
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> done{false};
};

class Pool {
 public:
  explicit Pool(const pool_options& o);
  ~Pool();

  pool_options opts;
  unsigned n = 0;
  Worker* workers = nullptr;  // n workers, cache-line aligned
  std::vector<pthread_t> threads;

  // Root tasks waiting for a worker. inj_count mirrors the queue length so that idle workers can
  // poll it without taking the lock.
  std::mutex inj_mu;
  std::deque<Injected*> inj_q;
  alignas(cache_line) std::atomic<std::uint32_t> inj_count{0};

  // Sleep/wake (src/idle.cpp). `events` is the futex word: every wake-up bumps it, so a sleeper
  // that read the old value before deciding to sleep cannot miss the wake (futex_wait returns at
  // once when the word changed). `sleepers` counts workers inside the sleep protocol.
  alignas(cache_line) std::atomic<std::uint32_t> events{0};
  alignas(cache_line) std::atomic<std::int32_t> sleepers{0};
  alignas(cache_line) std::atomic<bool> shutdown{false};

  // Pauses a waiting or idle worker spins before yielding its core (see Backoff, idle.cpp):
  // long when every worker has a core of its own, short when the pool is oversubscribed.
  unsigned spin_limit = 2048;
};

// deque.cpp
steal_result steal_one(Worker* self, Worker* victim) noexcept;
void request_work(Worker* victim) noexcept;
void run_stolen(Worker* w, exec_fn exec, void* data) noexcept;
void drain_detached(Worker* w) noexcept;

// idle.cpp
struct IdleState {
  unsigned rounds = 0;
  std::uint64_t since_ns = 0;
  void reset() { rounds = 0; }
};
void idle_step(Worker* w, IdleState& st) noexcept;
// Called by anyone who just made work visible (published deque slots, injected a root).
void notify_work(Pool* p, Worker* by) noexcept;
void wake_all(Pool* p) noexcept;
std::uint64_t now_ns() noexcept;

// worker.cpp
void* worker_main(void* arg);
bool find_work(Worker* w) noexcept;

// stress.cpp: PLAIT_STRESS=1 injects random yields at protocol points.
extern bool g_stress;
void stress_yield() noexcept;
PLAIT_INLINE void stress_point() noexcept {
  if (PLAIT_UNLIKELY(g_stress)) stress_yield();
}

// A CPU-friendly wait: `limit` calls of one `pause` each (the waiter re-checks its condition
// after every one, so it reacts within ~100 cycles), then sched_yield on every call so that, with
// more workers than cores, the worker being waited for can have this core. Never sleeps.
struct Backoff {
  unsigned n = 0;
  unsigned limit;
  explicit Backoff(unsigned spin_limit) noexcept : limit(spin_limit) {}
  void pause() noexcept;
  void reset() noexcept { n = 0; }
};

}  // namespace plait::detail
