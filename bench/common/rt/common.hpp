// Runtime adapters shared by the BOTS-style kernels (nqueens, fft, sort, sparselu, strassen,
// health, floorplan, alignment), fib, uts, dataflow, amr and the steal-cost microbenchmark. (The
// loop study's mandel and flatloop have executors of their own, bench/mandel/loops_*.hpp.)
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
//   rt.reset_stats(); rt.stats(rec);  task / steal counters of one repetition into the JSON record: the
//                                     runtime's own counters (counters(), below), `tasks` and `moved_tasks`
//
// Kernels whose tasks are the runtime's own constructs rather than group/invoke (fib, uts, dataflow,
// amr: their task code is written per runtime, in <runtime>.cpp) still take the pool, the root task,
// the timing and the counters from the adapter, through these:
//   rt.set_worker_stack(bytes)        before start(): the worker threads' stack size, where the runtime
//                                     takes it from the program (tbb: global_control::thread_stack_size).
//                                     Plait sizes its worker stacks itself (pool_options::stack_size:
//                                     PLAIT_STACK_SIZE or 1 GiB reserved), OpenMP reads OMP_STACKSIZE when
//                                     it starts (plait_bench::ensure_stack sets it), serial has no workers
//   rt.counters(rec)                  the counters the runtime keeps by itself, whatever created the tasks:
//                                     plait every worker counter and idle_ms (put_counters), tbb
//                                     `pinned_threads` when pinning, serial and omp none
//   rt.moved_tasks()                  tasks of this repetition that ran on another thread than their
//                                     creator. Plait counts every task (its `steals`); tbb and omp count
//                                     the tasks made through group/invoke and those a kernel reports with
//                                     rt.note_moved(creator) (creator = rt.me() where the task was made;
//                                     tbb and omp only); serial 0
//   RT::counts_moved                  true where moved_tasks() covers every task without the kernel's help
//   timed_root(rt, f), runtime_stats(rt, rec)   below
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/driver.hpp"

namespace kern {

enum class omp_variant { manual, if_clause, final_clause };

// The task counts of an adapter whose runtime keeps none of its own (omp, tbb): per thread index,
// owner-only (each thread writes its own line), plus one line for a thread outside the team.
class thread_tasks {
 public:
  void start(std::size_t threads) { cnt_.assign(threads + 1, counter{}); }
  void reset() { cnt_.assign(cnt_.size(), counter{}); }
  // The line of the thread whose index in its team is i (the spare line when i is out of range).
  std::size_t line(long i) const {
    if (i < 0 || static_cast<std::size_t>(i) >= cnt_.size()) return cnt_.size() - 1;
    return static_cast<std::size_t>(i);
  }
  void made(std::size_t creator, unsigned long long n = 1) { cnt_[creator].tasks += n; }
  // A task made on line `creator` runs on line `who`.
  void ran(std::size_t who, std::size_t creator) {
    if (who != creator) ++cnt_[who].moved;
  }
  unsigned long long tasks() const { return sum(&counter::tasks); }
  unsigned long long moved() const { return sum(&counter::moved); }
  void stats(plait_bench::Record& rec) const {
    rec.stat("tasks", tasks());
    rec.stat("moved_tasks", moved());
  }

 private:
  struct alignas(64) counter {
    unsigned long long tasks = 0, moved = 0;
  };
  unsigned long long sum(unsigned long long counter::*field) const {
    unsigned long long n = 0;
    for (const counter& c : cnt_) n += c.*field;
    return n;
  }
  std::vector<counter> cnt_;
};

// What an adapter says of itself: whether it runs tasks in parallel, whether it is OpenMP, and
// whether moved_tasks() covers every task without the kernel's help (RT::counts_moved above).
// Also the interface's defaults, which an adapter replaces where its runtime differs: no worker
// stack to set (plait, omp, serial), the manual cut-off always (omp has its if/final variants),
// no counters of the runtime's own (omp, serial).
template <bool Parallel, bool OpenMP, bool CountsMoved>
struct rt_traits {
  static constexpr bool parallel = Parallel;
  static constexpr bool openmp = OpenMP;
  static constexpr bool counts_moved = CountsMoved;

  void set_worker_stack(std::size_t) {}
  bool manual() const { return true; }
  void counters(plait_bench::Record&) const {}
};

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

// Runs f() as the root task and returns the seconds it took, measured inside the root task: the
// hand-over from the main thread to a worker (and, for OpenMP, the start of the parallel region) is
// not part of the kernel. With the serial adapter it is a timed plain call.
template <class RT, class F>
double timed_root(RT& rt, F&& f) {
  return rt.root([&f] {
    const double t0 = plait_bench::now();
    f();
    return plait_bench::now() - t0;
  });
}

// The statistics of a repetition whose tasks the kernel made with the runtime's own constructs:
// the runtime's counters, then `moved_tasks` where the runtime counts every task by itself (Plait).
// The other runtimes know only of tasks made through group/invoke, so they write no moved_tasks.
template <class RT>
void runtime_stats(const RT& rt, plait_bench::Record& rec) {
  rt.counters(rec);
  if constexpr (RT::counts_moved) rec.stat("moved_tasks", rt.moved_tasks());
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
