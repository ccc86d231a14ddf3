// flatloop: the loop-to-task target microbenchmark (docs/loops.md). A flat loop of --n iterations
// (10^6 by default); every iteration does ~--work-ns of compute (1 us by default) that touches no
// memory: K steps of a 64-bit LCG kept in a register (an empty asm statement keeps the compiler from
// folding the loop). K is calibrated once per process against a serial loop of the same body, or
// fixed with --spin K. By default all tasks are created by one thread, one per iteration
// (puretask-single, grain 1); every variant of loops.hpp is available.
//
// Verification: iteration i adds its LCG state after K steps from seed i+1 to out[i] (zeroed before
// each repetition). The expected value is A (i+1) + C with (A, C) the K-step jump of the LCG
// (computed by repeated squaring), so every slot is checked exactly: a lost iteration leaves 0, an
// iteration run twice leaves twice the value. Any mismatch is exit 1.
//
// Stats: spin_steps (K), ns_per_step, calib_ns_per_iter (serial loop, this process), ns_per_iter
// (this repetition's time / n), plus the tracker's tasks/runs/affinity and the runtime's counters.
// Parallel efficiency against the serial binary is computed by the study tool (python/.../loops.py)
// from time_s / spin_steps, so that processes with slightly different K compare fairly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/driver.hpp"
#include "mandel/loops.hpp"

namespace flatloop {

constexpr std::uint64_t lcg_a = 6364136223846793005ULL, lcg_c = 1442695040888963407ULL;

inline std::uint64_t spin(std::uint64_t k, std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint64_t i = 0; i < k; ++i) {
    x = x * lcg_a + lcg_c;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// (A, C) with spin(k, x) == A x + C (mod 2^64).
inline std::pair<std::uint64_t, std::uint64_t> jump(std::uint64_t k) {
  std::uint64_t A = 1, C = 0;            // accumulated map
  std::uint64_t a = lcg_a, c = lcg_c;    // map for 2^j steps
  while (k) {
    if (k & 1) {
      A = a * A;
      C = a * C + c;
    }
    c = a * c + c;
    a = a * a;
    k >>= 1;
  }
  return {A, C};
}

// Nanoseconds per LCG step: the best of several runs of 2^20 steps.
inline double ns_per_step() {
  double best = 1e30;
  std::uint64_t sink = 0;
  for (int r = 0; r < 7; ++r) {
    const double t0 = plait_bench::now();
    sink += spin(1u << 20, static_cast<std::uint64_t>(r));
    best = std::min(best, plait_bench::now() - t0);
  }
  asm volatile("" : : "r"(sink));
  return best * 1e9 / static_cast<double>(1u << 20);
}

template <class Exec>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("flatloop", argc, argv, [](plait_bench::Cli& cli) {
    Exec ex(cli);
    long long n = 1000000, spin_k = 0;
    double work_ns = 1000;
    bool inject = false;
    cli.add_int("n", &n, 1, 1LL << 30, "loop iterations");
    cli.add_double("work-ns", &work_ns, 1, 1e9, "target compute per iteration in ns (calibrated; ignored with --spin)");
    cli.add_int("spin", &spin_k, 0, 1LL << 40, "K: LCG steps per iteration (0: calibrate to --work-ns)");
    cli.add_inject_error(&inject, "one result");
    cli.parse();
    if (cli.given("spin") && spin_k == 0) throw plait_bench::usage_error("option --spin: must be 1.." + std::to_string(1LL << 40));
    ex.start(cli);

    const double step_ns = ns_per_step();
    std::uint64_t K =
        spin_k > 0 ? static_cast<std::uint64_t>(spin_k)
                   : static_cast<std::uint64_t>(std::max(1.0, std::round(work_ns / std::max(step_ns, 1e-3))));
    std::vector<std::uint64_t> out(static_cast<std::size_t>(n), 0);
    std::uint64_t* o = out.data();
    // calibration: the serial loop itself, on the first min(n, 20000) iterations (best of 3); with
    // an automatic K, K is rescaled once so that this loop takes --work-ns per iteration
    const std::int64_t m = std::min<std::int64_t>(n, 20000);
    auto serial_ns = [&](std::uint64_t k) {
      double best = 1e30;
      for (int r = 0; r < 3; ++r) {
        const double t0 = plait_bench::now();
        for (std::int64_t i = 0; i < m; ++i) o[i] += spin(k, static_cast<std::uint64_t>(i) + 1);
        best = std::min(best, (plait_bench::now() - t0) * 1e9 / static_cast<double>(m));
      }
      return best;
    };
    double calib = serial_ns(K);
    if (spin_k == 0 && calib > 0) {
      K = static_cast<std::uint64_t>(std::max(1.0, std::round(static_cast<double>(K) * work_ns / calib)));
      calib = serial_ns(K);
    }
    const std::pair<std::uint64_t, std::uint64_t> AC = jump(K);
    const std::uint64_t A = AC.first, C = AC.second;
    auto body = [o, K](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) o[i] += spin(K, static_cast<std::uint64_t>(i) + 1);
    };

    loops::tracker tr;
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      std::fill(out.begin(), out.end(), 0);
      tr.reset(n, ex.slots());
      ex.reset_stats();
      const double t0 = plait_bench::now();
      ex.run(n, tr, body);
      rec.time_s = plait_bench::now() - t0;
      if (inject) out[static_cast<std::size_t>(n / 3)] += 1;
      std::int64_t bad = 0, first_bad = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        if (out[static_cast<std::size_t>(i)] != A * (static_cast<std::uint64_t>(i) + 1) + C) {
          if (bad++ == 0) first_bad = i;
        }
      }
      rec.check(bad == 0, bad == 0 ? std::to_string(n) + " iterations x " + std::to_string(K) +
                                         " LCG steps: every result exact, each iteration ran once"
                                   : std::to_string(bad) + " of " + std::to_string(n) +
                                         " iteration results wrong (lost or run twice), first at i = " +
                                         std::to_string(first_bad));
      rec.stat("spin_steps", static_cast<unsigned long long>(K));
      rec.stat("ns_per_step", step_ns);
      rec.stat("calib_ns_per_iter", calib);
      rec.stat("ns_per_iter", rec.time_s * 1e9 / static_cast<double>(n));
      rec.stat("variant", loops::name(ex.get().v));
      tr.stats(rec);
      ex.stats(rec);
    });
  });
}

}  // namespace flatloop
