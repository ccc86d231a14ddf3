// The ICVs and the environment. OMP_* variables are read as libgomp reads them: a malformed value
// is reported on one line and the default is used (the program runs on). PLAIT_* variables keep
// their strict checking (pool_options::from_env): a malformed one stops the program when the
// first team is made.
#include "omp_internal.hpp"

#include <sched.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace plait::omp {

static void warn_invalid(const char* var, const char* val, const char* accepted) {
  std::fprintf(stderr, "plait-omp: invalid value for environment variable %s='%s' (accepted: %s); using the default\n",
               var, val, accepted);
}

static std::string trim(const char* s) {
  std::string v(s);
  std::size_t a = 0, b = v.size();
  while (a < b && std::isspace(static_cast<unsigned char>(v[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(v[b - 1]))) --b;
  return v.substr(a, b - a);
}

static bool parse_ulong(const std::string& s, unsigned long long lo, unsigned long long hi, unsigned long long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  unsigned long long x = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || x < lo || x > hi) return false;
  *out = x;
  return true;
}

static std::string lower(const std::string& s) {
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

static bool parse_bool(const std::string& s, bool* out) {
  const std::string l = lower(s);
  if (l == "true") { *out = true; return true; }
  if (l == "false") { *out = false; return true; }
  return false;
}

// An integer variable: its value in [lo, hi] is stored in *out; anything else is reported and the
// default stays.
template <class T>
static void env_int(const char* name, unsigned long long lo, unsigned long long hi, const char* accepted, T* out) {
  const char* v = std::getenv(name);
  if (v == nullptr) return;
  unsigned long long x;
  if (parse_ulong(trim(v), lo, hi, &x)) *out = static_cast<T>(x);
  else warn_invalid(name, v, accepted);
}

// A true/false variable, as env_int.
static void env_bool(const char* name, bool* out) {
  const char* v = std::getenv(name);
  if (v != nullptr && !parse_bool(trim(v), out)) warn_invalid(name, v, "true or false");
}

// A list variable: comma-separated items, each trimmed and read by item(text, only, &value), where
// `only` says it is the list's one item. When every item is valid the list is stored in *list and
// its first item in *first; anything else is reported and the defaults stay.
template <class T, class Item>
static void env_list(const char* name, const char* accepted, Item item, std::vector<T>* list, T* first) {
  const char* v = std::getenv(name);
  if (v == nullptr) return;
  const std::string s = trim(v);
  std::vector<T> items;
  for (std::size_t pos = 0;;) {
    const auto comma = s.find(',', pos);
    const std::string text = trim(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos).c_str());
    T x;
    if (!item(text, pos == 0 && comma == std::string::npos, &x)) {
      warn_invalid(name, v, accepted);
      return;
    }
    items.push_back(x);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  *first = items[0];
  *list = std::move(items);
}

// OMP_STACKSIZE: a size with an optional B/K/M/G suffix (default unit K), at most
// max_stacksize bytes (the pool's limit, as PLAIT_STACK_SIZE's). A number that would not fit once
// multiplied by its unit is invalid (libgomp rejects it too); it must not wrap into a small stack.
static constexpr unsigned long long max_stacksize = 64ull << 30;
static bool parse_stacksize(const std::string& s, std::size_t* out) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return false;
  std::string suf = trim(s.substr(i).c_str());
  unsigned long long mul = 1024;
  if (suf.empty() || suf == "k" || suf == "K") mul = 1024;
  else if (suf == "b" || suf == "B") mul = 1;
  else if (suf == "m" || suf == "M") mul = 1024ull * 1024;
  else if (suf == "g" || suf == "G") mul = 1024ull * 1024 * 1024;
  else return false;
  unsigned long long x = 0;
  // parse_ulong refuses a digit string past 2^64 (ERANGE); the bound keeps x * mul exact.
  if (!parse_ulong(s.substr(0, i), 0, max_stacksize / mul, &x)) return false;
  *out = static_cast<std::size_t>(x * mul);
  return true;
}

// OMP_SCHEDULE: [modifier:]kind[,chunk] with kind static|dynamic|guided|auto.
static bool parse_schedule(const std::string& s0, int* kind, long* chunk) {
  std::string s = lower(s0);
  auto colon = s.find(':');
  if (colon != std::string::npos) {
    std::string mod = trim(s.substr(0, colon).c_str());
    if (mod != "monotonic" && mod != "nonmonotonic") return false;
    s = s.substr(colon + 1);
  }
  std::string k = s, c;
  auto comma = s.find(',');
  if (comma != std::string::npos) {
    k = s.substr(0, comma);
    c = trim(s.substr(comma + 1).c_str());
  }
  k = trim(k.c_str());
  int kk;
  if (k == "static") kk = 1;
  else if (k == "dynamic") kk = 2;
  else if (k == "guided") kk = 3;
  else if (k == "auto") kk = 4;
  else return false;
  long ch = 0;
  if (comma != std::string::npos) {
    unsigned long long x;
    if (!parse_ulong(c, 1, 1ull << 31, &x)) return false;
    ch = static_cast<long>(x);
  }
  *kind = kk;
  *chunk = ch;
  return true;
}

static unsigned cpus_available() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return static_cast<unsigned>(CPU_COUNT(&mask));
  return 1;
}

// The predefined allocators, by handle - 1 (omp_default_mem_alloc is 1).
static const char* const allocator_names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                              "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                              "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                              "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};

static Global read_env() {
  Global g;
  g.num_procs = cpus_available();
  g.icv.nthreads = g.num_procs;
  env_list("OMP_NUM_THREADS", "a positive integer or a comma-separated list of them",
           [](const std::string& item, bool, unsigned* n) {
             unsigned long long x;
             if (!parse_ulong(item, 1, 1u << 16, &x)) return false;
             *n = static_cast<unsigned>(x);
             return true;
           },
           &g.nthreads_list, &g.icv.nthreads);
  env_bool("OMP_DYNAMIC", &g.icv.dyn);
  if (const char* v = std::getenv("OMP_SCHEDULE")) {
    int k;
    long c;
    if (parse_schedule(v, &k, &c)) {
      g.icv.run_sched = k;
      g.icv.run_chunk = c;
    } else {
      warn_invalid("OMP_SCHEDULE", v, "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,chunk]");
    }
  } else {
    g.icv.run_sched = 2;  // libgomp's default run-sched-var: dynamic, chunk 1
    g.icv.run_chunk = 1;
  }
  // Nested parallelism: inner regions run with one thread unless OMP_MAX_ACTIVE_LEVELS (or
  // OMP_NESTED=true, or an OMP_NUM_THREADS list) allows more, as in libgomp (team.cpp, "Nested
  // regions").
  g.icv.max_active_levels = 1;
  if (const char* v = std::getenv("OMP_NESTED")) {
    bool b;
    if (parse_bool(trim(v), &b)) g.icv.max_active_levels = b ? 255 : 1;
    else warn_invalid("OMP_NESTED", v, "true or false");
  }
  if (g.nthreads_list.size() > 1 && std::getenv("OMP_MAX_ACTIVE_LEVELS") == nullptr && std::getenv("OMP_NESTED") == nullptr)
    g.icv.max_active_levels = static_cast<unsigned>(g.nthreads_list.size());
  env_int("OMP_MAX_ACTIVE_LEVELS", 0, 255, "an integer in 0..255", &g.icv.max_active_levels);
  env_int("OMP_THREAD_LIMIT", 1, 1u << 16, "a positive integer", &g.thread_limit);
  env_int("OMP_NUM_TEAMS", 1, 1u << 30, "a positive integer", &g.nteams);
  env_int("OMP_TEAMS_THREAD_LIMIT", 1, 1u << 30, "a positive integer", &g.teams_thread_limit);
  if (const char* v = std::getenv("OMP_STACKSIZE")) {
    std::size_t z;
    if (parse_stacksize(trim(v), &z)) g.stacksize = z < (64u << 10) ? (64u << 10) : z;
    else warn_invalid("OMP_STACKSIZE", v, "a size up to 64G with an optional B, K, M or G suffix (default K)");
  }
  if (const char* v = std::getenv("OMP_WAIT_POLICY")) {
    const std::string s = lower(trim(v));
    if (s == "active") g.wait_active = true;
    else if (s == "passive") g.wait_active = false;
    else warn_invalid("OMP_WAIT_POLICY", v, "active or passive");
  }
  env_bool("OMP_CANCELLATION", &g.cancel);
  env_list("OMP_PROC_BIND", "true, false, or a list of primary, master, close, spread",
           [](const std::string& item, bool only, int* bind) {
             const std::string b = lower(item);
             if (b == "false" && only) *bind = 0;
             else if (b == "true" && only) *bind = 1;
             else if (b == "master" || b == "primary") *bind = 2;
             else if (b == "close") *bind = 3;
             else if (b == "spread") *bind = 4;
             else return false;
             return true;
           },
           &g.bind_list, &g.icv.bind);
  // OMP_PLACES without OMP_PROC_BIND turns binding on (bind-var true), as in libgomp.
  if (const char* v = std::getenv("OMP_PLACES"); v != nullptr && *v != '\0' && std::getenv("OMP_PROC_BIND") == nullptr) {
    g.icv.bind = 1;
    g.bind_list = {1};
  }
  env_int("OMP_MAX_TASK_PRIORITY", 0, 1u << 30, "a non-negative integer", &g.max_task_priority);
  env_int("OMP_DEFAULT_DEVICE", 0, 1u << 30, "a non-negative integer", &g.icv.default_device);
  if (const char* v = std::getenv("OMP_TARGET_OFFLOAD")) {
    const std::string s = lower(trim(v));
    if (s == "default") g.target_offload = target_offload_default;
    else if (s == "mandatory") g.target_offload = target_offload_mandatory;
    else if (s == "disabled") g.target_offload = target_offload_disabled;
    else warn_invalid("OMP_TARGET_OFFLOAD", v, "mandatory, disabled or default");
  }
  if (const char* v = std::getenv("OMP_ALLOCATOR")) {
    const std::string s = trim(v);
    bool ok = false;
    for (std::uintptr_t k = 0; k < 8 && !ok; ++k)
      if (s == allocator_names[k]) {
        g.def_allocator = k + 1;
        ok = true;
      }
    if (!ok) warn_invalid("OMP_ALLOCATOR", v, "the name of a predefined allocator, e.g. omp_default_mem_alloc");
  }
  env_bool("OMP_DISPLAY_AFFINITY", &g.display_affinity);
  // OMP_AFFINITY_FORMAT: taken as it is (a malformed one stops the program where it is used, as
  // libgomp's does)
  if (const char* v = std::getenv("OMP_AFFINITY_FORMAT")) g.affinity_format = v;
  return g;
}

const Global& global() {
  static const Global g = read_env();
  return g;
}

// The OMP_DISPLAY_ENV block (also omp_display_env): the initial ICVs, libgomp's names and format.
void print_env(bool verbose) {
  const Global& g = global();
  static const char* const kinds[] = {"", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
  static const char* const binds[] = {"FALSE", "TRUE", "PRIMARY", "CLOSE", "SPREAD"};
  std::fprintf(stderr, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
  std::fprintf(stderr, "  _OPENMP = '201511'\n");
  std::fprintf(stderr, "  OMP_DYNAMIC = '%s'\n", g.icv.dyn ? "TRUE" : "FALSE");
  std::fprintf(stderr, "  OMP_NESTED = '%s'\n", g.icv.max_active_levels > 1 ? "TRUE" : "FALSE");
  std::fprintf(stderr, "  OMP_NUM_THREADS = '%u'\n", g.icv.nthreads);
  std::fprintf(stderr, "  OMP_SCHEDULE = '%s,%ld'\n", kinds[g.icv.run_sched & 7], g.icv.run_chunk);
  std::fprintf(stderr, "  OMP_PROC_BIND = '%s'\n", binds[g.icv.bind]);
  std::fprintf(stderr, "  OMP_STACKSIZE = '%zu'\n", g.stacksize);
  std::fprintf(stderr, "  OMP_WAIT_POLICY = '%s'\n", g.wait_active ? "ACTIVE" : "PASSIVE");
  std::fprintf(stderr, "  OMP_THREAD_LIMIT = '%u'\n",
               g.thread_limit == 0 || g.thread_limit > plait::max_workers ? plait::max_workers : g.thread_limit);
  std::fprintf(stderr, "  OMP_MAX_ACTIVE_LEVELS = '%u'\n", g.icv.max_active_levels);
  std::fprintf(stderr, "  OMP_NUM_TEAMS = '%u'\n", g.nteams);
  std::fprintf(stderr, "  OMP_TEAMS_THREAD_LIMIT = '%u'\n", g.teams_thread_limit);
  std::fprintf(stderr, "  OMP_CANCELLATION = '%s'\n", g.cancel ? "TRUE" : "FALSE");
  std::fprintf(stderr, "  OMP_DEFAULT_DEVICE = '%d'\n", g.icv.default_device);
  std::fprintf(stderr, "  OMP_MAX_TASK_PRIORITY = '%d'\n", g.max_task_priority);
  std::fprintf(stderr, "  OMP_DISPLAY_AFFINITY = '%s'\n", g.display_affinity ? "TRUE" : "FALSE");
  std::fprintf(stderr, "  OMP_AFFINITY_FORMAT = '%s'\n", g.affinity_format.c_str());
  std::fprintf(stderr, "  OMP_ALLOCATOR = '%s'\n", allocator_names[g.def_allocator - 1]);
  static const char* const offload[] = {"DEFAULT", "MANDATORY", "DISABLED"};
  std::fprintf(stderr, "  OMP_TARGET_OFFLOAD = '%s'\n", offload[g.target_offload]);
  if (verbose) std::fprintf(stderr, "  PLAIT_RUNTIME = 'plait'\n");
  std::fprintf(stderr, "OPENMP DISPLAY ENVIRONMENT END\n");
}

void display_env_once() {
  static const bool done = [] {
    const char* v = std::getenv("OMP_DISPLAY_ENV");
    if (v == nullptr) return true;
    const std::string s = lower(trim(v));
    if (s != "true" && s != "verbose") {
      if (s != "false") warn_invalid("OMP_DISPLAY_ENV", v, "true, verbose or false");
      return true;
    }
    print_env(true);
    return true;
  }();
  (void)done;
}

}  // namespace plait::omp
