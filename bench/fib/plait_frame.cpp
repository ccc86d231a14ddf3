// fib on Plait's frame tasks (plait/frame.hpp): the frame spawn and sync in every call above the
// cut-off, the context passed down the recursion. The same recursion as plait.cpp, call for call.
#include <plait/frame.hpp>

#include "common/rt/plait.hpp"
#include "fib/fib.hpp"

namespace {
long long cutoff = 0;

long long fib(plait::frame f, long long n) noexcept {
  if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  auto a = f.spawn<fib>(n - 1);
  long long b = fib(f, n - 2);
  return f.sync(a) + b;
}

// --cutoff 0 (a task per call), the spawn-overhead measurement: no cut-off test per call.
long long fib_all(plait::frame f, long long n) noexcept {
  if (n < 2) return n;
  auto a = f.spawn<fib_all>(n - 1);
  long long b = fib_all(f, n - 2);
  return f.sync(a) + b;
}

long long run_fib(long long n) { return plait::frame::call<fib>(n); }
long long run_fib_all(long long n) { return plait::frame::call<fib_all>(n); }
}  // namespace

int main(int argc, char** argv) {
  return fib_bench::main_for<kern::rt_plait>(argc, argv, [](kern::rt_plait&, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    return o.cutoff == 0 ? run_fib_all : run_fib;
  });
}
