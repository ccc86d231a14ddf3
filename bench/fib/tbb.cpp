// fib on oneTBB: a tbb::task_group with one task in every call above the cut-off.
#include <tbb/task_group.h>

#include "common/rt/tbb.hpp"
#include "fib/fib.hpp"

namespace {
long long cutoff = 0;

long long fib(long long n) {
  if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  long long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib(n - 1); });
  long long b = fib(n - 2);
  g.wait();
  return a + b;
}

// --cutoff 0 (a task per call): the leaf inline and no cut-off test per call, as the other
// runtimes' fib_all (its serial elision is serial_fib itself).
long long fib_all(long long n) {
  if (n < 2) return n;
  long long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib_all(n - 1); });
  long long b = fib_all(n - 2);
  g.wait();
  return a + b;
}
}  // namespace

int main(int argc, char** argv) {
  return fib_bench::main_for<kern::rt_tbb>(argc, argv, [](kern::rt_tbb&, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    return o.cutoff == 0 ? fib_all : fib;
  });
}
