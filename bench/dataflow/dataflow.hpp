// Data-flow tasks (task dependences): Plait's dataflow_group against OpenMP `depend` clauses.
//
// Four patterns (--pattern), every one verified after each repetition:
//   chain      --tasks N tasks, each inout on one object: x = x * A + (i + 1) (uint64, wraps);
//              checked against the same recurrence computed by a plain loop.
//   fanout     --rounds R rounds of one writer (inout x: x = 2x + r + 1) followed by --fanout K
//              readers (in x: acc[k] += (k + 1) x); checked: acc[k] = (k + 1) * sum of the x's.
//   wavefront  --blocks nb x nb blocks of --block-size bs x bs cells; block (i, j) depends
//              in (i-1, j), in (i, j-1), inout (i, j) and fills its cells with
//              g[r][c] = g[r-1][c] + g[r][c-1] mod p (1 on row 0 and column 0), which is
//              C(r + c, r) mod p: checked cell by cell against factorials mod p.
//   overhead   --tasks N tiny tasks, each with --deps d (1, 2 or 4) inout accesses on addresses of
//              its own (no task waits for another): the cost of creating and running a task
//              with d dependences. ns_per_task = time / N; compare with the serial loop
//              (dataflow-serial runs the same bodies as plain calls).
// Sizes: --size ci|test|small|medium picks the defaults; --tasks, --rounds, --fanout, --blocks,
// --block-size override them.
//
// The patterns' task code is written per runtime, in <runtime>.cpp (plait::dataflow_group, OpenMP
// `depend` clauses, plain calls in the serial elision): a struct with four static functions,
// chain(Chain&, tasks), fanout(Fanout&, rounds, readers), wavefront(Wavefront&) and
// overhead(Overhead&, tasks), each creating its tasks and waiting for them. main_for<adapter,
// patterns> runs them: the pool, the root task, the timing (inside the root task), the repetitions
// and the runtime's counters go through the adapter (bench/common/rt/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/driver.hpp"
#include "common/rt/common.hpp"

namespace dataflow_bench {

inline constexpr std::uint64_t chain_mul = 6364136223846793005ULL;
inline constexpr std::uint32_t wave_mod = 1000000007u;

struct Options {
  std::string pattern = "chain";
  std::string size = "ci";
  long long tasks = 0, rounds = 0, fanout = 0, blocks = 0, block_size = 0, deps = 2;
  bool inject = false;
  // Tasks the chosen pattern creates per repetition.
  long long task_count() const;
};

// Registers the options, parses the command line and fills in the size-derived values.
// Throws plait_bench::usage_error (exit 2) on bad input.
void parse(plait_bench::Cli& cli, Options& o);

// ---- per-pattern state and task bodies (shared by every runtime) ----------------------------

struct Chain {
  std::uint64_t x = 1;
  void step(long long i) { x = x * chain_mul + static_cast<std::uint64_t>(i + 1); }
};

struct Fanout {
  std::uint64_t x = 0;
  std::vector<std::uint64_t> acc;
  explicit Fanout(long long k) : acc(static_cast<std::size_t>(k), 0) {}
  void write(long long r) { x = 2 * x + static_cast<std::uint64_t>(r + 1); }
  void read(long long k) { acc[static_cast<std::size_t>(k)] += static_cast<std::uint64_t>(k + 1) * x; }
};

struct Wavefront {
  long long nb, bs, n;  // n = nb * bs cells per side
  std::vector<std::uint32_t> g;
  std::vector<char> token;  // one dependence object per block
  Wavefront(long long nb_, long long bs_)
      : nb(nb_), bs(bs_), n(nb_ * bs_), g(static_cast<std::size_t>(n * n), 0), token(static_cast<std::size_t>(nb_ * nb_), 0) {}
  char& tok(long long i, long long j) { return token[static_cast<std::size_t>(i * nb + j)]; }
  void block(long long bi, long long bj);
};

struct Overhead {
  long long d;
  std::vector<long> obj;  // task i owns obj[i*d .. i*d + d)
  Overhead(long long n, long long d_) : d(d_), obj(static_cast<std::size_t>(n * d_), 0) {}
  long* at(long long i) { return obj.data() + i * d; }
  static void body(long* p) { ++*p; }
};

// Checks (rec.check: a failure is exit 1). `inject` corrupts the result first.
void check(plait_bench::Record& rec, const Options& o, Chain& c);
void check(plait_bench::Record& rec, const Options& o, Fanout& f);
void check(plait_bench::Record& rec, const Options& o, Wavefront& w);
void check(plait_bench::Record& rec, const Options& o, Overhead& v);

// tasks, ns_per_task (time / tasks).
void task_stats(plait_bench::Record& rec, const Options& o);

template <class RT, class Patterns>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("dataflow", argc, argv, [](plait_bench::Cli& cli) {
    RT rt(cli, false);  // no OpenMP cut-off variants
    Options o;
    parse(cli, o);
    rt.start(cli.threads);
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      auto timed = [&](auto&& f) { rec.time_s = kern::timed_root(rt, f); };
      if (o.pattern == "chain") {
        Chain c;
        timed([&] { Patterns::chain(c, o.tasks); });
        check(rec, o, c);
      } else if (o.pattern == "fanout") {
        Fanout f(o.fanout);
        timed([&] { Patterns::fanout(f, o.rounds, o.fanout); });
        check(rec, o, f);
      } else if (o.pattern == "wavefront") {
        Wavefront w(o.blocks, o.block_size);
        timed([&] { Patterns::wavefront(w); });
        check(rec, o, w);
      } else {
        Overhead v(o.tasks, o.deps);
        timed([&] { Patterns::overhead(v, o.tasks); });
        check(rec, o, v);
      }
      kern::runtime_stats(rt, rec);
    });
  });
}

}  // namespace dataflow_bench
