// Internal: root tasks handed to a pool from outside (pool::run from a thread that is no worker of
// it, or from a worker of another pool): the pool's queue of them (Pool::roots). Owned by
// src/scheduler.cpp (run_root queues) and src/worker.cpp (take_injected runs).
#pragma once

#include <plait/config.hpp>
#include <plait/detail/latch.hpp>
#include <plait/detail/worker.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

namespace plait::detail {

// A root task handed in by pool::run; lives on the caller's stack.
struct Injected {
  exec_fn exec;
  void* data;
  OnceLatch done;  // set (code 1) by the worker that ran it; its last access to the job
};

// Root tasks waiting for a worker. `count` mirrors the queue's length so that idle workers can
// poll it without taking the lock.
struct PoolRoots {
  std::mutex mu;
  std::deque<Injected*> q;  // under mu
  alignas(cache_line) std::atomic<std::uint32_t> count{0};
};

// Runs one root task queued on w's pool, if any (true when it ran one). worker.cpp.
bool take_injected(Worker* w) noexcept;

}  // namespace plait::detail
