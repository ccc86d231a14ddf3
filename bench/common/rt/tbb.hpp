// oneTBB adapter (see rt/common.hpp). Tasks are counted per thread (owner-only counters), and a
// task that runs on another thread than the one that created it counts as moved.
//
// PLAIT_BENCH_TBB_PIN=cores binds the thread in arena slot i to the i-th CPU of the process's
// affinity mask (modulo its size), as PLAIT_PIN=cores does for Plait's workers and
// OMP_PROC_BIND=close with OMP_PLACES=threads for OpenMP's threads; oneTBB has no switch of its own
// for this, so a task_scheduler_observer does it when a thread enters the arena. `none` (default)
// leaves placement to the OS. plait-bench sets it for studies with pin = "auto".
#pragma once

#include <sched.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/rt/common.hpp"

namespace kern {

struct rt_tbb : rt_traits<true, false, false> {
  // (counts_moved false: only the tasks made through group/invoke or told by note_moved count)
  static constexpr const char* name = "tbb";

  explicit rt_tbb(plait_bench::Cli&, bool = true) {}

  // Before start(): every thread of the process that TBB creates gets a stack of `bytes`.
  void set_worker_stack(std::size_t bytes) { stack_bytes_ = bytes; }
  void start(long long threads) {
    const auto t = static_cast<std::size_t>(threads);
    if (stack_bytes_)
      stack_ = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size, stack_bytes_);
    gc_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, t);
    arena_ = std::make_unique<tbb::task_arena>(static_cast<int>(threads));
    arena_->initialize();
    if (pin_from_env()) {
      pin_ = std::make_unique<pinner>(*arena_);
      bind_all(static_cast<int>(threads));
    }
    cnt_.start(t);
  }
  template <class F>
  decltype(auto) root(F&& f) {
    return arena_->execute(std::forward<F>(f));
  }

  void reset_stats() { cnt_.reset(); }
  void stats(plait_bench::Record& rec) const {
    cnt_.stats(rec);
    counters(rec);
  }
  void counters(plait_bench::Record& rec) const {
    // threads bound so far (each once, when it first entered the arena); absent when not pinning
    if (pin_) rec.stat("pinned_threads", pin_->pinned.load(std::memory_order_relaxed));
  }
  unsigned long long moved_tasks() const { return cnt_.moved(); }

  // Index of the calling thread in the arena, clamped into the counter table.
  std::size_t me() const { return cnt_.line(tbb::this_task_arena::current_thread_index()); }
  // Called first thing in a task created on thread `creator` (= me() there): by group and invoke,
  // and by kernels that create tasks with tbb::task_group themselves.
  void note_moved(std::size_t creator) { cnt_.ran(me(), creator); }

  class group {
   public:
    group(rt_tbb& rt, bool = false, bool = false) : rt_(rt) {}
    template <class F>
    void run(F&& f) {
      std::size_t creator = rt_.me();
      rt_.cnt_.made(creator);
      g_.run([this, creator, fn = std::forward<F>(f)] {
        rt_.note_moved(creator);
        fn();
      });
    }
    void wait() { g_.wait(); }

   private:
    rt_tbb& rt_;
    tbb::task_group g_;
  };

  template <class F, class G>
  void invoke(F&& f, G&& g) {
    std::size_t creator = me();
    cnt_.made(creator);  // one fork, as the other runtimes count it
    tbb::parallel_invoke(
        [&] {
          note_moved(creator);
          f();
        },
        [&] {
          note_moved(creator);
          g();
        });
  }

 private:
  // PLAIT_BENCH_TBB_PIN: unset, empty or "none" -> false, "cores" -> true, anything else refused.
  static bool pin_from_env() {
    const char* v = std::getenv("PLAIT_BENCH_TBB_PIN");
    const std::string mode = v ? v : "";
    if (mode.empty() || mode == "none") return false;
    if (mode == "cores") return true;
    throw plait_bench::usage_error("PLAIT_BENCH_TBB_PIN='" + mode + "' is not a pinning mode; accepted: none, cores");
  }

  // Brings every thread of the arena in once, so that each is bound before the first repetition
  // (as Plait's and OpenMP's threads are bound when they start). Without it a worker was bound
  // only when it first joined some work, and a short run could end with one thread unbound
  // (kernels.tbb_pin.cores saw pinned_threads 1 of 2 under load). One task per thread, each
  // waiting until all have arrived; TBB does not promise that the tasks run at once, so the wait
  // gives up after 2 s and the run goes on with what is bound (its pinned_threads stat says so).
  void bind_all(int threads) {
    std::atomic<int> arrived{0};
    arena_->execute([&] {
      tbb::parallel_for(0, threads, 1, [&](int) {
        arrived.fetch_add(1, std::memory_order_relaxed);  // a count only; nothing else is published
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (arrived.load(std::memory_order_relaxed) < threads && std::chrono::steady_clock::now() < give_up)
          std::this_thread::yield();
      }, tbb::simple_partitioner());
    });
  }

  // Binds each thread that enters the arena to CPU cpus[slot % cpus.size()], once per thread.
  class pinner : public tbb::task_scheduler_observer {
   public:
    explicit pinner(tbb::task_arena& a) : tbb::task_scheduler_observer(a) {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &set)) cpus_.push_back(c);
      if (!cpus_.empty()) observe(true);
    }
    ~pinner() override { observe(false); }
    void on_scheduler_entry(bool) override {
      thread_local const void* done = nullptr;  // the pinner this thread was last bound by
      if (done == this) return;
      const int slot = tbb::this_task_arena::current_thread_index();
      if (slot < 0) return;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus_[static_cast<std::size_t>(slot) % cpus_.size()], &one);
      if (sched_setaffinity(0, sizeof one, &one) == 0) {
        done = this;
        pinned.fetch_add(1, std::memory_order_relaxed);  // a statistic only; nothing is ordered by it
      }
    }
    std::atomic<unsigned long long> pinned{0};

   private:
    std::vector<int> cpus_;
  };

  std::size_t stack_bytes_ = 0;  // 0: TBB's default
  std::unique_ptr<tbb::global_control> stack_;
  std::unique_ptr<tbb::global_control> gc_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::unique_ptr<pinner> pin_;  // after arena_: stops observing before the arena goes
  thread_tasks cnt_;
};

}  // namespace kern
