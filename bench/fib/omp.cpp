#include <omp.h>

#include "fib.hpp"

namespace {
long long cutoff = 0;

long long fib(long long n) {
  if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  long long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  long long b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}
}  // namespace

int main(int argc, char** argv) {
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    cli.parse();
    cutoff = o.cutoff;
    omp_set_num_threads(static_cast<int>(cli.threads));
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      long long r = 0;
      double secs = 0;
#pragma omp parallel
#pragma omp single
      {
        double t0 = plait_bench::now();
        r = fib(o.n);
        secs = plait_bench::now() - t0;
      }
      rec.time_s = secs;
      fib_bench::check(rec, o, r);
    });
  });
}
