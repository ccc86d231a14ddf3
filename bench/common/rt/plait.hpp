// Plait adapter (see rt/common.hpp).
#pragma once

#include <plait/plait.hpp>

#include <cstddef>
#include <memory>
#include <utility>

#include "common/plait_counters.hpp"
#include "common/rt/common.hpp"

namespace kern {

struct rt_plait : rt_traits<true, false, true> {
  // (counts_moved: every task that ran on another worker is one of its steals)
  static constexpr const char* name = "plait";

  explicit rt_plait(plait_bench::Cli&, bool = true) {}

  // (set_worker_stack: the default, nothing: the pool sizes its worker stacks itself,
  // pool_options::stack_size unset = PLAIT_STACK_SIZE or 1 GiB reserved, enough for UTS's deepest
  // tree.)
  void start(long long threads) {
    plait::pool_options o{};
    o.num_workers = static_cast<decltype(o.num_workers)>(threads);
    pool_ = std::make_unique<plait::pool>(o);
  }
  template <class F>
  decltype(auto) root(F&& f) {
    return pool_->run(std::forward<F>(f));
  }

  void reset_stats() { base_ = pool_->total_counters(); }
  void stats(plait_bench::Record& rec) const {
    const plait::worker_counters c = since_reset();
    plait_bench::put_counters(rec, c);  // every counter, and idle_ms
    // the names that rt_omp and rt_tbb also write: tasks created, tasks run by another thread
    rec.stat("tasks", static_cast<unsigned long long>(c.spawns));
    rec.stat("moved_tasks", static_cast<unsigned long long>(c.steals));
  }
  void counters(plait_bench::Record& rec) const { plait_bench::put_counters(rec, since_reset()); }
  unsigned long long moved_tasks() const { return since_reset().steals; }

  class group {
   public:
    group(rt_plait&, bool = false, bool = false) {}
    template <class F>
    void run(F&& f) {
      g_.run(std::forward<F>(f));
    }
    void wait() { g_.wait(); }

   private:
    plait::task_group g_;
  };

  template <class F, class G>
  void invoke(F&& f, G&& g) {
    plait::join(std::forward<F>(f), std::forward<G>(g));
  }

 private:
  // The pool's totals minus those at reset_stats(). Taking a difference rather than zeroing the
  // workers' counters (pool::reset_counters) leaves them to their owners, which update them with a
  // plain load and store: a reset from this thread could be overwritten by a worker's update.
  plait::worker_counters since_reset() const { return pool_->total_counters() - base_; }

  std::unique_ptr<plait::pool> pool_;
  plait::worker_counters base_{};
};

}  // namespace kern
