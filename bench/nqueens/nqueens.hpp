// N-Queens (BOTS nqueens): count every placement of n non-attacking queens.
//
// Task structure as in BOTS: at each row, one task per column; the task copies the partial board,
// places the queen and, if it is safe, recurses. Cut-off = task depth (rows that still spawn tasks):
// past it the serial search runs in place (manual) or, for the OpenMP if/final variants, tasks
// are still created but undeferred / final.
#pragma once

#include <cstring>
#include <string>

#include "common/rt/common.hpp"

namespace nqueens {

constexpr int max_n = 20;

// Known solution counts for n = 1..20 (A000170).
constexpr long long expected[max_n + 1] = {0,      1,       0,        0,         2,          10,        4,
                                           40,     92,      352,      724,       2680,       14200,     73712,
                                           365596, 2279184, 14772512, 95815104,  666090624LL, 4968057848LL,
                                           39029188884LL};

// True when the queen in row j (= a[j]) attacks none of rows 0..j-1.
inline bool safe(int j, const char* a) {
  const int q = a[j];
  for (int i = 0; i < j; ++i) {
    const int p = a[i], d = j - i;
    if (p == q || p == q - d || p == q + d) return false;
  }
  return true;
}

// Serial search on one shared board: rows j..n-1 still empty.
inline long long count_serial(int n, int j, char* a) {
  if (j == n) return 1;
  long long sum = 0;
  for (int i = 0; i < n; ++i) {
    a[j] = static_cast<char>(i);
    if (safe(j, a)) sum += count_serial(n, j + 1, a);
  }
  return sum;
}

template <class RT>
long long count_par(RT& rt, int n, int j, const char* a, int depth, int cutoff) {
  if (j == n) return 1;
  if (depth >= cutoff && rt.manual()) {
    char b[max_n];
    std::memcpy(b, a, static_cast<std::size_t>(j));
    return count_serial(n, j, b);
  }
  long long sols[max_n] = {};
  {
    typename RT::group g(rt, depth >= cutoff, depth + 1 >= cutoff);
    for (int i = 0; i < n; ++i) {
      g.run([&rt, &sols, n, j, a, i, depth, cutoff] {
        char b[max_n];
        std::memcpy(b, a, static_cast<std::size_t>(j));
        b[j] = static_cast<char>(i);
        if (safe(j, b)) sols[i] = count_par(rt, n, j + 1, b, depth + 1, cutoff);
      });
    }
    g.wait();
  }
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += sols[i];
  return sum;
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("nqueens", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli);
    long long n = 11;
    std::string size = "ci", cutoff_s = "coarse";
    bool inject = false;
    cli.add_int("n", &n, 1, max_n, "board size (queens); overrides --size");
    cli.add_size("size", &size, "problem class: ci (n=11), test (n=8), small (n=12), medium (n=14)",
                 {"ci", "test", "small", "medium"}, {{"n", {11, 8, 12, 14}}});
    cli.add_string("cutoff", &cutoff_s,
                   "task depth cut-off: coarse (3), fine (n: every row spawns) or a depth 0..20");
    cli.add_inject_error(&inject);
    cli.parse();
    const int cutoff = static_cast<int>(kern::parse_cutoff("cutoff", cutoff_s, 3, n, 0, max_n));
    const int nn = static_cast<int>(n);

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      double t0 = plait_bench::now();
      long long count;
      if constexpr (RT::parallel) {
        count = rt.root([&] {
          char a[max_n] = {};
          return count_par(rt, nn, 0, a, 0, cutoff);
        });
      } else {
        char a[max_n] = {};
        count = count_serial(nn, 0, a);
      }
      rec.time_s = plait_bench::now() - t0;
      if (inject) count += 1;
      rec.check(count == expected[nn], "nqueens(" + std::to_string(nn) + ") = " + std::to_string(expected[nn]) +
                                           " solutions" + (count == expected[nn] ? "" : " (counted a different number)"));
      rec.stat("solutions", count);
      rec.stat("cutoff_value", static_cast<long long>(cutoff));
      rt.stats(rec);
    });
  });
}

}  // namespace nqueens
