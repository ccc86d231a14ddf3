// SparseLU (BOTS sparselu): LU factorisation without pivoting of a sparse blocked matrix (nb x nb
// blocks of bs x bs floats, BOTS's sparsity pattern and value generator). For every diagonal
// block kk: lu0 on the diagonal block; fwd on the blocks of row kk and bdiv on the blocks of
// column kk (tasks); taskwait; bmod on every block (ii, jj) of the trailing matrix with both
// factors present, allocating fill-in blocks as needed (tasks); taskwait.
//
// Two task generators, as in BOTS:
//   single  one thread runs the loops and creates every task;
//   for     the generating loops are themselves parallel (OpenMP: `omp for` inside the parallel
//           region, each iteration creating tasks; other runtimes: a parallel divide-and-conquer
//           over the loop range whose iterations create their tasks).
// There is no cut-off (the study lists none for SparseLU): the granularity is the block size.
//
// Verification: (1) the factors equal a serial factorisation of the same matrix element by
// element, |x - ref| <= 1e-6 |ref| with the same fill-in pattern; (2) the factors really factor the
// input: for a random x, |A x - L (U x)| <= 1e-4 (|L| (|U| |x|)) in every row.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/rt/common.hpp"
#include "common/rt/par_range.hpp"

namespace sparselu {

// Blocks start on a page boundary (see new_block).
struct block_free {
  void operator()(float* p) const noexcept { std::free(p); }
};
using block_ptr = std::unique_ptr<float[], block_free>;
block_ptr new_block(std::size_t bs, bool zero);

struct matrix {
  std::size_t nb = 0, bs = 0;
  std::vector<block_ptr> blk;  // nb * nb, null where the block is empty
  float* at(std::size_t i, std::size_t j) const { return blk[i * nb + j].get(); }
};

matrix generate(std::size_t nb, std::size_t bs);
// The four block kernels are never inlined, not even into factor_serial in the same file, so the
// serial baseline runs the very machine code that every runtime's tasks run. clang inlined them
// there, and the serial binary timed its own copy of bmod's loop, placed differently
// (docs/bench-protocol.md, "Code placement").
[[gnu::noinline]] void lu0(float* diag, std::size_t bs);
[[gnu::noinline]] void fwd(const float* diag, float* col, std::size_t bs);
[[gnu::noinline]] void bdiv(const float* diag, float* row, std::size_t bs);
[[gnu::noinline]] void bmod(const float* row, const float* col, float* inner, std::size_t bs);
void factor_serial(matrix& m);
// Element-wise comparison with the serial factorisation; returns "" or what differs (no values).
std::string compare(const matrix& got, const matrix& ref);
// Relative residual check of the factors against the original matrix; returns the worst ratio
// |A x - L U x| / (|L| |U| |x|) over the rows.
double residual(const matrix& original, const matrix& factors);

inline void ensure_block(matrix& m, std::size_t i, std::size_t j) {
  if (!m.blk[i * m.nb + j]) m.blk[i * m.nb + j] = new_block(m.bs, true);
}

// Step kk's task on block (ii, jj) of the trailing matrix: the block is allocated if it is fill-in.
inline void update(matrix& m, std::size_t kk, std::size_t ii, std::size_t jj) {
  ensure_block(m, ii, jj);
  bmod(m.at(ii, kk), m.at(kk, jj), m.at(ii, jj), m.bs);
}

// Step kk's tasks on row ii of the trailing matrix (block (ii, kk) present), into g: one update per
// block (kk, jj) present.
template <class G>
void run_updates(G& g, matrix& m, std::size_t kk, std::size_t ii) {
  for (std::size_t jj = kk + 1; jj < m.nb; ++jj)
    if (m.at(kk, jj)) g.run([&m, kk, ii, jj] { update(m, kk, ii, jj); });
}

template <class RT>
void factor_single(RT& rt, matrix& m) {
  const std::size_t nb = m.nb, bs = m.bs;
  for (std::size_t kk = 0; kk < nb; ++kk) {
    float* diag = m.at(kk, kk);
    lu0(diag, bs);
    {
      typename RT::group g(rt);
      for (std::size_t jj = kk + 1; jj < nb; ++jj)
        if (float* c = m.at(kk, jj)) g.run([diag, c, bs] { fwd(diag, c, bs); });
      for (std::size_t ii = kk + 1; ii < nb; ++ii)
        if (float* r = m.at(ii, kk)) g.run([diag, r, bs] { bdiv(diag, r, bs); });
      g.wait();
    }
    {
      typename RT::group g(rt);
      for (std::size_t ii = kk + 1; ii < nb; ++ii)
        if (m.at(ii, kk)) run_updates(g, m, kk, ii);
      g.wait();
    }
  }
}

template <class RT>
void factor_for(RT& rt, matrix& m) {
  const std::size_t nb = m.nb, bs = m.bs;
#ifdef _OPENMP
  if constexpr (RT::openmp) {
#pragma omp parallel num_threads(rt.threads())
    for (std::size_t kk = 0; kk < nb; ++kk) {
#pragma omp single
      lu0(m.at(kk, kk), bs);
      float* diag = m.at(kk, kk);
      {
        typename RT::group g(rt);
#pragma omp for nowait
        for (std::size_t jj = kk + 1; jj < nb; ++jj)
          if (float* c = m.at(kk, jj)) g.run([diag, c, bs] { fwd(diag, c, bs); });
#pragma omp for nowait
        for (std::size_t ii = kk + 1; ii < nb; ++ii)
          if (float* r = m.at(ii, kk)) g.run([diag, r, bs] { bdiv(diag, r, bs); });
        g.wait();
      }
#pragma omp barrier
      {
        typename RT::group g(rt);
#pragma omp for nowait
        for (std::size_t ii = kk + 1; ii < nb; ++ii)
          if (m.at(ii, kk)) run_updates(g, m, kk, ii);
        g.wait();
      }
#pragma omp barrier
    }
    return;
  }
#endif
  rt.root([&] {
    for (std::size_t kk = 0; kk < nb; ++kk) {
      float* diag = m.at(kk, kk);
      lu0(diag, bs);
      // row kk (fwd) and column kk (bdiv) as one parallel loop of 2 (nb - kk - 1) iterations
      const std::size_t w = nb - kk - 1;
      kern::par_range(rt, 0, 2 * w, [&](std::size_t t) {
        if (t < w) {
          if (float* c = m.at(kk, kk + 1 + t)) fwd(diag, c, bs);
        } else if (float* r = m.at(kk + 1 + (t - w), kk)) {
          bdiv(diag, r, bs);
        }
      });
      kern::par_range(rt, kk + 1, nb, [&](std::size_t ii) {
        if (!m.at(ii, kk)) return;
        typename RT::group g(rt);
        run_updates(g, m, kk, ii);
        g.wait();
      });
    }
  });
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("sparselu", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);
    long long nb = 20, bs = 40;
    std::string size = "ci", gen = "single";
    bool inject = false;
    cli.add_int("blocks", &nb, 1, 4096, "blocks per matrix dimension; overrides --size");
    cli.add_int("block-size", &bs, 1, 4096, "rows/columns per block; overrides --size");
    cli.add_size("size", &size,
                 "problem class (blocks x block size): ci (20x40), test (10x25), small (25x50), medium (50x100, "
                 "BOTS default)",
                 {"ci", "test", "small", "medium"}, {{"blocks", {20, 10, 25, 50}}, {"block-size", {40, 25, 50, 100}}});
    cli.add_string("generator", &gen, "task generator: single (one thread creates the tasks) or for (parallel loop)",
                   {"single", "for"});
    cli.add_inject_error(&inject);
    cli.parse();
    if (nb * bs > (1LL << 16))
      throw plait_bench::usage_error("blocks x block-size = " + std::to_string(nb * bs) +
                                     " is too large; accepted up to 65536");
    const std::size_t NB = static_cast<std::size_t>(nb), BS = static_cast<std::size_t>(bs);
    const matrix original = generate(NB, BS);
    matrix ref = generate(NB, BS);
    factor_serial(ref);

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      matrix m = generate(NB, BS);
      rt.reset_stats();
      double t0 = plait_bench::now();
      if constexpr (!RT::parallel) {
        factor_serial(m);
      } else if (gen == "for") {
        factor_for(rt, m);
      } else {
        rt.root([&] { factor_single(rt, m); });
      }
      rec.time_s = plait_bench::now() - t0;
      if (inject) m.at(NB - 1, NB - 1)[BS * BS - 1] += 1.0f;
      const std::string diff = compare(m, ref);
      rec.check(diff.empty(), diff.empty() ? "factors equal the serial factorisation (relative error <= 1e-6)"
                                           : "factors differ from the serial factorisation: " + diff);
      const double res = residual(original, m);
      rec.check(res <= 1e-4, "factors equal the serial factorisation (relative error <= 1e-6) and |Ax - LUx| <= "
                             "1e-4 |L||U||x|");
      rec.stat("residual_ratio", res);
      std::size_t blocks = 0;
      for (auto& b : m.blk) blocks += b ? 1 : 0;
      rec.stat("blocks_after", static_cast<unsigned long long>(blocks));
      rt.stats(rec);
    });
  });
}

}  // namespace sparselu
