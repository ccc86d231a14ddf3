// Mandelbrot loop-to-task benchmark (study 002, Giger 2021: the Mandelbrot kernel of its Figs 8-13).
//
// The image is W x H pixels over the complex rectangle [-2, 1] x [-1.5, 1.5]; a pixel's value is the
// number of iterations z <- z^2 + c (at most --maxiter) before |z| > 2. The loop runs over the
// W*H pixels in row-major order, one iteration per pixel, as in the study (its 1448 x 1448 image
// has 2,096,704 pixels: grain 1 makes 2,054,769 more tasks than grain 50, the number it quotes).
// The work is imbalanced: the rows near the middle (the set itself) cost up to --maxiter
// iterations per pixel, the top and bottom rows a few.
//
// Verification: the serial image is computed once per process, before the measured repetitions;
// every repetition's image must have the same FNV-1a checksum (over the per-pixel counts, in pixel
// order) and the same total iteration count, else exit 1.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/driver.hpp"
#include "mandel/loops.hpp"

namespace mandel {

struct geometry {
  std::int64_t width = 0, height = 0, maxiter = 0;
  std::int64_t pixels() const { return width * height; }
};

// Pixels [lo, hi) (row-major indices) into out[lo..hi). Not inlined, so that the reference and
// every runtime run the very same machine code (same floating-point contraction).
[[gnu::noinline]] inline void compute(std::int64_t lo, std::int64_t hi, std::uint32_t* out, const geometry& g) {
  const double dx = 3.0 / static_cast<double>(g.width), dy = 3.0 / static_cast<double>(g.height);
  for (std::int64_t p = lo; p < hi; ++p) {
    const std::int64_t y = p / g.width, x = p - y * g.width;
    const double cr = -2.0 + (static_cast<double>(x) + 0.5) * dx;
    const double ci = -1.5 + (static_cast<double>(y) + 0.5) * dy;
    double zr = 0, zi = 0;
    std::int64_t k = 0;
    while (k < g.maxiter) {
      const double zr2 = zr * zr, zi2 = zi * zi;
      if (zr2 + zi2 > 4.0) break;
      zi = 2.0 * zr * zi + ci;
      zr = zr2 - zi2 + cr;
      ++k;
    }
    out[p] = static_cast<std::uint32_t>(k);
  }
}

struct digest {
  std::uint64_t fnv = 1469598103934665603ULL;
  std::uint64_t total = 0;
  bool operator==(const digest&) const = default;
};

inline digest digest_of(const std::vector<std::uint32_t>& img) {
  digest d;
  for (std::uint32_t v : img) {
    d.total += v;
    for (int b = 0; b < 4; ++b) {
      d.fnv ^= (v >> (8 * b)) & 0xffu;
      d.fnv *= 1099511628211ULL;
    }
  }
  return d;
}

inline std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class Exec>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("mandel", argc, argv, [](plait_bench::Cli& cli) {
    Exec ex(cli);
    std::string size = "test";
    long long width = 0, height = 0, maxiter = 0;
    bool inject = false;
    cli.add_string("size", &size, "preset: test (64x64, 256 iterations), small (512x512, 500), full (1448x1448, 1000; study 002)",
                   {"test", "small", "full"});
    cli.add_int("width", &width, 0, 1 << 16, "image width in pixels (0: from --size)");
    cli.add_int("height", &height, 0, 1 << 16, "image height in pixels (0: from --size)");
    cli.add_int("maxiter", &maxiter, 0, 1 << 20, "iteration limit per pixel (0: from --size)");
    cli.add_inject_error(&inject, "one pixel");
    cli.parse();
    geometry g;
    if (size == "test") g = {64, 64, 256};
    else if (size == "small") g = {512, 512, 500};
    else g = {1448, 1448, 1000};
    if (width > 0) g.width = width;
    if (height > 0) g.height = height;
    if (maxiter > 0) g.maxiter = maxiter;
    if (cli.given("width") && width == 0) throw plait_bench::usage_error("option --width: must be 1..65536");
    if (cli.given("height") && height == 0) throw plait_bench::usage_error("option --height: must be 1..65536");
    if (cli.given("maxiter") && maxiter == 0) throw plait_bench::usage_error("option --maxiter: must be 1..1048576");
    ex.start(cli);
    const std::int64_t n = g.pixels();

    std::vector<std::uint32_t> img(static_cast<std::size_t>(n));
    compute(0, n, img.data(), g);
    const digest want = digest_of(img);

    loops::tracker tr;
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      std::fill(img.begin(), img.end(), 0xffffffffu);
      tr.reset(n, ex.slots());
      ex.reset_stats();
      std::uint32_t* out = img.data();
      const double t0 = plait_bench::now();
      ex.run(n, tr, [out, &g](std::int64_t lo, std::int64_t hi) { compute(lo, hi, out, g); });
      rec.time_s = plait_bench::now() - t0;
      if (inject && n > 0) img[static_cast<std::size_t>(n / 2)] ^= 1u;
      const digest got = digest_of(img);
      const std::string dims = std::to_string(g.width) + "x" + std::to_string(g.height);
      rec.check(got == want, got == want ? "image " + dims + " checksum " + hex(got.fnv) + ", " +
                                               std::to_string(got.total) + " iterations = serial"
                                         : "image " + dims + " differs from the serial one (checksum " + hex(got.fnv) +
                                               " vs " + hex(want.fnv) + ", iterations " + std::to_string(got.total) +
                                               " vs " + std::to_string(want.total) + ")");
      rec.stat("pixels", static_cast<long long>(n));
      rec.stat("iterations", static_cast<unsigned long long>(got.total));
      rec.stat("variant", loops::name(ex.get().v));
      tr.stats(rec);
      ex.stats(rec);
    });
  });
}

}  // namespace mandel
