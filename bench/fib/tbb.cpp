// fib on oneTBB: a tbb::task_group with one task in every call above the cut-off.
#include <tbb/task_group.h>

#include "common/rt/tbb.hpp"
#include "fib/fib.hpp"

namespace {
long long cutoff = 0;

// Cut: calls with n < cutoff run the serial recursion. !Cut (--cutoff 0, a task per call): the
// leaf inline and no cut-off test per call, as the other runtimes' fib_all (its serial elision is
// serial_fib itself).
template <bool Cut>
long long fib(long long n) {
  if constexpr (Cut) {
    if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  } else {
    if (n < 2) return n;
  }
  long long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib<Cut>(n - 1); });
  long long b = fib<Cut>(n - 2);
  g.wait();
  return a + b;
}
}  // namespace

int main(int argc, char** argv) {
  return fib_bench::main_for<kern::rt_tbb>(argc, argv, [](kern::rt_tbb&, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    return o.cutoff == 0 ? &fib<false> : &fib<true>;
  });
}
