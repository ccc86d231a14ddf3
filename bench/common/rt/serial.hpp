// Serial adapter: the serial elision of the task-parallel kernels (see rt/common.hpp).
#pragma once

#include <cstddef>
#include <utility>

#include "common/rt/common.hpp"

namespace kern {

struct rt_serial : rt_traits<false, false, false> {
  static constexpr const char* name = "serial";

  explicit rt_serial(plait_bench::Cli&, bool = true) {}
  void start(long long) {}
  template <class F>
  decltype(auto) root(F&& f) {
    return std::forward<F>(f)();
  }
  void reset_stats() {}
  void stats(plait_bench::Record&) const {}
  unsigned long long moved_tasks() const { return 0; }

  class group {
   public:
    group(rt_serial&, bool = false, bool = false) {}
    template <class F>
    void run(F&& f) {
      std::forward<F>(f)();
    }
    void wait() {}
  };

  template <class F, class G>
  void invoke(F&& f, G&& g) {
    std::forward<F>(f)();
    std::forward<G>(g)();
  }
};

}  // namespace kern
