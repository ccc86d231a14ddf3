// Steal-cost microbenchmark (study 001, section 3, "cost of stolen tasks").
//
// The parallel run repeatedly (R rounds) spawns and joins a balanced binary tree of depth d
// (2^d = p leaves, d = log2 of --threads unless --depth says otherwise); every leaf runs a loop of
// C iterations that works in registers only (an empty asm statement keeps the compiler from
// folding or vectorising it). The sequential run is the depth-0 tree: R rounds of one leaf on one
// worker. Both run inside the runtime's root task with the same C and R; then
//   steal cost = (parallel time - sequential time) / R
// in nanoseconds (steady_clock) and in TSC cycles (rdtsc, calibrated against steady_clock).
// With --auto, C is chosen so that the parallel run is 10-20% slower than the sequential one, as
// the study does, which ensures the leaves really ran in parallel (the tasks were stolen).
//
// Verification: each leaf returns its loop's final value; a round's tree returns the sum over its
// leaves, so the parallel checksum must equal 2^d times the sequential one exactly.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PLAIT_STEAL_HAVE_TSC 1
#else
#define PLAIT_STEAL_HAVE_TSC 0
#endif

#include "common/rt/common.hpp"

namespace steal {

// C iterations of a 64-bit LCG step kept in a register; returns the final state.
inline std::uint64_t spin(std::uint64_t iters, std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint64_t i = 0; i < iters; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));  // no memory: an opaque register dependence only
  }
  return x;
}

inline std::uint64_t tsc() {
#if PLAIT_STEAL_HAVE_TSC
  return __rdtsc();
#else
  return 0;
#endif
}

// TSC ticks per nanosecond, measured against steady_clock over ~`seconds` (0 without a TSC).
inline double calibrate_tsc_ghz(double seconds = 0.05) {
  if (!PLAIT_STEAL_HAVE_TSC) return 0;
  using clk = std::chrono::steady_clock;
  const auto t0 = clk::now();
  const std::uint64_t c0 = tsc();
  auto t1 = t0;
  while (std::chrono::duration<double>((t1 = clk::now()) - t0).count() < seconds) {
  }
  const std::uint64_t c1 = tsc();
  return static_cast<double>(c1 - c0) / (std::chrono::duration<double>(t1 - t0).count() * 1e9);
}

// The depth-d tree: fork two subtrees, join both, sum their checksums.
template <class RT>
std::uint64_t tree(RT& rt, int d, std::uint64_t iters, std::uint64_t seed) {
  if (d == 0) return spin(iters, seed);
  std::uint64_t a = 0, b = 0;
  rt.invoke([&] { a = tree(rt, d - 1, iters, seed); }, [&] { b = tree(rt, d - 1, iters, seed); });
  return a + b;
}

struct timing {
  double s = 0;         // seconds (steady_clock)
  double cycles = 0;    // TSC ticks
  std::uint64_t sum = 0;
};

// One timed run of R rounds inside the runtime's root task: depth 0 = the sequential run.
template <class RT>
timing run_rounds(RT& rt, int depth, std::uint64_t iters, std::uint64_t rounds) {
  return rt.root([&rt, depth, iters, rounds] {
    timing t;
    std::uint64_t sum = 0;
    const double t0 = plait_bench::now();
    const std::uint64_t c0 = tsc();
    if (depth == 0) {
      for (std::uint64_t r = 0; r < rounds; ++r) sum += spin(iters, r);
    } else {
      for (std::uint64_t r = 0; r < rounds; ++r) sum += tree(rt, depth, iters, r);
    }
    const std::uint64_t c1 = tsc();
    t.s = plait_bench::now() - t0;
    t.cycles = static_cast<double>(c1 - c0);
    t.sum = sum;
    return t;
  });
}

// Seconds per leaf of `iters` iterations (one thread, no tasks), over at least ~10 ms.
inline double leaf_seconds(std::uint64_t iters) {
  std::uint64_t n = 1, sink = 0;
  for (;;) {
    const double t0 = plait_bench::now();
    for (std::uint64_t r = 0; r < n; ++r) sink += spin(iters, r);
    const double dt = plait_bench::now() - t0;
    asm volatile("" : : "r"(sink));
    if (dt >= 0.01 || n >= (1ULL << 40)) return dt / static_cast<double>(n);
    n *= 2;
  }
}

inline std::uint64_t rounds_for(double seconds, std::uint64_t iters) {
  const double per = std::max(leaf_seconds(iters), 1e-9);
  return static_cast<std::uint64_t>(std::clamp(seconds / per, 1.0, 1e12));
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("steal", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);
    long long loop = 20000, rounds = 0, depth = -1;
    double seconds = 0.25;
    bool autoc = false, inject = false;
    cli.add_int("loop", &loop, 0, 1LL << 40, "C: iterations of the leaf loop (register-only work)");
    cli.add_flag("auto", &autoc, "choose C so that the parallel run is 10-20% slower than the sequential one");
    cli.add_int("rounds", &rounds, 0, 1LL << 40,
                "R: tree spawn/join rounds per run (0: from --seconds); --reps is the driver's repetition count");
    cli.add_double("seconds", &seconds, 0.001, 3600, "target length of the sequential run when --rounds is 0");
    cli.add_int("depth", &depth, -1, 12, "tree depth d (-1: log2 of --threads, which must then be a power of two)");
    cli.add_inject_error(&inject);
    cli.parse();
    if (cli.given("loop") && autoc) throw plait_bench::usage_error("give either --loop or --auto, not both");
    int d = static_cast<int>(depth);
    if (d < 0) {
      const long long p = cli.threads;
      if ((p & (p - 1)) != 0)
        throw plait_bench::usage_error("--threads " + std::to_string(p) +
                                       " is not a power of two; give --depth explicitly (the tree has 2^d leaves)");
      d = 0;
      while ((1LL << d) < p) ++d;
    }
    const double ghz = calibrate_tsc_ghz(0.05);
    rt.start(cli.threads);

    std::uint64_t C = static_cast<std::uint64_t>(loop);
    bool converged = !autoc;
    int tries = 0;
    if (autoc) {
      // overhead per round K = (par - seq) / R is roughly independent of C; aim at K = 15% of a leaf
      // never let one leaf grow beyond ~10 ms, whatever the (noisy) overhead estimate says
      const double per_iter = leaf_seconds(100000) / 100000;
      const std::uint64_t c_max = static_cast<std::uint64_t>(std::clamp(0.01 / std::max(per_iter, 1e-12), 1e3, 1e12));
      C = 1000;
      for (tries = 1; tries <= 16; ++tries) {
        const std::uint64_t R = rounds_for(0.02, C);
        const timing s = run_rounds(rt, 0, C, R), p = run_rounds(rt, d, C, R);
        const double ratio = p.s / s.s;
        if (ratio >= 1.10 && ratio <= 1.20) {
          converged = true;
          break;
        }
        const double k = (p.s - s.s) / static_cast<double>(R);
        const double leaf = s.s / static_cast<double>(R);
        double factor = k > 0 ? (k / 0.15) / leaf : 0.25;
        factor = std::clamp(factor, 1.0 / 16, 16.0);
        C = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(static_cast<double>(C) * factor), 1, c_max);
      }
    }
    const std::uint64_t R = rounds > 0 ? static_cast<std::uint64_t>(rounds) : rounds_for(seconds, C);

    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      const timing s = run_rounds(rt, 0, C, R);
      rt.reset_stats();
      timing p = run_rounds(rt, d, C, R);
      rec.time_s = p.s;
      if (inject) p.sum += 1;
      const std::uint64_t leaves = 1ULL << d;
      const std::uint64_t want = s.sum * leaves;  // wraps mod 2^64 on both sides
      rec.check(p.sum == want, p.sum == want ? "tree checksum = " + std::to_string(leaves) +
                                                   " x sequential checksum over " + std::to_string(R) + " rounds"
                                             : "tree checksum differs from " + std::to_string(leaves) +
                                                   " x the sequential one (a leaf was lost or ran twice)");
      const double rr = static_cast<double>(R);
      rec.stat("steal_cost_ns", (p.s - s.s) / rr * 1e9);
      rec.stat("steal_cost_cycles", PLAIT_STEAL_HAVE_TSC ? (p.cycles - s.cycles) / rr : -1.0);
      rec.stat("loop", static_cast<unsigned long long>(C));
      rec.stat("reps", static_cast<unsigned long long>(R));
      rec.stat("depth", static_cast<long long>(d));
      rec.stat("leaves", static_cast<unsigned long long>(leaves));
      rec.stat("seq_s", s.s);
      rec.stat("par_s", p.s);
      rec.stat("ratio", p.s / std::max(s.s, 1e-12));
      rec.stat("tsc_ghz", ghz);
      rec.stat("auto", static_cast<long long>(autoc));
      if (autoc) {
        rec.stat("auto_converged", static_cast<long long>(converged));
        rec.stat("auto_tries", static_cast<long long>(tries));
      }
      rt.stats(rec);
    });
  });
}

}  // namespace steal
