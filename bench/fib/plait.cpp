// fib on Plait: plait::spawn and join in every call above the cut-off.
#include <plait/plait.hpp>

#include "common/rt/plait.hpp"
#include "fib/fib.hpp"

namespace {
long long cutoff = 0;

long long fib(long long n) {
  if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  auto a = plait::spawn([n] { return fib(n - 1); });
  long long b = fib(n - 2);
  return a.join() + b;
}

// --cutoff 0 (a task per call), the spawn-overhead measurement: no cut-off test per call.
long long fib_all(long long n) {
  if (n < 2) return n;
  auto a = plait::spawn([n] { return fib_all(n - 1); });
  long long b = fib_all(n - 2);
  return a.join() + b;
}
}  // namespace

int main(int argc, char** argv) {
  return fib_bench::main_for<kern::rt_plait>(argc, argv, [](kern::rt_plait&, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    return o.cutoff == 0 ? fib_all : fib;
  });
}
