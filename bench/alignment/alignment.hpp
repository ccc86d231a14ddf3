// Alignment (BOTS alignment, after the ClustalW pairwise stage): align every pair of protein
// sequences of a FASTA-like file and record, for each pair (i < j), an integer similarity score.
//
// Per pair (i, j), all integer arithmetic as in the reference:
//   1. forward pass: Smith-Waterman local alignment with affine gaps (Gotoh recurrences, linear
//      space) -> best score and the cell (se1, se2) where it ends;
//   2. reverse pass: the same recurrences backwards from (se1, se2) -> where it starts (sb1, sb2);
//   3. Myers-Miller divide and conquer (linear-space global alignment of the two segments) ->
//      an edit script (matches, insertions, deletions);
//   4. score = 100 * identical aligned residues / min(length_i, length_j), truncated to int.
// Scoring: the Gonnet-250 matrix (x10), gap extension 1 (10 x 0.1), gap opening
// 2 * mean-mismatch * (10 + ln min(n, m)) -- the reference's pairwise penalties.
//
// Tasks: one per pair. Two generators, as in BOTS:
//   single  one thread walks all pairs and creates the tasks (OpenMP: parallel + single);
//   for     the outer loop over i is itself parallel (OpenMP: `omp for schedule(dynamic)`, each
//           iteration creating the tasks of its row; plait/tbb: a parallel divide-and-conquer
//           over the rows, each leaf creating its row's tasks).
// Verification: every score (and every pair's local-alignment score) equals the one computed by
// the plain serial loop before the timed runs, exactly; and every pair's edit script spans its
// two segments exactly (an internal consistency check that does not depend on the reference).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/rt/common.hpp"
#include "common/rt/par_range.hpp"

namespace alignment {

// Residue codes as the reference numbers them (index = code); '-' in the input is a gap.
inline constexpr const char* residue_codes = "ABCDEFGHIKLMNPQRSTUVWXYZ-";
inline constexpr int num_res = 32;              // size of the score matrix
inline constexpr int gap1 = num_res - 2, gap2 = num_res - 1;

struct sequences {
  std::vector<std::string> names;
  std::vector<std::vector<signed char>> seq;  // seq[k][1..len] = codes; [0] unused
  std::vector<int> residues;                  // non-gap residues per sequence
  std::size_t size() const { return seq.size(); }
};

// Parses "Number of sequences is N" followed by N records '>' name line + residue lines.
// Lower-case letters and characters outside residue_codes are skipped, as the reference does.
// Throws plait_bench::usage_error (one line) on anything malformed.
sequences parse(const std::string& text, const std::string& path);

struct scoring {
  int m[num_res][num_res] = {};
  int avg_mismatch = 0;  // the reference's mat_avscore
};
// The Gonnet-250 matrix scaled by 10, indexed by residue code, and its mean mismatch.
scoring make_scoring();

struct pair_result {
  int score = 0;     // the benchmark's output
  int local = 0;     // forward-pass best local score
  bool path_ok = true;
  bool operator==(const pair_result& o) const { return score == o.score && local == o.local; }
};

// Aligns sequences i and j (i != j).
pair_result align_pair(const sequences& s, const scoring& sc, std::size_t i, std::size_t j);

// Plain serial loop over all pairs (the reference result). out is n x n, row-major, i < j used.
void align_all_serial(const sequences& s, const scoring& sc, std::vector<pair_result>& out);

// One thread creates one task per pair.
template <class RT>
void align_single(RT& rt, const sequences& s, const scoring& sc, std::vector<pair_result>& out) {
  const std::size_t n = s.size();
  pair_result* o = out.data();
  rt.root([&] {
    typename RT::group g(rt);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) g.run([&s, &sc, o, n, i, j] { o[i * n + j] = align_pair(s, sc, i, j); });
    g.wait();
  });
}

// The rows are generated in parallel; each row creates one task per pair.
template <class RT>
void align_for(RT& rt, const sequences& s, const scoring& sc, std::vector<pair_result>& out) {
  const std::size_t n = s.size();
  pair_result* o = out.data();
#ifdef _OPENMP
  if constexpr (RT::openmp) {
    const int rows = static_cast<int>(n);
#pragma omp parallel num_threads(rt.threads())
    {
#pragma omp for schedule(dynamic)
      for (int r = 0; r < rows; ++r) {
        const std::size_t i = static_cast<std::size_t>(r);
        typename RT::group g(rt);
        for (std::size_t j = i + 1; j < n; ++j)
          g.run([&s, &sc, o, n, i, j] { o[i * n + j] = align_pair(s, sc, i, j); });
        // no taskwait: the loop's closing barrier completes every task, as in BOTS
      }
    }
    return;
  }
#endif
  rt.root([&] {
    kern::par_range(rt, 0, n, [&](std::size_t i) {
      typename RT::group g(rt);
      for (std::size_t j = i + 1; j < n; ++j) g.run([&s, &sc, o, n, i, j] { o[i * n + j] = align_pair(s, sc, i, j); });
      g.wait();
    });
  });
}

// Empty string when `got` equals `ref` on every pair and every edit script was consistent;
// otherwise one line naming the first difference.
std::string compare(const std::vector<pair_result>& got, const std::vector<pair_result>& ref, std::size_t n);
std::uint64_t checksum(const std::vector<pair_result>& r, std::size_t n);

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("alignment", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);
    std::string size = "ci", path, gen = "single";
    long long nseq = -1;
    bool inject = false, print = false;
    cli.add_string("size", &size,
                   "input class: ci (prot.20.aa, first 6 sequences), test (prot.20.aa, first 10), small "
                   "(prot.20.aa), medium (prot.100.aa), all from ../shared/data/bots/alignment",
                   {"ci", "test", "small", "medium"});
    cli.add_string("input", &path, "a BOTS alignment input file (overrides the file of --size; all sequences)");
    cli.add_int("nseq", &nseq, 2, 100000, "align only the first N sequences of the file (default: per --size)");
    cli.add_string("generator", &gen,
                   "task generator: single (one thread creates the tasks) or for (parallel loop over rows)",
                   {"single", "for"}, {"--variant"});
    cli.add_inject_error(&inject);
    cli.add_flag("print-scores", &print, "print 'i j score local' for every pair (serial reference) on stderr");
    cli.parse();
    const std::string file = kern::resolve_bots_input(path, "alignment", size == "medium" ? "prot.100.aa" : "prot.20.aa");
    sequences s = parse(kern::read_file_or_throw(file), file);
    long long limit = cli.given("nseq") ? nseq
                      : !path.empty()   ? -1
                      : size == "ci"    ? 6
                      : size == "test"  ? 10
                                        : -1;
    if (limit > 0 && static_cast<std::size_t>(limit) < s.size()) {
      const std::size_t k = static_cast<std::size_t>(limit);
      s.names.resize(k);
      s.seq.resize(k);
      s.residues.resize(k);
    }
    if (s.size() < 2) throw plait_bench::usage_error("alignment input '" + file + "' has fewer than 2 sequences");
    const std::size_t n = s.size();
    const scoring sc = make_scoring();
    std::vector<pair_result> ref(n * n);
    align_all_serial(s, sc, ref);
    if (print)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          std::fprintf(stderr, "%zu %zu %d %d\n", i + 1, j + 1, ref[i * n + j].score, ref[i * n + j].local);

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      std::vector<pair_result> out(n * n);
      rt.reset_stats();
      double t0 = plait_bench::now();
      if (gen == "for")
        align_for(rt, s, sc, out);
      else
        align_single(rt, s, sc, out);
      rec.time_s = plait_bench::now() - t0;
      if (inject) out[n - 1].score += 1;  // pair (1, n)
      const std::string diff = compare(out, ref, n);
      rec.check(diff.empty(), diff.empty() ? "all " + std::to_string(n * (n - 1) / 2) +
                                                 " pair scores equal the serial ones exactly; edit scripts consistent"
                                           : diff);
      rec.stat("sequences", static_cast<long long>(n));
      rec.stat("pairs", static_cast<long long>(n * (n - 1) / 2));
      rec.stat("checksum", static_cast<unsigned long long>(checksum(out, n)));
      rec.stat("file", file);
      rt.stats(rec);
    });
  });
}

}  // namespace alignment
