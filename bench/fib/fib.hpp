// fib: the benchmark around the recursion, shared by every runtime: options, the reference values,
// the check and main_for<adapter>.
//
// fib(n) with one task per call (cut-off 0), the spawn-overhead benchmark (study 001's inlined
// spawn/join cost; docs/performance.md, "Spawn and join") and the BOTS fib kernel: with
// --cutoff c, calls with n < c recurse serially (the coarse variant).
//
// The recursion itself is written per runtime, in <runtime>.cpp, with the runtime's own fork and
// join (plait::spawn and join, a tbb::task_group, an OpenMP task and taskwait): that is what the
// spawn-overhead benchmark measures, so it does not go through the adapter's group or invoke.
// Everything around it does: the pool or arena, the root task, the timing, the repetitions and
// the runtime's counters.
#pragma once

#include "common/driver.hpp"
#include "common/rt/common.hpp"

#include <cstdint>
#include <string>

namespace fib_bench {

struct Options {
  long long n = 30;
  long long cutoff = 0;
  bool inject = false;
};

inline void add_options(plait_bench::Cli& cli, Options& o) {
  cli.add_int("n", &o.n, 0, 50, "compute fib(n)");
  cli.add_int("cutoff", &o.cutoff, 0, 50, "calls with n < cutoff recurse serially (0: a task per call)");
  cli.add_inject_error(&o.inject);
}

// Exact values by iteration (independent of the recursive code under test).
inline long long reference(long long n) {
  long long a = 0, b = 1;
  for (long long i = 0; i < n; ++i) {
    long long t = a + b;
    a = b;
    b = t;
  }
  return a;
}

// Number of tasks the recursion creates: one per call with n >= max(2, cutoff).
inline std::uint64_t tasks(long long n, long long cutoff) {
  long long lim = cutoff > 2 ? cutoff : 2;
  if (n < lim) return 0;
  // t(n) = 1 + t(n-1) + t(n-2) for n >= lim, computed iteratively.
  std::uint64_t t_prev2 = 0, t_prev1 = 0;  // t(k-2), t(k-1)
  for (long long k = 0; k <= n; ++k) {
    std::uint64_t t = k < lim ? 0 : 1 + t_prev1 + t_prev2;
    t_prev2 = t_prev1;
    t_prev1 = t;
  }
  return t_prev1;
}

// Plain recursion used below the cut-off (and by the serial build). Defined once, out of line, in
// common_serial.cpp and linked into every runtime's binary, so that every runtime runs the very
// same machine code below the cut-off (an inline version was compiled differently per binary and
// made the coarse one-thread "overhead" vary by +-15 % for reasons that had nothing to do with
// the runtimes).
long long serial_fib(long long n);

// `task_cutoff`: the cut-off that decides which calls create a task construct, when it is not
// --cutoff (the OpenMP if/final variants create one in every call with n >= 2).
inline void check(plait_bench::Record& rec, const Options& o, long long got, long long task_cutoff = -1) {
  if (o.inject) got += 1;
  long long want = reference(o.n);
  rec.check(got == want, "fib(" + std::to_string(o.n) + ") = " + std::to_string(got) +
                             (got == want ? "" : ", expected " + std::to_string(want)));
  std::uint64_t t = tasks(o.n, task_cutoff < 0 ? o.cutoff : task_cutoff);
  rec.stat("result", got);
  rec.stat("tasks", static_cast<unsigned long long>(t));
  if (t) rec.stat("ns_per_task", rec.time_s * 1e9 / static_cast<double>(t));
}

// The recursion a runtime's binary times: fib(n) for the options given.
using kernel_fn = long long (*)(long long);

// The benchmark on adapter RT. `select(rt, options)` is called once, after the runtime has
// started, and returns the runtime's recursion for these options (it also hands the cut-off to
// that code). Each repetition runs kernel(n) as the root task, timed inside it (the hand-over to
// a worker is not part of the kernel).
template <class RT, class Select>
int main_for(int argc, char** argv, Select select) {
  return plait_bench::main_guard("fib", argc, argv, [&](plait_bench::Cli& cli) {
    Options o;
    add_options(cli, o);
    RT rt(cli);  // after the kernel's options: OpenMP's --variant comes last, in --help and params
    cli.parse();
    rt.start(cli.threads);
    const kernel_fn kernel = select(rt, o);
    // OpenMP's if/final variants create a task construct in every call with n >= 2
    const long long task_cutoff = rt.manual() ? -1 : 0;
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      long long r = 0;
      rec.time_s = kern::timed_root(rt, [&] { r = kernel(o.n); });
      check(rec, o, r, task_cutoff);
      kern::runtime_stats(rt, rec);
    });
  });
}

}  // namespace fib_bench
