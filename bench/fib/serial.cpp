#include "fib.hpp"

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
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    cli.parse();
    cutoff = o.cutoff;
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      double t0 = plait_bench::now();
      // cut-off 0 elides fib_all (a task per call), whose elision is serial_fib itself
      long long r = o.cutoff == 0 ? fib_bench::serial_fib(o.n) : fib(o.n);
      rec.time_s = plait_bench::now() - t0;
      fib_bench::check(rec, o, r);
    });
  });
}
