#include "fib.hpp"

int main(int argc, char** argv) {
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    cli.parse();
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      double t0 = plait_bench::now();
      long long r = fib_bench::serial_fib(o.n);
      rec.time_s = plait_bench::now() - t0;
      fib_bench::check(rec, o, r);
    });
  });
}
