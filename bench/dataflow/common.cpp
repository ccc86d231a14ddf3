// Options, the wavefront block body and the checks shared by every dataflow runtime.
#include <string>
#include <vector>

#include "dataflow/dataflow.hpp"

namespace dataflow_bench {

long long Options::task_count() const {
  if (pattern == "chain" || pattern == "overhead") return tasks;
  if (pattern == "fanout") return rounds * (fanout + 1);
  return blocks * blocks;
}

void parse(plait_bench::Cli& cli, Options& o) {
  cli.add_string("pattern", &o.pattern,
                 "chain (inout on one object), fanout (a writer, then --fanout readers, per round), wavefront "
                 "(2D blocks: in up, in left, inout self), overhead (tiny independent tasks with --deps accesses)",
                 {"chain", "fanout", "wavefront", "overhead"});
  cli.add_size("size", &o.size,
               "defaults for the sizes below: ci (chain/overhead 20000 tasks, fanout 200x32, wavefront 32x16), "
               "test (2000, 20x8, 8x8), small (200000, 2000x64, 64x32), medium (1000000, 10000x64, 128x32)",
               {"ci", "test", "small", "medium"},
               {{"tasks", {20000, 2000, 200000, 1000000}},
                {"rounds", {200, 20, 2000, 10000}},
                {"fanout", {32, 8, 64, 64}},
                {"blocks", {32, 8, 64, 128}},
                {"block-size", {16, 8, 32, 32}}});
  cli.add_int("tasks", &o.tasks, 1, 100000000, "chain/overhead: number of tasks; overrides --size");
  cli.add_int("rounds", &o.rounds, 1, 10000000, "fanout: writer/readers rounds; overrides --size");
  cli.add_int("fanout", &o.fanout, 1, 100000, "fanout: readers per round; overrides --size");
  cli.add_int("blocks", &o.blocks, 1, 4096, "wavefront: blocks per side; overrides --size");
  cli.add_int("block-size", &o.block_size, 1, 4096, "wavefront: cells per block side; overrides --size");
  cli.add_int("deps", &o.deps, 1, 4, "overhead: dependences per task, 1, 2 or 4");
  cli.add_inject_error(&o.inject);
  cli.parse();
  if (o.deps != 1 && o.deps != 2 && o.deps != 4)
    throw plait_bench::usage_error("option --deps: " + std::to_string(o.deps) + " is not accepted; accepted 1, 2 or 4");
  if (o.blocks * o.block_size > 16384)
    throw plait_bench::usage_error("blocks x block-size = " + std::to_string(o.blocks * o.block_size) +
                                   " is too large; accepted up to 16384 cells per side");
  if (o.pattern == "overhead" && o.tasks * o.deps > 400000000)
    throw plait_bench::usage_error("tasks x deps = " + std::to_string(o.tasks * o.deps) +
                                   " is too large; accepted up to 400000000");
}

void Wavefront::block(long long bi, long long bj) {
  const auto N = static_cast<std::size_t>(n);
  for (long long r = bi * bs; r < (bi + 1) * bs; ++r) {
    for (long long c = bj * bs; c < (bj + 1) * bs; ++c) {
      const auto R = static_cast<std::size_t>(r), C = static_cast<std::size_t>(c);
      std::uint32_t v = 1;
      if (r > 0 && c > 0) {
        std::uint64_t s = static_cast<std::uint64_t>(g[(R - 1) * N + C]) + g[R * N + C - 1];
        v = static_cast<std::uint32_t>(s % wave_mod);
      }
      g[R * N + C] = v;
    }
  }
}

void task_stats(plait_bench::Record& rec, const Options& o) {
  const long long t = o.task_count();
  rec.stat("tasks", static_cast<unsigned long long>(t));
  if (t > 0 && rec.time_s >= 0) rec.stat("ns_per_task", rec.time_s * 1e9 / static_cast<double>(t));
}

void check(plait_bench::Record& rec, const Options& o, Chain& c) {
  if (o.inject) c.x ^= 1;
  std::uint64_t want = 1;
  for (long long i = 0; i < o.tasks; ++i) want = want * chain_mul + static_cast<std::uint64_t>(i + 1);
  rec.check(c.x == want, c.x == want ? "chain of " + std::to_string(o.tasks) + " inout tasks: x equals the serial recurrence"
                                     : "chain: x differs from the serial recurrence");
  task_stats(rec, o);
}

void check(plait_bench::Record& rec, const Options& o, Fanout& f) {
  if (o.inject) f.acc.back() += 1;
  std::uint64_t x = 0, sum = 0;
  for (long long r = 0; r < o.rounds; ++r) {
    x = 2 * x + static_cast<std::uint64_t>(r + 1);
    sum += x;
  }
  bool ok = f.x == x;
  for (long long k = 0; k < o.fanout && ok; ++k)
    ok = f.acc[static_cast<std::size_t>(k)] == static_cast<std::uint64_t>(k + 1) * sum;
  rec.check(ok, ok ? "fanout: every reader saw every round's value (" + std::to_string(o.rounds) + " rounds x " +
                         std::to_string(o.fanout) + " readers)"
                   : "fanout: a reader's sum or the final value differs from the serial result");
  task_stats(rec, o);
}

namespace {
std::uint64_t pow_mod(std::uint64_t b, std::uint64_t e) {
  std::uint64_t r = 1;
  b %= wave_mod;
  while (e) {
    if (e & 1) r = r * b % wave_mod;
    b = b * b % wave_mod;
    e >>= 1;
  }
  return r;
}
}  // namespace

void check(plait_bench::Record& rec, const Options& o, Wavefront& w) {
  if (o.inject) w.g.back() ^= 1;
  // C(r + c, r) mod p from factorials: independent of the recurrence the tasks computed.
  const auto n = static_cast<std::size_t>(w.n);
  std::vector<std::uint64_t> fact(2 * n + 1), inv(2 * n + 1);
  fact[0] = 1;
  for (std::size_t i = 1; i <= 2 * n; ++i) fact[i] = fact[i - 1] * i % wave_mod;
  inv[2 * n] = pow_mod(fact[2 * n], wave_mod - 2);
  for (std::size_t i = 2 * n; i > 0; --i) inv[i - 1] = inv[i] * i % wave_mod;
  bool ok = true;
  std::size_t bad_r = 0, bad_c = 0;
  for (std::size_t r = 0; r < n && ok; ++r)
    for (std::size_t c = 0; c < n; ++c) {
      std::uint64_t want = fact[r + c] * inv[r] % wave_mod * inv[c] % wave_mod;
      if (w.g[r * n + c] != want) {
        ok = false;
        bad_r = r;
        bad_c = c;
        break;
      }
    }
  rec.check(ok, ok ? "wavefront " + std::to_string(w.nb) + "x" + std::to_string(w.nb) + " blocks of " +
                         std::to_string(w.bs) + "x" + std::to_string(w.bs) + ": every cell equals C(r+c, r) mod p"
                   : "wavefront: cell (" + std::to_string(bad_r) + ", " + std::to_string(bad_c) +
                         ") differs from C(r+c, r) mod p");
  task_stats(rec, o);
}

void check(plait_bench::Record& rec, const Options& o, Overhead& v) {
  if (o.inject) v.obj[0] += 1;
  bool ok = true;
  for (long long i = 0; i < o.tasks && ok; ++i) ok = *v.at(i) == 1;
  rec.check(ok, ok ? "overhead: each of " + std::to_string(o.tasks) + " tasks ran once"
                   : "overhead: a task ran zero times or more than once");
  task_stats(rec, o);
  rec.stat("deps", o.deps);
}

}  // namespace dataflow_bench
