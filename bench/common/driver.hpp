// Shared driver for every benchmark binary: command line, timing, JSON-lines output and exit
// codes. The contract that plait-bench relies on is written down in docs/bench-protocol.md.
//
// A kernel's <runtime>.cpp typically looks like
//
//   int main(int argc, char** argv) {
//     return plait_bench::main_guard("fib", argc, argv, [](plait_bench::Cli& cli) {
//       long long n = 30;
//       cli.add_int("n", &n, 0, 50, "fib argument");
//       cli.parse();                                   // throws usage_error on bad input
//       plait_bench::Runner run(cli);                  // --threads/--reps/--warmup
//       run.repeat([&](plait_bench::Record& rec) {
//         auto t0 = plait_bench::now();  long long r = fib(n);  rec.time_s = plait_bench::now() - t0;
//         rec.check(r == expected, "fib(" + ...);      // throws verify_error -> exit 1
//         rec.stat("result", r);
//       });
//     });
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace plait_bench {

// Bad command line or input file: one line on stderr, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A usage_error unless option --<name>'s value v is a power of two.
inline void require_power_of_two(const std::string& name, long long v) {
  if (v < 1 || (v & (v - 1)) != 0)
    throw usage_error("option --" + name + ": " + std::to_string(v) + " is not a power of two");
}
// A result that failed its check: one line on stderr, exit code 1. Never printed as a number.
struct verify_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Monotonic wall clock in seconds.
double now();

// Which bounds of a number option's range are open (Cli::add_double).
struct open_bounds {
  bool lo = false, hi = false;
};

class Cli {
 public:
  Cli(std::string kernel, std::string runtime, int argc, char** argv);

  // Options are given as --name VALUE or --name=VALUE. `aliases` may hold extra spellings such
  // as "-t" (the UTS reference letters). Ranges are inclusive unless a bound is open (numbers
  // only: help and errors print it as ">lo" or "<hi", e.g. [>0..2147483647]); a value outside is a
  // usage_error that names the option and the accepted range, the same range --help shows.
  void add_int(const std::string& name, long long* target, long long lo, long long hi, const std::string& help,
               std::vector<std::string> aliases = {});
  void add_double(const std::string& name, double* target, double lo, double hi, const std::string& help,
                  std::vector<std::string> aliases = {}, open_bounds open = {});
  // `choices` empty means any string is accepted.
  void add_string(const std::string& name, std::string* target, const std::string& help,
                  std::vector<std::string> choices = {}, std::vector<std::string> aliases = {});
  void add_flag(const std::string& name, bool* target, const std::string& help, std::vector<std::string> aliases = {});
  // --inject-error, every kernel's test of its own verification: "testing only: corrupt <what> so
  // that verification must fail".
  void add_inject_error(bool* target, const std::string& what = "the result") {
    add_flag("inject-error", target, "testing only: corrupt " + what + " so that verification must fail");
  }
  // A problem class: the string option `name`, one of `classes` (add_string), that gives each
  // option in `values` which is not given explicitly its value for the class: values[i] = {the
  // name of an add_int option (registered before or after), one value per class in the order of
  // `classes`}. parse() applies them before it takes params(), so the record shows the values the
  // run used.
  void add_size(const std::string& name, std::string* target, const std::string& help,
                std::vector<std::string> classes, std::vector<std::pair<std::string, std::vector<long long>>> values);

  // Parses argv. --help prints the options and exits 0. Unknown options are a usage_error.
  void parse();
  // True when the user gave the option explicitly (after parse()).
  bool given(const std::string& name) const;

  const std::string& kernel() const { return kernel_; }
  const std::string& runtime() const { return runtime_; }
  // Parameters as given/defaulted, for the JSON record.
  const std::vector<std::pair<std::string, std::string>>& params() const { return params_; }

  long long threads = 1;
  long long reps = 1;
  long long warmup = 0;
  bool quiet = false;

 private:
  struct Opt {
    std::string name, help, kind;
    std::vector<std::string> aliases, choices;
    std::function<void(const std::string&)> set;
    std::function<std::string()> show;
    bool given = false;
  };
  struct SizeClass {
    const std::string* target;
    std::vector<std::string> classes;
    std::vector<std::pair<std::string, std::vector<long long>>> values;
  };
  Opt* find(const std::string& spelling);
  void usage() const;
  std::vector<SizeClass> sizes_;
  std::string kernel_, runtime_;
  int argc_;
  char** argv_;
  std::vector<Opt> opts_;
  std::vector<std::pair<std::string, std::string>> params_;
};

// One repetition's result. Stats are numbers or strings; they land in the JSON "stats" object.
struct Record {
  double time_s = -1;
  void stat(const std::string& key, double v);
  void stat(const std::string& key, long long v);
  void stat(const std::string& key, unsigned long long v);
  void stat(const std::string& key, int v) { stat(key, static_cast<long long>(v)); }
  void stat(const std::string& key, const std::string& v);
  // Fails the run (exit 1) with `what` unless `ok`.
  void check(bool ok, const std::string& what);
  std::vector<std::pair<std::string, std::variant<double, long long, unsigned long long, std::string>>> stats;
  std::string verified_what;  // the last successful check's text
  bool checked = false;
};

class Runner {
 public:
  explicit Runner(Cli& cli) : cli_(cli) {}
  // Runs `body` warmup times silently, then reps times, printing one JSON line per repetition on
  // stdout and a human summary on stderr. A repetition must call rec.check() at least once.
  void repeat(const std::function<void(Record&)>& body);

 private:
  Cli& cli_;
};

// Runs `body` and maps exceptions to the protocol's exit codes (0 ok, 1 verification failed,
// 2 usage/input error, 3 any other error). Prints "<kernel>-<runtime>: error: ..." on one line.
// std::invalid_argument counts as bad input (2): it is how a runtime refuses its settings, such
// as Plait's pool for a malformed PLAIT_* environment variable.
int main_guard_rt(const std::string& kernel, const std::string& runtime, int argc, char** argv,
                  const std::function<void(Cli&)>& body);
// As main_guard_rt, but the error is returned in *message (the bare reason, one line) instead of
// printed: the MPI programs decide which rank prints it (common/mpi_start.hpp).
int run_guarded(const std::string& kernel, const std::string& runtime, int argc, char** argv,
                const std::function<void(Cli&)>& body, std::string* message);
// Thrown by Cli::parse after it printed --help: the guard exits 0.
struct help_shown {};
// An error that carries its own exit status (an MPI rank reporting another rank's failure).
struct exit_status : std::runtime_error {
  exit_status(int s, const std::string& what) : std::runtime_error(what), status(s) {}
  int status;
};

// The runtime's name comes from the executable's own compile definitions (bench/CMakeLists.txt).
#ifndef PLAIT_BENCH_RUNTIME
#define PLAIT_BENCH_RUNTIME "unknown"
#endif
inline std::string this_runtime() {
  std::string rt = PLAIT_BENCH_RUNTIME;
#ifdef PLAIT_BENCH_OMP_NAME
  if (rt == "omp") rt = PLAIT_BENCH_OMP_NAME;
#endif
  return rt;
}
inline int main_guard(const std::string& kernel, int argc, char** argv, const std::function<void(Cli&)>& body) {
  return main_guard_rt(kernel, this_runtime(), argc, argv, body);
}

// Re-executes the program once with a large main-thread stack (RLIMIT_STACK) and OMP_STACKSIZE
// set, because both must be in place before the process (or libgomp, at load time) starts.
// Safe to call first thing in main; a no-op on the second pass or when the limits already fit.
void ensure_stack(int argc, char** argv, std::size_t main_stack_bytes, const char* omp_stacksize);

// JSON string escaping (exposed for tests).
std::string json_escape(const std::string& s);

// `s` as text that is safe to quote in a one-line message: every byte outside printable ASCII
// (control characters and line breaks, the bytes of a binary file, UTF-8 sequences too) is
// written as \xNN. At most `max` bytes of `s` are shown; a longer string ends in "..." followed
// by its length, e.g. `\x8f\x03abc... (300 bytes)`. Input files are quoted through this, and
// main_guard passes every error message through it once more (without a bound).
std::string printable(std::string_view s, std::size_t max = std::string_view::npos);

}  // namespace plait_bench
