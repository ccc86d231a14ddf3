#include <plait/plait.hpp>

#include "common/plait_counters.hpp"
#include "fib.hpp"

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
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    cli.parse();
    cutoff = o.cutoff;
    plait::pool pool(plait::pool_options{.num_workers = static_cast<unsigned>(cli.threads)});
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      pool.reset_counters();
      // Timed inside the root task: the hand-over to a worker is not part of the kernel.
      auto [r, secs] = pool.run([&] {
        double t0 = plait_bench::now();
        long long v = o.cutoff == 0 ? fib_all(o.n) : fib(o.n);
        return std::pair{v, plait_bench::now() - t0};
      });
      rec.time_s = secs;
      fib_bench::check(rec, o, r);
      const plait::worker_counters c = pool.total_counters();
      plait_bench::put_counters(rec, c);
      rec.stat("moved_tasks", static_cast<unsigned long long>(c.steals));
    });
  });
}
