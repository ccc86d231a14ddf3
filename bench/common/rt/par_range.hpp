// A parallel loop over the indices [lo, hi) made of an adapter's invoke (see common.hpp): the range
// is halved until one index is left, and f(i) runs there. The kernels whose BOTS "for" generator is
// a parallel loop (alignment, sparselu) use it where OpenMP has `omp for`.
#pragma once

#include <cstddef>

namespace kern {

template <class RT, class F>
void par_range(RT& rt, std::size_t lo, std::size_t hi, const F& f) {
  if (hi - lo == 0) return;
  if (hi - lo == 1) {
    f(lo);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  rt.invoke([&] { par_range(rt, lo, mid, f); }, [&] { par_range(rt, mid, hi, f); });
}

}  // namespace kern
