// OpenMP tasking adapter (see rt/common.hpp): libgomp when built by gcc, libomp when built by
// clang-16. Adds --variant manual|if|final, the three BOTS cut-off styles:
//   manual  the kernel stops creating tasks at the cut-off and calls its serial code
//   if      tasks past the cut-off are still created, with if(false): undeferred
//   final   tasks at the cut-off are created final(true): all their descendants are included
// Tasks are tied. Tasks are counted per thread (owner-only counters); a task that runs on another
// thread than the one that created it counts as moved.
#pragma once

#include <omp.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/rt/common.hpp"

namespace kern {

struct rt_omp : rt_traits<true, true, false> {
  // (counts_moved false: only the tasks made through group/invoke or told by note_moved count)
  static constexpr const char* name = "omp";

  // with_variants: register --variant (kernels whose BOTS version has if/final/manual cut-offs).
  explicit rt_omp(plait_bench::Cli& cli, bool with_variants = true) {
    if (with_variants)
      cli.add_string("variant", &variant_,
                   "OpenMP cut-off style: manual (serial code past the cut-off), if (if-clause), final (final-clause)",
                   {"manual", "if", "final"});
  }

  // (set_worker_stack: the default, nothing: OpenMP reads OMP_STACKSIZE when the runtime starts,
  // and plait_bench::ensure_stack sets it.)
  void start(long long threads) {
    threads_ = static_cast<int>(threads);
    var_ = variant_ == "if" ? omp_variant::if_clause
                            : variant_ == "final" ? omp_variant::final_clause : omp_variant::manual;
    cnt_.start(static_cast<std::size_t>(threads));
  }

  template <class F>
  auto root(F&& f) {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
#pragma omp parallel num_threads(threads_)
#pragma omp single
      f();
    } else {
      R result{};
#pragma omp parallel num_threads(threads_) shared(result)
#pragma omp single
      result = f();
      return result;
    }
  }

  bool manual() const { return var_ == omp_variant::manual; }
  int threads() const { return threads_; }
  omp_variant variant() const { return var_; }

  void reset_stats() { cnt_.reset(); }
  void stats(plait_bench::Record& rec) const { cnt_.stats(rec); }
  unsigned long long moved_tasks() const { return cnt_.moved(); }

  std::size_t me() const { return cnt_.line(omp_get_thread_num()); }
  // Called first thing in a task that the kernel created itself on thread `creator` (= me() there).
  void note_moved(std::size_t creator) { cnt_.ran(me(), creator); }

  class group {
   public:
    // undeferred: if(false) under the if variant; final_: final(true) under the final variant.
    group(rt_omp& rt, bool undeferred = false, bool make_final = false)
        : rt_(rt),
          defer_(!(rt.var_ == omp_variant::if_clause && undeferred)),
          final_(rt.var_ == omp_variant::final_clause && make_final) {}
    template <class F>
    void run(F&& f) {
      std::decay_t<F> fn(std::forward<F>(f));
      rt_omp* rt = &rt_;
      std::size_t creator = rt->me();
      rt->cnt_.made(creator);
#pragma omp task firstprivate(fn, creator, rt) if (defer_) final(final_)
      {
        rt->note_moved(creator);
        fn();
      }
    }
    void wait() {
#pragma omp taskwait
    }

   private:
    rt_omp& rt_;
    bool defer_, final_;
  };

  template <class F, class G>
  void invoke(F&& f, G&& g) {
    group grp(*this);
    grp.run([&] { f(); });
    g();
    grp.wait();
  }

 private:
  std::string variant_ = "manual";
  omp_variant var_ = omp_variant::manual;
  int threads_ = 1;
  thread_tasks cnt_;
};

}  // namespace kern
