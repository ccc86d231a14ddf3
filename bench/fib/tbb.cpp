#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "fib.hpp"

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
}  // namespace

int main(int argc, char** argv) {
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    cli.parse();
    cutoff = o.cutoff;
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(cli.threads));
    tbb::task_arena arena(static_cast<int>(cli.threads));
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      long long r = 0;
      double secs = 0;
      arena.execute([&] {
        double t0 = plait_bench::now();
        r = fib(o.n);
        secs = plait_bench::now() - t0;
      });
      rec.time_s = secs;
      fib_bench::check(rec, o, r);
    });
  });
}
