#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "sparselu/sparselu.hpp"

namespace sparselu {

block_ptr new_block(std::size_t bs, bool zero) {
  constexpr std::size_t page = 4096;
  const std::size_t bytes = (bs * bs * sizeof(float) + page - 1) / page * page;
  void* p = std::aligned_alloc(page, bytes);
  if (p == nullptr) throw std::bad_alloc();
  if (zero) std::memset(p, 0, bs * bs * sizeof(float));
  return block_ptr(static_cast<float*>(p));
}

matrix generate(std::size_t nb, std::size_t bs) {
  matrix m;
  m.nb = nb;
  m.bs = bs;
  m.blk.resize(nb * nb);
  long val = 1325;  // BOTS's generator: val = 3125 val mod 65536, element = (val - 32768) / 16384
  for (std::size_t i = 0; i < nb; ++i)
    for (std::size_t j = 0; j < nb; ++j) {
      // BOTS's pattern: a block is empty off the main three diagonals when either index is odd,
      // or above the diagonal unless the row is a multiple of 3, or below unless the column is.
      bool empty = false;
      if (i < j && i % 3 != 0) empty = true;
      if (i > j && j % 3 != 0) empty = true;
      if (i % 2 == 1) empty = true;
      if (j % 2 == 1) empty = true;
      if (i == j || i + 1 == j || i == j + 1) empty = false;
      if (empty) continue;
      m.blk[i * nb + j] = new_block(bs, false);
      float* p = m.blk[i * nb + j].get();
      for (std::size_t k = 0; k < bs * bs; ++k) {
        val = (3125 * val) % 65536;
        p[k] = static_cast<float>((static_cast<double>(val) - 32768.0) / 16384.0);
      }
    }
  return m;
}

void lu0(float* d, std::size_t bs) {
  for (std::size_t k = 0; k < bs; ++k)
    for (std::size_t i = k + 1; i < bs; ++i) {
      d[i * bs + k] /= d[k * bs + k];
      const float l = d[i * bs + k];
      for (std::size_t j = k + 1; j < bs; ++j) d[i * bs + j] -= l * d[k * bs + j];
    }
}

// col = L^-1 col, L the unit lower triangle of diag.
void fwd(const float* d, float* c, std::size_t bs) {
  for (std::size_t j = 0; j < bs; ++j)
    for (std::size_t k = 0; k < bs; ++k)
      for (std::size_t i = k + 1; i < bs; ++i) c[i * bs + j] -= d[i * bs + k] * c[k * bs + j];
}

// row = row U^-1, U the upper triangle of diag.
void bdiv(const float* d, float* r, std::size_t bs) {
  for (std::size_t i = 0; i < bs; ++i)
    for (std::size_t k = 0; k < bs; ++k) {
      r[i * bs + k] /= d[k * bs + k];
      const float v = r[i * bs + k];
      for (std::size_t j = k + 1; j < bs; ++j) r[i * bs + j] -= v * d[k * bs + j];
    }
}

// inner -= row * col.
void bmod(const float* r, const float* c, float* in, std::size_t bs) {
  for (std::size_t i = 0; i < bs; ++i)
    for (std::size_t j = 0; j < bs; ++j) {
      float s = in[i * bs + j];
      for (std::size_t k = 0; k < bs; ++k) s -= r[i * bs + k] * c[k * bs + j];
      in[i * bs + j] = s;
    }
}

void factor_serial(matrix& m) {
  const std::size_t nb = m.nb, bs = m.bs;
  for (std::size_t kk = 0; kk < nb; ++kk) {
    lu0(m.at(kk, kk), bs);
    for (std::size_t jj = kk + 1; jj < nb; ++jj)
      if (m.at(kk, jj)) fwd(m.at(kk, kk), m.at(kk, jj), bs);
    for (std::size_t ii = kk + 1; ii < nb; ++ii)
      if (m.at(ii, kk)) bdiv(m.at(kk, kk), m.at(ii, kk), bs);
    for (std::size_t ii = kk + 1; ii < nb; ++ii)
      if (m.at(ii, kk))
        for (std::size_t jj = kk + 1; jj < nb; ++jj)
          if (m.at(kk, jj)) {
            ensure_block(m, ii, jj);
            bmod(m.at(ii, kk), m.at(kk, jj), m.at(ii, jj), bs);
          }
  }
}

std::string compare(const matrix& got, const matrix& ref) {
  const std::size_t nb = ref.nb, bs = ref.bs;
  for (std::size_t i = 0; i < nb; ++i)
    for (std::size_t j = 0; j < nb; ++j) {
      const float* g = got.at(i, j);
      const float* r = ref.at(i, j);
      if (!g != !r)
        return "block (" + std::to_string(i) + ", " + std::to_string(j) + ") is " + (g ? "present" : "absent") +
               " but " + (r ? "present" : "absent") + " in the serial factorisation";
      if (!g) continue;
      for (std::size_t k = 0; k < bs * bs; ++k) {
        const double a = g[k], b = r[k];
        // |a - b| <= 1e-6 |b|: the magnitude of the reference, never its signed value
        if (!(std::fabs(a - b) <= 1e-6 * std::fabs(b)))
          return "block (" + std::to_string(i) + ", " + std::to_string(j) + ") element " + std::to_string(k / bs) +
                 "," + std::to_string(k % bs) + " has relative error above 1e-6";
      }
    }
  return "";
}

double residual(const matrix& a, const matrix& f) {
  const std::size_t nb = a.nb, bs = a.bs, n = nb * bs;
  std::vector<double> x(n), ax(n, 0.0), ux(n, 0.0), uax(n, 0.0), lux(n, 0.0), bound(n, 0.0);
  unsigned long long s = 88172645463325252ULL;
  for (auto& v : x) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    v = static_cast<double>(s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  }
  // ax = A x
  for (std::size_t I = 0; I < nb; ++I)
    for (std::size_t J = 0; J < nb; ++J)
      if (const float* b = a.at(I, J))
        for (std::size_t i = 0; i < bs; ++i)
          for (std::size_t j = 0; j < bs; ++j) ax[I * bs + i] += b[i * bs + j] * x[J * bs + j];
  // ux = U x, uax = |U| |x|  (U: blocks above the diagonal, upper triangle of diagonal blocks)
  for (std::size_t I = 0; I < nb; ++I)
    for (std::size_t J = I; J < nb; ++J)
      if (const float* b = f.at(I, J))
        for (std::size_t i = 0; i < bs; ++i)
          for (std::size_t j = (I == J ? i : 0); j < bs; ++j) {
            ux[I * bs + i] += b[i * bs + j] * x[J * bs + j];
            uax[I * bs + i] += std::fabs(b[i * bs + j]) * std::fabs(x[J * bs + j]);
          }
  // lux = L ux, bound = |L| uax  (L: blocks below the diagonal, unit lower triangle of diagonal blocks)
  for (std::size_t I = 0; I < nb; ++I)
    for (std::size_t J = 0; J <= I; ++J)
      if (const float* b = f.at(I, J))
        for (std::size_t i = 0; i < bs; ++i) {
          const std::size_t jend = I == J ? i + 1 : bs;
          for (std::size_t j = 0; j < jend; ++j) {
            const double l = (I == J && j == i) ? 1.0 : b[i * bs + j];
            lux[I * bs + i] += l * ux[J * bs + j];
            bound[I * bs + i] += std::fabs(l) * uax[J * bs + j];
          }
        }
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = std::fabs(ax[i] - lux[i]) / (bound[i] > 0 ? bound[i] : 1.0);
    if (!(r <= worst)) worst = r;  // NaN propagates as a failure
  }
  return worst;
}

}  // namespace sparselu
