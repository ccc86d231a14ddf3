// FFT (BOTS fft): complex forward DFT of size n = 2^k by recursive radix-2 decimation in time.
// The two half-size transforms run in parallel, and the n/2 butterflies of a level are split
// recursively into parallel chunks. Cut-off = transform/chunk size at or below which everything
// is serial.
//
// Verification (all with the benchmarked transform):
//   - the timed run transforms random data x; 4 output bins are compared with direct DFT sums;
//   - round trip: x' = conj(F(conj(F(x)))) / n must equal x within a relative L2 error of
//     16 * eps * log2(n);
//   - the all-(1+i) input must give out[0] = n(1+i) and every other bin 0, within the same bound
//     relative to ||out||_2 = n * sqrt(2).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "common/rt/common.hpp"

namespace fft {

struct cplx {
  double re, im;
};
inline cplx operator+(cplx a, cplx b) { return {a.re + b.re, a.im + b.im}; }
inline cplx operator-(cplx a, cplx b) { return {a.re - b.re, a.im - b.im}; }
inline cplx operator*(cplx a, cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

// W[k] = exp(-2 pi i k / n), k < n/2.
inline std::vector<cplx> twiddles(std::size_t n) {
  std::vector<cplx> w(std::max<std::size_t>(n / 2, 1));
  for (std::size_t k = 0; k < w.size(); ++k) {
    const double a = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    w[k] = {std::cos(a), std::sin(a)};
  }
  return w;
}

inline void butterflies_serial(cplx* out, std::size_t h, const cplx* W, std::size_t wstep, std::size_t lo,
                               std::size_t hi) {
  for (std::size_t k = lo; k < hi; ++k) {
    const cplx t = W[k * wstep] * out[k + h];
    out[k + h] = out[k] - t;
    out[k] = out[k] + t;
  }
}

template <class RT>
void butterflies(RT& rt, cplx* out, std::size_t h, const cplx* W, std::size_t wstep, std::size_t lo, std::size_t hi,
                 std::size_t cut) {
  if (hi - lo <= cut) {
    butterflies_serial(out, h, W, wstep, lo, hi);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  rt.invoke([&] { butterflies(rt, out, h, W, wstep, lo, mid, cut); },
            [&] { butterflies(rt, out, h, W, wstep, mid, hi, cut); });
}

// out[0..n) = DFT of in[0], in[s], ..., in[(n-1)s]; W is the table of the full size, wstep = N/n.
template <class RT>
void transform(RT& rt, const cplx* in, std::size_t s, cplx* out, std::size_t n, const cplx* W, std::size_t wstep,
               std::size_t cut) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  if (n == 2) {
    out[0] = in[0] + in[s];
    out[1] = in[0] - in[s];
    return;
  }
  const std::size_t h = n / 2;
  if (n > cut) {
    rt.invoke([&] { transform(rt, in, 2 * s, out, h, W, 2 * wstep, cut); },
              [&] { transform(rt, in + s, 2 * s, out + h, h, W, 2 * wstep, cut); });
    butterflies(rt, out, h, W, wstep, 0, h, cut);
  } else {
    transform(rt, in, 2 * s, out, h, W, 2 * wstep, cut);
    transform(rt, in + s, 2 * s, out + h, h, W, 2 * wstep, cut);
    butterflies_serial(out, h, W, wstep, 0, h);
  }
}

inline double l2(const std::vector<cplx>& v) {
  long double s = 0;
  for (auto& c : v) s += static_cast<long double>(c.re) * c.re + static_cast<long double>(c.im) * c.im;
  return static_cast<double>(std::sqrt(s));
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("fft", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);
    long long n = 1 << 20, seed = 1;
    std::string size = "ci", cutoff_s = "coarse";
    bool inject = false;
    cli.add_int("n", &n, 2, 1LL << 28, "transform size, a power of two; overrides --size");
    cli.add_size("size", &size, "problem class: ci (2^20), test (2^16), small (2^22), medium (2^24)",
                 {"ci", "test", "small", "medium"}, {{"n", {1 << 20, 1 << 16, 1 << 22, 1 << 24}}});
    cli.add_string("cutoff", &cutoff_s,
                   "size at or below which transforms and butterfly chunks are serial: coarse = max(16, n/64), "
                   "fine = 16, or 2..2^28");
    cli.add_int("seed", &seed, 0, 1LL << 62, "seed of the random input");
    cli.add_inject_error(&inject);
    cli.parse();
    plait_bench::require_power_of_two("n", n);
    const std::size_t cut = static_cast<std::size_t>(
        kern::parse_cutoff("cutoff", cutoff_s, std::max(16LL, n / 64), 16, 2, 1LL << 28));
    const std::size_t nn = static_cast<std::size_t>(n);
    const std::vector<cplx> W = twiddles(nn);
    std::vector<cplx> x(nn), X(nn), y(nn), z(nn);
    std::uint64_t s = static_cast<std::uint64_t>(seed) * 0x9e3779b97f4a7c15ULL + 12345;
    auto uni = [&s] {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    };
    for (auto& c : x) c = {uni(), uni()};
    const double eps = std::numeric_limits<double>::epsilon();
    const double bound = 16.0 * eps * std::log2(static_cast<double>(nn));
    const double xnorm = l2(x);

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      double t0 = plait_bench::now();
      rt.root([&] { transform(rt, x.data(), 1, X.data(), nn, W.data(), 1, cut); });
      rec.time_s = plait_bench::now() - t0;
      rt.stats(rec);
      if (inject) X[(nn / 2 + 1) % nn].re += 1e-6 * xnorm;

      // Spot check against direct sums.
      double spot = 0;
      for (std::size_t k : {std::size_t{0}, std::size_t{1}, (nn / 2 + 1) % nn, nn - 1}) {
        long double re = 0, im = 0;
        for (std::size_t j = 0; j < nn; ++j) {
          // exp(-2 pi i m / n) from the table: W[m] for m < n/2, -W[m - n/2] above
          const std::size_t m = (k * j) % nn;  // k * j < 2^56
          const cplx w = nn == 1 ? cplx{1, 0} : m < nn / 2 ? W[m] : cplx{-W[m - nn / 2].re, -W[m - nn / 2].im};
          const long double c = w.re, si = w.im;
          re += x[j].re * c - x[j].im * si;
          im += x[j].re * si + x[j].im * c;
        }
        spot = std::max(spot, static_cast<double>(std::hypot(re - X[k].re, im - X[k].im)));
      }
      // bins of a random input have size ~ ||x||_2; allow the round-trip bound relative to it
      const double spot_rel = spot / xnorm;

      // Round trip: conj(F(conj(X))) / n == x.
      for (std::size_t i = 0; i < nn; ++i) z[i] = {X[i].re, -X[i].im};
      rt.root([&] { transform(rt, z.data(), 1, y.data(), nn, W.data(), 1, cut); });
      long double err = 0;
      for (std::size_t i = 0; i < nn; ++i) {
        const double re = y[i].re / static_cast<double>(nn) - x[i].re;
        const double im = -y[i].im / static_cast<double>(nn) - x[i].im;
        err += static_cast<long double>(re) * re + static_cast<long double>(im) * im;
      }
      const double rt_rel = static_cast<double>(std::sqrt(err)) / xnorm;

      // Constant input.
      for (auto& c : z) c = {1.0, 1.0};
      rt.root([&] { transform(rt, z.data(), 1, y.data(), nn, W.data(), 1, cut); });
      const double dn = static_cast<double>(nn);
      long double cerr = (static_cast<long double>(y[0].re) - dn) * (y[0].re - dn) +
                         (static_cast<long double>(y[0].im) - dn) * (y[0].im - dn);
      for (std::size_t i = 1; i < nn; ++i)
        cerr += static_cast<long double>(y[i].re) * y[i].re + static_cast<long double>(y[i].im) * y[i].im;
      const double c_rel = static_cast<double>(std::sqrt(cerr)) / (dn * std::sqrt(2.0));

      char buf[160];
      std::snprintf(buf, sizeof buf, "%.1e", bound);
      const std::string b = buf;
      rec.check(spot_rel <= bound, "4 output bins equal direct DFT sums within " + b + " * ||x||");
      rec.check(c_rel <= bound, "all-(1+i) input: out[0] = n(1+i), rest 0, relative L2 error <= " + b);
      rec.check(rt_rel <= bound, "spot bins, constant input and round trip within relative error " + b);
      rec.stat("roundtrip_rel_error", rt_rel);
      rec.stat("constant_rel_error", c_rel);
      rec.stat("spot_rel_error", spot_rel);
      rec.stat("cutoff_value", static_cast<unsigned long long>(cut));
    });
  });
}

}  // namespace fft
