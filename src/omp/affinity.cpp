// Thread affinity display (OpenMP 5.0): the affinity-format-var ICV and its fields, the
// omp_*_affinity* routines, OMP_DISPLAY_AFFINITY's lines at region entry; and omp_pause_resource.
//
// A format is text with fields %[[0].][size]type: type one of the letters below or a long name in
// braces, `size` a minimum width. Without '.', a short value is padded on the right; with '.', on
// the left with spaces; with "0.", on the left with zeros for the numeric fields (after the sign,
// after "0x" for %i) and with spaces for the others. "%%" is a '%'. A malformed format stops the
// program with one line naming what is wrong (libgomp stops it too, with status 1).
//
//   t team_num        T num_teams         L nesting_level     n thread_num
//   N num_threads     a ancestor_tnum     H host              P process_id
//   i native_thread_id (pthread_self, as 0x...)               A thread_affinity (the CPUs the
//                                                               thread may run on: 0-3,8)
//
// OMP_DISPLAY_AFFINITY=true: each member of a parallel region, on entering it, prints its line
// (the format's expansion, on stderr, as libgomp) when that line differs from the last one it
// printed: at the first region, and whenever the team's size, the level, the binding or the thread
// changes, which is the standard's "any change in the information".
//
// omp_pause_resource(kind, initial device) / omp_pause_resource_all(kind), outside every parallel
// region (else -1, as libgomp): the teams' thread pools not in use are shut down (their threads
// joined, their memory unmapped) and start again at the next region that needs them; both kinds
// do this, as libgomp does for the host. Threadprivate copies of the pools' threads end with them.
#include "omp_internal.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

extern "C" {
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_level(void);
int omp_get_ancestor_thread_num(int);
int omp_get_team_num(void);
int omp_get_num_teams(void);
int omp_get_initial_device(void);
int omp_pause_resource_all(int kind);
}

namespace plait::omp {
namespace {

std::mutex format_mu;
std::string* format_icv = nullptr;  // never freed (read by threads that may outlive destructors)

std::string current_format() {
  std::lock_guard<std::mutex> lk(format_mu);
  if (format_icv == nullptr) format_icv = new std::string(global().affinity_format);
  return *format_icv;
}

[[noreturn]] void bad_format(const std::string& f, const char* what) {
  fatal("affinity format \"%s\": %s (a field is %%[[0].][size]type; types t T L n N a H P i A, or "
        "{team_num} {num_teams} {nesting_level} {thread_num} {num_threads} {ancestor_tnum} {host} "
        "{process_id} {native_thread_id} {thread_affinity}; %%%% is a %%)",
        f.c_str(), what);
}

// The calling thread's CPUs as a list of ranges: 0-3,8.
std::string affinity_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (e > c) out += '-' + std::to_string(e);
    c = e;
  }
  return out;
}

// The field types, short and long.
constexpr struct {
  const char* name;
  char type;
} field_types[] = {{"team_num", 't'},         {"num_teams", 'T'},  {"nesting_level", 'L'}, {"thread_num", 'n'},
                   {"num_threads", 'N'},      {"ancestor_tnum", 'a'}, {"host", 'H'},       {"process_id", 'P'},
                   {"native_thread_id", 'i'}, {"thread_affinity", 'A'}};

char type_of_name(const std::string& n) {
  for (const auto& e : field_types)
    if (n == e.name) return e.type;
  return 0;
}

bool is_type(char c) {
  for (const auto& e : field_types)
    if (c == e.type) return true;
  return false;
}

// One field's text (without padding) and whether it is a number (zero padding applies).
std::string field(char type, bool* numeric) {
  *numeric = true;
  switch (type) {
    case 't': return std::to_string(omp_get_team_num());
    case 'T': return std::to_string(omp_get_num_teams());
    case 'L': return std::to_string(omp_get_level());
    case 'n': return std::to_string(omp_get_thread_num());
    case 'N': return std::to_string(omp_get_num_threads());
    case 'a': return std::to_string(omp_get_ancestor_thread_num(omp_get_level() - 1));
    case 'P': return std::to_string(static_cast<long>(getpid()));
    case 'i': {
      char b[32];
      std::snprintf(b, sizeof b, "0x%" PRIxPTR, static_cast<std::uintptr_t>(pthread_self()));
      return b;
    }
    case 'H': {
      *numeric = false;
      char b[256];
      if (gethostname(b, sizeof b) != 0) return "?";
      b[sizeof b - 1] = '\0';
      return b;
    }
    case 'A': *numeric = false; return affinity_list();
    default: return {};
  }
}

constexpr unsigned long max_width = 1ul << 16;

// The format's expansion for the calling thread.
std::string expand(const std::string& f) {
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    ++i;
    if (i < f.size() && f[i] == '%') {
      out += '%';
      continue;
    }
    bool zero = false, right = false;
    if (i < f.size() && f[i] == '0') {
      zero = true;
      ++i;
      if (i >= f.size() || f[i] != '.') bad_format(f, "a leading 0 must be followed by '.'");
    }
    if (i < f.size() && f[i] == '.') {
      right = true;
      ++i;
    }
    unsigned long width = 0;
    const std::size_t digits = i;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
      width = width * 10 + static_cast<unsigned long>(f[i] - '0');
      if (width > max_width) bad_format(f, "a field width above 65536");
      ++i;
    }
    if (right && i == digits) bad_format(f, "'0.' or '.' needs a size after it");
    if (i >= f.size()) bad_format(f, "a field with no type at the end");
    char type = f[i];
    if (type == '{') {
      const std::size_t close = f.find('}', i + 1);
      if (close == std::string::npos) bad_format(f, "a long field name with no closing '}'");
      type = type_of_name(f.substr(i + 1, close - i - 1));
      if (type == 0) bad_format(f, ("unknown long field name '" + f.substr(i + 1, close - i - 1) + "'").c_str());
      i = close;
    } else if (!is_type(type)) {
      bad_format(f, (std::string("unknown field type '") + type + "'").c_str());
    }
    bool numeric = false;
    std::string v = field(type, &numeric);
    if (v.size() < width) {
      const std::size_t pad = width - v.size();
      if (!right) {
        v.append(pad, ' ');
      } else if (zero && numeric) {
        // zeros after the sign, or after 0x
        const std::size_t at = (v[0] == '-') ? 1 : (v.size() > 1 && v[0] == '0' && v[1] == 'x') ? 2 : 0;
        v.insert(at, pad, '0');
      } else {
        v.insert(0, pad, ' ');
      }
    }
    out += v;
  }
  return out;
}

// Copies s into buf (at most size - 1 characters and a terminating NUL, when size > 0) and
// returns its whole length.
std::size_t copy_out(const std::string& s, char* buf, std::size_t size) {
  if (buf != nullptr && size > 0) {
    const std::size_t n = s.size() < size - 1 ? s.size() : size - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

void print_line(const std::string& s) {
  std::string line = s + '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write per line: lines of threads do not mix
  std::fflush(stderr);
}

// This thread's last OMP_DISPLAY_AFFINITY line (freed when the thread ends: a paused pool's
// threads do).
thread_local bool displayed = false;
thread_local std::string last_displayed;

}  // namespace

std::string affinity_format_icv() { return current_format(); }

void set_affinity_format_icv(std::string format) {
  std::lock_guard<std::mutex> lk(format_mu);
  if (format_icv == nullptr) format_icv = new std::string;
  *format_icv = std::move(format);
}

std::string affinity_text(const std::string& format) { return expand(format.empty() ? current_format() : format); }

void print_affinity_line(const std::string& line) { print_line(line); }

void display_affinity_on_entry() {
  std::string s = expand(current_format());
  if (displayed && last_displayed == s) return;
  displayed = true;
  last_displayed = s;
  print_line(s);
}

}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

void omp_set_affinity_format(const char* format) { set_affinity_format_icv(format != nullptr ? format : ""); }

size_t omp_get_affinity_format(char* buffer, size_t size) { return copy_out(current_format(), buffer, size); }

void omp_display_affinity(const char* format) { print_line(affinity_text(format != nullptr ? format : "")); }

size_t omp_capture_affinity(char* buffer, size_t size, const char* format) {
  return copy_out(affinity_text(format != nullptr ? format : ""), buffer, size);
}

// kind: omp_pause_soft (1) or omp_pause_hard (2); the device: the host (omp_get_initial_device(),
// or -1, OpenMP 5.1's omp_initial_device). 0 when done; -1 for another device or kind, or inside
// a parallel region (active or not).
int omp_pause_resource(int kind, int device_num) {
  if (device_num != omp_get_initial_device() && device_num != -1) return -1;
  return omp_pause_resource_all(kind);
}

int omp_pause_resource_all(int kind) {
  if (kind != 1 && kind != 2) return -1;
  if (thread_state().level != 0) return -1;
  release_idle_pools();
  return 0;
}

}  // extern "C"
