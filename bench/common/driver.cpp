#include "common/driver.hpp"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>


namespace plait_bench {

// The shared object that answers omp_get_num_threads in this process — the OpenMP runtime a
// gcc-built binary runs on: libgomp, or whatever was preloaded (libomp, libplait-omp) — or ""
// when the process has no OpenMP runtime. Looked up by name, so the driver needs no OpenMP.
static std::string omp_library() {
  void* f = dlsym(RTLD_DEFAULT, "omp_get_num_threads");
  Dl_info info;
  if (f == nullptr || dladdr(f, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

double now() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

std::string printable(std::string_view s, std::size_t max) {
  const std::size_t shown = std::min(s.size(), max);
  std::string o;
  o.reserve(shown + 16);
  for (std::size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      o += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    }
  }
  if (shown < s.size()) o += "... (" + std::to_string(s.size()) + " bytes)";
  return o;
}

Cli::Cli(std::string kernel, std::string runtime, int argc, char** argv)
    : kernel_(std::move(kernel)), runtime_(std::move(runtime)), argc_(argc), argv_(argv) {
  add_int("threads", &threads, 1, 4096, "worker threads (serial accepts only 1)", {"-n"});
  add_int("reps", &reps, 1, 1000000, "measured repetitions, one JSON line each");
  add_int("warmup", &warmup, 0, 1000, "unmeasured repetitions before the measured ones");
  add_flag("quiet", &quiet, "no human summary on stderr");
}

static long long parse_ll(const std::string& opt, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw usage_error("option --" + opt + ": '" + v + "' is not an integer");
  return x;
}

static double parse_d(const std::string& opt, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x))
    throw usage_error("option --" + opt + ": '" + v + "' is not a number");
  return x;
}

void Cli::add_int(const std::string& name, long long* target, long long lo, long long hi, const std::string& help,
                  std::vector<std::string> aliases) {
  Opt o;
  o.name = name;
  o.help = help + " [" + std::to_string(lo) + ".." + std::to_string(hi) + ", default " + std::to_string(*target) + "]";
  o.kind = "int";
  o.aliases = std::move(aliases);
  o.set = [=](const std::string& v) {
    long long x = parse_ll(name, v);
    if (x < lo || x > hi)
      throw usage_error("option --" + name + ": " + v + " is out of range; accepted " + std::to_string(lo) + ".." +
                        std::to_string(hi));
    *target = x;
  };
  o.show = [=] { return std::to_string(*target); };
  opts_.push_back(std::move(o));
}

void Cli::add_double(const std::string& name, double* target, double lo, double hi, const std::string& help,
                     std::vector<std::string> aliases, open_bounds open) {
  Opt o;
  o.name = name;
  // Twelve significant digits: 2147483647 prints as itself, not as 2.14748e+09.
  auto fmt = [](double v) {
    std::ostringstream f;
    f.precision(12);
    f << v;
    return f.str();
  };
  const std::string range = (open.lo ? ">" : "") + fmt(lo) + ".." + (open.hi ? "<" : "") + fmt(hi);
  o.help = help + " [" + range + ", default " + fmt(*target) + "]";
  o.kind = "number";
  o.aliases = std::move(aliases);
  o.set = [=](const std::string& v) {
    double x = parse_d(name, v);
    if (x < lo || x > hi || (open.lo && x == lo) || (open.hi && x == hi))
      throw usage_error("option --" + name + ": " + v + " is out of range; accepted " + range);
    *target = x;
  };
  o.show = [=] {
    std::ostringstream s;
    s.precision(17);
    s << *target;
    return s.str();
  };
  opts_.push_back(std::move(o));
}

void Cli::add_string(const std::string& name, std::string* target, const std::string& help,
                     std::vector<std::string> choices, std::vector<std::string> aliases) {
  Opt o;
  o.name = name;
  o.help = help;
  if (!choices.empty()) {
    o.help += " [";
    for (size_t i = 0; i < choices.size(); ++i) o.help += (i ? "|" : "") + choices[i];
    o.help += "]";
  }
  o.help += " (default '" + *target + "')";
  o.kind = "string";
  o.aliases = std::move(aliases);
  o.choices = choices;
  o.set = [=](const std::string& v) {
    if (!choices.empty() && std::find(choices.begin(), choices.end(), v) == choices.end()) {
      std::string acc;
      for (size_t i = 0; i < choices.size(); ++i) acc += (i ? ", " : "") + choices[i];
      throw usage_error("option --" + name + ": unknown value '" + v + "'; accepted: " + acc);
    }
    *target = v;
  };
  o.show = [=] { return *target; };
  opts_.push_back(std::move(o));
}

void Cli::add_flag(const std::string& name, bool* target, const std::string& help, std::vector<std::string> aliases) {
  Opt o;
  o.name = name;
  o.help = help;
  o.kind = "flag";
  o.aliases = std::move(aliases);
  o.set = [=](const std::string&) { *target = true; };
  o.show = [=] { return std::string(*target ? "true" : "false"); };
  opts_.push_back(std::move(o));
}

Cli::Opt* Cli::find(const std::string& spelling) {
  for (auto& o : opts_) {
    if (spelling == "--" + o.name) return &o;
    for (auto& a : o.aliases)
      if (spelling == a) return &o;
  }
  return nullptr;
}

void Cli::usage() const {
  std::printf("usage: %s-%s [options]\n", kernel_.c_str(), runtime_.c_str());
  for (auto& o : opts_) {
    std::string sp = "--" + o.name;
    for (auto& a : o.aliases) sp += ", " + a;
    if (o.kind != "flag") sp += " <" + o.kind + ">";
    std::printf("  %-28s %s\n", sp.c_str(), o.help.c_str());
  }
  std::printf("Output: one JSON line per repetition on stdout (docs/bench-protocol.md).\n"
              "Exit codes: 0 ok, 1 verification failed, 2 bad input, 3 other error.\n");
}

void Cli::parse() {
  for (int i = 1; i < argc_; ++i) {
    std::string a = argv_[i];
    if (a == "--help" || a == "-h") {
      usage();
      std::fflush(stdout);
      throw help_shown();  // exit 0 through the guard: an MPI rank still finalizes
    }
    std::string val;
    bool has_val = false;
    auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_val = true;
    }
    Opt* o = find(a);
    if (!o) {
      std::string acc;
      for (auto& x : opts_) acc += (acc.empty() ? "--" : ", --") + x.name;
      throw usage_error("unknown option '" + a + "'; accepted: " + acc + " (see --help)");
    }
    if (o->kind == "flag") {
      if (has_val) throw usage_error("option --" + o->name + " takes no value");
    } else if (!has_val) {
      if (i + 1 >= argc_) throw usage_error("option --" + o->name + " needs a value");
      val = argv_[++i];
    }
    o->set(val);
    o->given = true;
  }
  if (runtime_ == "serial" && threads != 1)
    throw usage_error("the serial build runs on one thread; --threads must be 1, not " + std::to_string(threads));
  for (const SizeClass& s : sizes_) {
    const auto k = static_cast<std::size_t>(std::find(s.classes.begin(), s.classes.end(), *s.target) - s.classes.begin());
    for (const auto& [name, per_class] : s.values) {
      Opt* o = find("--" + name);
      if (o == nullptr || o->kind != "int")
        throw std::logic_error("add_size: --" + name + " is not an integer option of this program");
      if (!o->given) o->set(std::to_string(per_class[k]));
    }
  }
  params_.clear();
  for (auto& o : opts_) {
    if (o.name == "threads" || o.name == "reps" || o.name == "warmup" || o.name == "quiet") continue;
    params_.emplace_back(o.name, o.show());
  }
}

void Cli::add_size(const std::string& name, std::string* target, const std::string& help,
                   std::vector<std::string> classes,
                   std::vector<std::pair<std::string, std::vector<long long>>> values) {
  if (std::find(classes.begin(), classes.end(), *target) == classes.end())
    throw std::logic_error("add_size(" + name + "): the default '" + *target + "' is not one of the classes");
  for (const auto& [opt, per_class] : values)
    if (per_class.size() != classes.size())
      throw std::logic_error("add_size(" + name + "): --" + opt + " needs " + std::to_string(classes.size()) +
                             " values, one per class");
  add_string(name, target, help, classes);
  sizes_.push_back({target, std::move(classes), std::move(values)});
}

bool Cli::given(const std::string& name) const {
  for (auto& o : opts_)
    if (o.name == name) return o.given;
  return false;
}

void Record::stat(const std::string& key, double v) { stats.emplace_back(key, v); }
void Record::stat(const std::string& key, long long v) { stats.emplace_back(key, v); }
void Record::stat(const std::string& key, unsigned long long v) { stats.emplace_back(key, v); }
void Record::stat(const std::string& key, const std::string& v) { stats.emplace_back(key, v); }

void Record::check(bool ok, const std::string& what) {
  if (!ok) throw verify_error("verification failed: " + what);
  checked = true;
  verified_what = what;
}

static std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Runner::repeat(const std::function<void(Record&)>& body) {
  for (long long w = 0; w < cli_.warmup; ++w) {
    Record r;
    body(r);
    if (!r.checked) throw std::logic_error("benchmark repetition did not verify its result");
  }
  std::vector<double> times;
  const std::string omp_lib = omp_library();
  for (long long k = 0; k < cli_.reps; ++k) {
    Record r;
    body(r);
    if (!r.checked) throw std::logic_error("benchmark repetition did not verify its result");
    if (r.time_s < 0) throw std::logic_error("benchmark repetition did not set time_s");
    times.push_back(r.time_s);
    std::ostringstream js;
    js << "{\"kernel\":\"" << json_escape(cli_.kernel()) << "\",\"runtime\":\"" << json_escape(cli_.runtime())
       << "\",\"threads\":" << cli_.threads << ",\"rep\":" << k << ",\"params\":{";
    bool first = true;
    for (auto& [key, v] : cli_.params()) {
      js << (first ? "" : ",") << "\"" << json_escape(key) << "\":\"" << json_escape(v) << "\"";
      first = false;
    }
    js << "},\"time_s\":" << num(r.time_s) << ",\"verified\":true,\"check\":\"" << json_escape(r.verified_what) << "\"";
    if (!omp_lib.empty()) js << ",\"omp_library\":\"" << json_escape(omp_lib) << "\"";
    js << ",\"stats\":{";
    first = true;
    for (auto& [key, v] : r.stats) {
      js << (first ? "" : ",") << "\"" << json_escape(key) << "\":";
      first = false;
      if (auto* d = std::get_if<double>(&v))
        js << num(*d);
      else if (auto* ll = std::get_if<long long>(&v))
        js << *ll;
      else if (auto* ull = std::get_if<unsigned long long>(&v))
        js << *ull;
      else
        js << "\"" << json_escape(std::get<std::string>(v)) << "\"";
    }
    js << "}}";
    std::cout << js.str() << std::endl;
  }
  if (!cli_.quiet && !times.empty()) {
    std::vector<double> s = times;
    std::sort(s.begin(), s.end());
    std::fprintf(stderr, "%s-%s threads=%lld reps=%lld median=%.6f s min=%.6f s max=%.6f s (verified)\n",
                 cli_.kernel().c_str(), cli_.runtime().c_str(), cli_.threads, cli_.reps, s[s.size() / 2], s.front(),
                 s.back());
  }
}

// glibc adapts its mmap and trim thresholds at run time: freeing a chunk that was mmap'ed raises
// both. oneTBB's start-up does that, so a TBB binary kept its freed heap memory between
// repetitions while the serial, Plait and OpenMP binaries returned it and page-faulted it back in
// (sparselu --size small, 1 thread, 10 repetitions: 2,370 page faults for TBB vs 7,445 serial and
// 7,515 Plait; docs/bench-protocol.md). The kernels are the same code, so that difference belongs to
// the allocator, not to the runtimes. Fixed thresholds (setting one turns the adaptation off) give
// every binary the same allocator behaviour. PLAIT_BENCH_MALLOC=glibc keeps glibc's defaults.
static void configure_malloc() {
  const char* v = std::getenv("PLAIT_BENCH_MALLOC");
  std::string mode = v ? v : "fixed";
  if (mode == "glibc") return;
  if (mode != "fixed")
    throw usage_error("PLAIT_BENCH_MALLOC='" + mode + "' is not a malloc mode; accepted: fixed, glibc");
  // 32 MiB is glibc's own upper bound for the adaptive mmap threshold on 64-bit; trimming only past
  // 64 MiB of free memory at the top of a heap.
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 64 << 20) != 1)
    throw std::runtime_error("mallopt failed to set the malloc thresholds");
}

int run_guarded(const std::string& kernel, const std::string& runtime, int argc, char** argv,
                const std::function<void(Cli&)>& body, std::string* message) {
  message->clear();
  try {
    configure_malloc();
    Cli cli(kernel, runtime, argc, argv);
    body(cli);
    return 0;
  } catch (const help_shown&) {
    return 0;
  } catch (const usage_error& e) {
    *message = printable(e.what());
    return 2;
  } catch (const verify_error& e) {
    *message = printable(e.what());
    return 1;
  } catch (const std::invalid_argument& e) {
    // A runtime refusing its settings: Plait's pool_options::from_env for a malformed PLAIT_*
    // variable (src/env.cpp), or an option out of range, throws std::invalid_argument with one line.
    *message = printable(e.what());
    return 2;
  } catch (const exit_status& e) {
    *message = printable(e.what());
    return e.status;
  } catch (const std::exception& e) {
    *message = printable(e.what());
    return 3;
  }
}

int main_guard_rt(const std::string& kernel, const std::string& runtime, int argc, char** argv,
                  const std::function<void(Cli&)>& body) {
  std::string message;
  const int rc = run_guarded(kernel, runtime, argc, argv, body, &message);
  if (rc != 0) std::fprintf(stderr, "%s-%s: error: %s\n", kernel.c_str(), runtime.c_str(), message.c_str());
  return rc;
}

void ensure_stack(int argc, char** argv, std::size_t main_stack_bytes, const char* omp_stacksize) {
  (void)argc;
  if (std::getenv("PLAIT_BENCH_REEXECED")) return;
  // Under valgrind /proc/self/exe is the tool, not us: stay in this process (valgrind gives the
  // client a large stack of its own; set OMP_STACKSIZE by hand if an OpenMP run needs it).
  if (const char* pre = std::getenv("LD_PRELOAD"); pre && std::strstr(pre, "vgpreload")) return;
  bool need = false;
  rlimit rl{};
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < main_stack_bytes) {
    rlim_t want = main_stack_bytes;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) want = rl.rlim_max;
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_STACK, &rl) == 0) need = true;
  }
  if (omp_stacksize && !std::getenv("OMP_STACKSIZE")) {
    setenv("OMP_STACKSIZE", omp_stacksize, 1);
    need = true;
  }
  if (!need) return;
  setenv("PLAIT_BENCH_REEXECED", "1", 1);
  execv("/proc/self/exe", argv);
  // exec failed: carry on with what we have; the run may still fit.
  std::fprintf(stderr, "warning: could not re-execute with a larger stack: %s\n", std::strerror(errno));
}

}  // namespace plait_bench
