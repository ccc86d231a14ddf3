#include "common/rt/serial.hpp"
#include "fib/fib.hpp"

namespace {
long long cutoff = 0;

// The serial elision of the runtimes' fib: the same recursion with the spawn and the join
// removed, so above the cut-off it makes the same calls in the same order (the spawned call
// first) and enters serial_fib at the same values of n. Timing serial_fib(n) as a whole instead
// is not the same program: entered at n = 40 rather than at n = 24 and 23 (cut-off 25), the
// very same serial_fib code runs up to 12 % faster or slower on this machine (docs/kernels.md),
// and that difference was being reported as the runtimes' overhead.
long long fib(long long n) {
  if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  long long a = fib(n - 1);
  long long b = fib(n - 2);
  return a + b;
}
}  // namespace

int main(int argc, char** argv) {
  return fib_bench::main_for<kern::rt_serial>(argc, argv, [](kern::rt_serial&, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    // cut-off 0 elides fib_all (a task per call), whose elision is serial_fib itself
    return o.cutoff == 0 ? fib_bench::serial_fib : fib;
  });
}
