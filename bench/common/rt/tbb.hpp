// oneTBB adapter (see rt/common.hpp). Tasks are counted per thread (owner-only counters), and a
// task that runs on another thread than the one that created it counts as moved.
#pragma once

#include <tbb/global_control.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/rt/common.hpp"

namespace kern {

struct rt_tbb {
  static constexpr const char* name = "tbb";
  static constexpr bool parallel = true;
  static constexpr bool openmp = false;

  explicit rt_tbb(plait_bench::Cli&, bool = true) {}

  void start(long long threads) {
    const auto t = static_cast<std::size_t>(threads);
    gc_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, t);
    arena_ = std::make_unique<tbb::task_arena>(static_cast<int>(threads));
    arena_->initialize();
    cnt_.assign(t + 1, counter{});
  }
  template <class F>
  decltype(auto) root(F&& f) {
    return arena_->execute(std::forward<F>(f));
  }
  bool manual() const { return true; }

  void reset_stats() { cnt_.assign(cnt_.size(), counter{}); }
  void stats(plait_bench::Record& rec) const {
    unsigned long long tasks = 0, moved = 0;
    for (auto& c : cnt_) {
      tasks += c.tasks;
      moved += c.moved;
    }
    rec.stat("tasks", tasks);
    rec.stat("moved_tasks", moved);
  }

  // Index of the calling thread in the arena, clamped into the counter table.
  std::size_t me() const {
    int i = tbb::this_task_arena::current_thread_index();
    if (i < 0 || static_cast<std::size_t>(i) >= cnt_.size()) return cnt_.size() - 1;
    return static_cast<std::size_t>(i);
  }
  void note_moved(std::size_t creator) {
    std::size_t who = me();
    if (who != creator) ++cnt_[who].moved;
  }

  class group {
   public:
    group(rt_tbb& rt, bool = false, bool = false) : rt_(rt) {}
    template <class F>
    void run(F&& f) {
      std::size_t creator = rt_.me();
      ++rt_.cnt_[creator].tasks;
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
    cnt_[creator].tasks += 1;  // one fork, as the other runtimes count it
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
  struct alignas(64) counter {
    unsigned long long tasks = 0, moved = 0;
  };
  std::unique_ptr<tbb::global_control> gc_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<counter> cnt_;
};

}  // namespace kern
