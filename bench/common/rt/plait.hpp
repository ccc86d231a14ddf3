// Plait adapter (see rt/common.hpp).
#pragma once

#include <plait/plait.hpp>

#include <memory>
#include <utility>

#include "common/rt/common.hpp"

namespace kern {

struct rt_plait {
  static constexpr const char* name = "plait";
  static constexpr bool parallel = true;
  static constexpr bool openmp = false;

  explicit rt_plait(plait_bench::Cli&, bool = true) {}

  void start(long long threads) {
    plait::pool_options o{};
    o.num_workers = static_cast<decltype(o.num_workers)>(threads);
    pool_ = std::make_unique<plait::pool>(o);
  }
  template <class F>
  decltype(auto) root(F&& f) {
    return pool_->run(std::forward<F>(f));
  }
  bool manual() const { return true; }

  void reset_stats() { base_ = pool_->total_counters(); }
  void stats(plait_bench::Record& rec) const {
    plait::worker_counters c = pool_->total_counters();
    rec.stat("tasks", static_cast<unsigned long long>(c.spawns - base_.spawns));
    rec.stat("steals", static_cast<unsigned long long>(c.steals - base_.steals));
    rec.stat("moved_tasks", static_cast<unsigned long long>(c.steals - base_.steals));
    rec.stat("steal_attempts", static_cast<unsigned long long>(c.steal_attempts - base_.steal_attempts));
    rec.stat("publishes", static_cast<unsigned long long>(c.publishes - base_.publishes));
    rec.stat("sleeps", static_cast<unsigned long long>(c.sleeps - base_.sleeps));
    rec.stat("inlined", static_cast<unsigned long long>(c.inlined - base_.inlined));
    // idle time of all workers together (searching for work outside tasks), in ms; an idle stretch
    // is counted when it ends, so one that began before the repetition (between repetitions, the
    // workers wait while the verification runs) counts whole here
    rec.stat("idle_ms", static_cast<double>(c.idle_ns - base_.idle_ns) / 1e6);
  }

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
  std::unique_ptr<plait::pool> pool_;
  plait::worker_counters base_{};
};

}  // namespace kern
