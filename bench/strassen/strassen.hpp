// Strassen (BOTS strassen): C = A * B for n x n matrices, n a power of two. Each node splits its
// operands into quadrants and forms the seven Strassen products
//   M1 = (A11 + A22)(B11 + B22)  M2 = (A21 + A22) B11  M3 = A11 (B12 - B22)  M4 = A22 (B21 - B11)
//   M5 = (A11 + A12) B22         M6 = (A21 - A11)(B11 + B12)                 M7 = (A12 - A22)(B21 + B22)
//   C11 = M1 + M4 - M5 + M7   C12 = M3 + M5   C21 = M2 + M4   C22 = M1 - M2 + M3 + M6
// as seven child tasks (each forms its operand sums and recurses), then combines them. Matrices of
// size <= --leaf use the plain triple loop. Cut-off = matrix size at or below which a node runs
// serially (manual) or, for the OpenMP variants, creates undeferred (if) / final (final) tasks.
//
// Verification: the result is compared with a plain blocked multiply computed separately:
// ||C - C_ref||_F / (||A||_F ||B||_F) must be <= 1e-13 * n (inputs uniform in [-1, 1]).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/rt/common.hpp"

namespace strassen {

// A view of an n x n block inside a row-major matrix with leading dimension ld.
struct view {
  double* p;
  std::size_t ld;
  double& at(std::size_t i, std::size_t j) const { return p[i * ld + j]; }
  view quad(std::size_t qi, std::size_t qj, std::size_t h) const { return {p + qi * h * ld + qj * h, ld}; }
};

// C = A * B, plain i-k-j loop.
inline void multiply_plain(view C, view A, view B, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    double* c = &C.at(i, 0);
    for (std::size_t j = 0; j < n; ++j) c[j] = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double a = A.at(i, k);
      const double* b = &B.at(k, 0);
      for (std::size_t j = 0; j < n; ++j) c[j] += a * b[j];
    }
  }
}

// D = X + s * Y (s = +1 or -1), all n x n.
inline void add(view D, view X, view Y, double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) D.at(i, j) = X.at(i, j) + s * Y.at(i, j);
}

struct params {
  std::size_t leaf, cutoff;
};

template <class RT>
void multiply(RT& rt, view C, view A, view B, std::size_t n, const params& p) {
  if (n <= p.leaf) {
    multiply_plain(C, A, B, n);
    return;
  }
  const std::size_t h = n / 2, hh = h * h;
  // Seven products and up to two operand sums each, contiguous h x h blocks.
  std::unique_ptr<double[]> buf(new double[21 * hh]);
  auto blk = [&](std::size_t k) { return view{buf.get() + k * hh, h}; };
  const view A11 = A.quad(0, 0, h), A12 = A.quad(0, 1, h), A21 = A.quad(1, 0, h), A22 = A.quad(1, 1, h);
  const view B11 = B.quad(0, 0, h), B12 = B.quad(0, 1, h), B21 = B.quad(1, 0, h), B22 = B.quad(1, 1, h);
  view M[7];
  for (std::size_t k = 0; k < 7; ++k) M[k] = blk(k);
  auto product = [&, h](std::size_t k) {
    const view S = blk(7 + 2 * k), T = blk(8 + 2 * k);
    switch (k) {
      case 0: add(S, A11, A22, 1, h); add(T, B11, B22, 1, h); multiply(rt, M[0], S, T, h, p); break;
      case 1: add(S, A21, A22, 1, h); multiply(rt, M[1], S, B11, h, p); break;
      case 2: add(T, B12, B22, -1, h); multiply(rt, M[2], A11, T, h, p); break;
      case 3: add(T, B21, B11, -1, h); multiply(rt, M[3], A22, T, h, p); break;
      case 4: add(S, A11, A12, 1, h); multiply(rt, M[4], S, B22, h, p); break;
      case 5: add(S, A21, A11, -1, h); add(T, B11, B12, 1, h); multiply(rt, M[5], S, T, h, p); break;
      default: add(S, A12, A22, -1, h); add(T, B21, B22, 1, h); multiply(rt, M[6], S, T, h, p); break;
    }
  };
  if (n <= p.cutoff && rt.manual()) {
    for (std::size_t k = 0; k < 7; ++k) product(k);
  } else {
    typename RT::group g(rt, n <= p.cutoff, h <= p.cutoff);
    for (std::size_t k = 0; k < 7; ++k) g.run([&product, k] { product(k); });
    g.wait();
  }
  const view C11 = C.quad(0, 0, h), C12 = C.quad(0, 1, h), C21 = C.quad(1, 0, h), C22 = C.quad(1, 1, h);
  for (std::size_t i = 0; i < h; ++i)
    for (std::size_t j = 0; j < h; ++j) {
      const double m1 = M[0].at(i, j), m2 = M[1].at(i, j), m3 = M[2].at(i, j), m4 = M[3].at(i, j);
      const double m5 = M[4].at(i, j), m6 = M[5].at(i, j), m7 = M[6].at(i, j);
      C11.at(i, j) = m1 + m4 - m5 + m7;
      C12.at(i, j) = m3 + m5;
      C21.at(i, j) = m2 + m4;
      C22.at(i, j) = m1 - m2 + m3 + m6;
    }
}

// Reference: C = A * B by a plain blocked multiply (64 x 64 blocks).
inline void multiply_blocked(std::vector<double>& C, const std::vector<double>& A, const std::vector<double>& B,
                             std::size_t n) {
  const std::size_t bs = 64;
  std::fill(C.begin(), C.end(), 0.0);
  for (std::size_t ii = 0; ii < n; ii += bs)
    for (std::size_t kk = 0; kk < n; kk += bs)
      for (std::size_t jj = 0; jj < n; jj += bs)
        for (std::size_t i = ii; i < std::min(ii + bs, n); ++i)
          for (std::size_t k = kk; k < std::min(kk + bs, n); ++k) {
            const double a = A[i * n + k];
            for (std::size_t j = jj; j < std::min(jj + bs, n); ++j) C[i * n + j] += a * B[k * n + j];
          }
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("strassen", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, true);
    long long n = 512, leaf = 32, seed = 1;
    std::string size = "ci", cutoff_s = "coarse";
    bool inject = false;
    cli.add_int("n", &n, 1, 1 << 14, "matrix size, a power of two, >= --leaf and >= the cut-off; overrides --size");
    cli.add_size("size", &size, "problem class: ci (512), test (128), small (1024, BOTS default), medium (2048)",
                 {"ci", "test", "small", "medium"}, {{"n", {512, 128, 1024, 2048}}});
    cli.add_int("leaf", &leaf, 1, 1 << 14, "matrices up to this size use the plain triple loop");
    cli.add_string("cutoff", &cutoff_s,
                   "matrix size at or below which a node is serial: coarse = max(leaf, n/4), fine = leaf (every "
                   "Strassen node spawns), or an integer 1..16384");
    cli.add_int("seed", &seed, 0, 1LL << 62, "seed of the random inputs");
    cli.add_inject_error(&inject);
    cli.parse();
    plait_bench::require_power_of_two("n", n);
    params p{};
    p.leaf = static_cast<std::size_t>(leaf);
    p.cutoff = static_cast<std::size_t>(kern::parse_cutoff("cutoff", cutoff_s, std::max(leaf, n / 4), leaf, 1, 1 << 14));
    if (n < leaf)
      throw plait_bench::usage_error("option --n: " + std::to_string(n) + " is below the leaf size " +
                                     std::to_string(leaf) + "; accepted: powers of two >= --leaf");
    if (static_cast<std::size_t>(n) < p.cutoff)
      throw plait_bench::usage_error("option --n: " + std::to_string(n) + " is below the cut-off " +
                                     std::to_string(p.cutoff) + "; accepted: powers of two >= the cut-off");

    const std::size_t nn = static_cast<std::size_t>(n);
    std::vector<double> A(nn * nn), B(nn * nn), C(nn * nn), R(nn * nn);
    std::uint64_t s = static_cast<std::uint64_t>(seed) * 0x9e3779b97f4a7c15ULL + 777;
    auto uni = [&s] {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    };
    for (auto& v : A) v = uni();
    for (auto& v : B) v = uni();
    multiply_blocked(R, A, B, nn);
    auto fro = [](const std::vector<double>& v) {
      long double t = 0;
      for (double x : v) t += static_cast<long double>(x) * x;
      return static_cast<double>(std::sqrt(t));
    };
    const double scale = fro(A) * fro(B);
    const double bound = 1e-13 * static_cast<double>(nn);

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      double t0 = plait_bench::now();
      rt.root([&] { multiply(rt, view{C.data(), nn}, view{A.data(), nn}, view{B.data(), nn}, nn, p); });
      rec.time_s = plait_bench::now() - t0;
      if (inject) C[nn * nn / 2] += 1e-3;
      long double e = 0;
      for (std::size_t i = 0; i < nn * nn; ++i) e += static_cast<long double>(C[i] - R[i]) * (C[i] - R[i]);
      const double rel = static_cast<double>(std::sqrt(e)) / scale;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1e", bound);
      rec.check(rel <= bound, std::string("||C - C_blocked||_F / (||A||_F ||B||_F) <= ") + buf);
      rec.stat("rel_error", rel);
      rec.stat("cutoff_value", static_cast<unsigned long long>(p.cutoff));
      rt.stats(rec);
    });
  });
}

}  // namespace strassen
