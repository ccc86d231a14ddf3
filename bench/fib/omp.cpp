#include <omp.h>

#include "fib.hpp"

#include <string>

// --variant: the three cut-off styles of BOTS's fib, with the cut-off on n (as every runtime here):
//   manual  calls with n < cutoff run the serial recursion (no task constructs below the cut-off)
//   if      every call with n >= 2 creates its task; below the cut-off with if(false), undeferred
//   final   every call with n >= 2 creates its task; the first task below the cut-off is final, so
//           it and all its descendants run included (immediately, on the encountering thread)
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

// The if and final variants: every call with n >= 2 creates a task construct, and the clause of
// the chosen variant applies below the cut-off (the other clause is always if(true) / final(false)).
bool use_if = false, use_final = false;

long long fib_clause(long long n) {
  if (n < 2) return n;
  long long a = 0;
#pragma omp task shared(a) firstprivate(n) if (!use_if || n >= cutoff) final(use_final && n - 1 < cutoff)
  a = fib_clause(n - 1);
  long long b = fib_clause(n - 2);
#pragma omp taskwait
  return a + b;
}
}  // namespace

int main(int argc, char** argv) {
  return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
    fib_bench::Options o;
    fib_bench::add_options(cli, o);
    std::string variant = "manual";
    cli.add_string("variant", &variant,
                   "OpenMP cut-off style: manual (serial code past the cut-off), if (if-clause), final (final-clause)",
                   {"manual", "if", "final"});
    cli.parse();
    use_if = variant == "if";
    use_final = variant == "final";
    long long (*const kernel)(long long) = variant == "manual" ? fib : fib_clause;
    cutoff = o.cutoff;
    omp_set_num_threads(static_cast<int>(cli.threads));
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      long long r = 0;
      double secs = 0;
#pragma omp parallel
#pragma omp single
      {
        double t0 = plait_bench::now();
        r = kernel(o.n);
        secs = plait_bench::now() - t0;
      }
      rec.time_s = secs;
      fib_bench::check(rec, o, r, variant == "manual" ? -1 : 0);
    });
  });
}
