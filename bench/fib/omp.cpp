// fib on OpenMP: a task (shared result) and a taskwait in every call above the cut-off.
#include <omp.h>

#include "common/rt/omp.hpp"
#include "fib/fib.hpp"

// --variant (the adapter's option): the three cut-off styles of BOTS's fib, with the cut-off on n
// (as every runtime here):
//   manual  calls with n < cutoff run the serial recursion (no task constructs below the cut-off)
//   if      every call with n >= 2 creates its task; below the cut-off with if(false), undeferred
//   final   every call with n >= 2 creates its task; the first task below the cut-off is final, so
//           it and all its descendants run included (immediately, on the encountering thread)
namespace {
long long cutoff = 0;

// The manual cut-off. Cut: calls with n < cutoff run the serial recursion. !Cut (--cutoff 0, a
// task per call: the per-task overhead measurement): the leaf inline and no cut-off test per call,
// as the other runtimes' fib_all; its serial elision is serial_fib itself (the serial binary's
// cut-off-0 program). With the test, each leaf would make one more call, into serial_fib, which
// the serial program does not: that call would count as the runtime's overhead.
template <bool Cut>
long long fib(long long n) {
  if constexpr (Cut) {
    if (n < 2 || n < cutoff) return fib_bench::serial_fib(n);
  } else {
    if (n < 2) return n;
  }
  long long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib<Cut>(n - 1);
  long long b = fib<Cut>(n - 2);
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
  return fib_bench::main_for<kern::rt_omp>(argc, argv, [](kern::rt_omp& rt, const fib_bench::Options& o) {
    cutoff = o.cutoff;
    use_if = rt.variant() == kern::omp_variant::if_clause;
    use_final = rt.variant() == kern::omp_variant::final_clause;
    if (rt.manual()) return o.cutoff == 0 ? &fib<false> : &fib<true>;
    return &fib_clause;
  });
}
