// Runtime adapters shared by the BOTS-style kernels (nqueens, fft, sort, sparselu, strassen,
// health, floorplan, alignment) and the steal-cost microbenchmark.
//
// Each kernel writes its parallel algorithm once, as a template over one of these adapters:
//   rt_serial (serial.hpp)  every "task" is a plain call (the serial elision)
//   rt_plait  (plait.hpp)   plait::pool / plait::task_group / plait::join
//   rt_tbb    (tbb.hpp)     tbb::task_arena / tbb::task_group / tbb::parallel_invoke
//   rt_omp    (omp.hpp)     #pragma omp task / taskwait inside parallel+single
//
// An adapter RT provides
//   RT rt(cli, with_variants);        registers runtime options before cli.parse() (omp: --variant, only
//                                     when with_variants)
//   rt.start(threads);                creates the pool / arena once per process
//   rt.root(f)                        runs f() as the root task on `threads` workers, returns f()'s value
//   rt.manual()                       true unless an OpenMP if/final variant was chosen: the kernel then
//                                     switches to its serial code at the cut-off (BOTS "manual" cut-off)
//   typename RT::group g(rt, undeferred, final_);
//     g.run(f); ...; g.wait();        any number of child tasks and a taskwait. `undeferred` and `final_`
//                                     only matter for the OpenMP if/final variants (if(!undeferred),
//                                     final(final_)); other runtimes ignore them.
//   rt.invoke(f, g)                   f and g in parallel (fork two, join both)
//   rt.reset_stats(); rt.stats(rec);  task / steal counters of one repetition into the JSON record
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/driver.hpp"

namespace kern {

enum class omp_variant { manual, if_clause, final_clause };

// Parses a cut-off option given as "coarse", "fine" or an integer in lo..hi.
// Throws plait_bench::usage_error naming the option on anything else.
inline long long parse_cutoff(const std::string& opt, const std::string& v, long long coarse, long long fine,
                              long long lo, long long hi) {
  if (v == "coarse") return coarse;
  if (v == "fine") return fine;
  std::size_t used = 0;
  long long x = 0;
  bool ok = !v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+');
  if (ok) {
    try {
      x = std::stoll(v, &used, 10);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || used != v.size())
    throw plait_bench::usage_error("option --" + opt + ": '" + v + "' is not coarse, fine or an integer " +
                                   std::to_string(lo) + ".." + std::to_string(hi));
  if (x < lo || x > hi)
    throw plait_bench::usage_error("option --" + opt + ": " + v + " is out of range; accepted coarse, fine or " +
                                   std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

// Reads a whole file; throws usage_error (exit 2) when it cannot be opened or is a directory
// (which fopen opens and fread then fails on).
inline std::string read_file_or_throw(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw plait_bench::usage_error("input file '" + path + "' is a directory; give a file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw plait_bench::usage_error("cannot open input file '" + path + "': " + std::strerror(errno));
  std::string s;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw plait_bench::usage_error("cannot read input file '" + path + "'");
  return s;
}

// Where the BOTS input files live by default: ../shared/data/bots next to the repository root
// (the root is found from this header's own path, so binaries work from any directory).
inline std::string default_bots_data_dir() {
  std::string f = __FILE__;
  const std::string tail = "/bench/common/rt/common.hpp";
  if (f.size() > tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0 && f[0] == '/')
    return f.substr(0, f.size() - tail.size()) + "/../shared/data/bots";
  return "../shared/data/bots";
}

// Resolves a BOTS input: `given` (the user's --input, may be empty) or `default_name` under the
// default data folder. A missing user file and a missing default data folder are both usage errors
// (exit 2); the latter says that the BOTS data is absent so the run is skipped.
inline std::string resolve_bots_input(const std::string& given, const std::string& kernel,
                                      const std::string& default_name) {
  auto exists = [](const std::string& p) {
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (f) std::fclose(f);
    return f != nullptr;
  };
  if (!given.empty()) {
    if (!exists(given)) throw plait_bench::usage_error("input file '" + given + "' not found or not readable");
    return given;
  }
  std::string p = default_bots_data_dir() + "/" + kernel + "/" + default_name;
  if (!exists(p))
    throw plait_bench::usage_error("skipped: BOTS data not found at '" + p +
                                   "' (../shared/data/bots is absent); give --input PATH to run " + kernel);
  return p;
}

}  // namespace kern
