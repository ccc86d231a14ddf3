// pool_options::from_env — the environment variables a user can set, each checked strictly:
// a malformed value is a one-line std::invalid_argument naming the variable and what is accepted.
//
//   PLAIT_NUM_THREADS   workers, 1..1024 (else OMP_NUM_THREADS's first entry, else the CPU count)
//   PLAIT_PIN           none | cores
//   PLAIT_IDLE          sleep | spin
//   PLAIT_STEAL         one | chunk:K (1..2^20) | half | adaptive
//   PLAIT_STACK_SIZE    worker stack in bytes, suffix K/M/G allowed, 64K..64G
//   PLAIT_GROUP_THROTTLE  off | 1..2^30: private tasks past which task_group::run runs a child at once
//   PLAIT_POLL_US         1..10^7: the polling services' period in microseconds (default 100)
//   PLAIT_STRESS        0 | 1 | empty (0 and empty: off); read by stress.cpp, checked here
//
// A field of pool_options that is set wins over its variable, which is then not read at all.
#include "pool_impl.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace plait {

[[noreturn]] static void bad(const char* var, const std::string& val, const std::string& accepted) {
  throw std::invalid_argument(std::string("plait: ") + var + "='" + val + "' is not valid; accepted: " + accepted);
}

// A count in 1..max written as `digits` (the whole value `val` is what the error message quotes).
// Strict: digits only; signs and surrounding spaces are refused too.
static unsigned long long parse_count(const char* var, const std::string& val, const std::string& digits,
                                      unsigned long long max, const std::string& accepted) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) bad(var, val, accepted);
  errno = 0;
  unsigned long long x = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno == ERANGE || x < 1 || x > max) bad(var, val, accepted);
  return x;
}

static unsigned parse_workers(const char* var, std::string val) {
  if (std::string(var) == "OMP_NUM_THREADS") {
    auto comma = val.find(',');  // nested lists "4,2": the outer level is ours
    if (comma != std::string::npos) val = val.substr(0, comma);
  }
  return static_cast<unsigned>(parse_count(var, val, val, max_workers, "an integer in 1.." + std::to_string(max_workers)));
}

static std::size_t parse_size(const char* var, const std::string& val) {
  const std::string accepted = "a byte count 64K..64G, optionally with suffix K, M or G (e.g. 512M)";
  constexpr unsigned long long lo = 64ull << 10, hi = 64ull << 30;
  std::size_t i = 0;
  unsigned long long x = 0;
  // The number saturates once it is above the maximum, so that no digit string, however long,
  // can wrap around into the accepted range (neither here nor in the shift below).
  for (; i < val.size() && val[i] >= '0' && val[i] <= '9'; ++i)
    if (x <= hi) x = x * 10 + static_cast<unsigned>(val[i] - '0');
  if (i == 0) bad(var, val, accepted);
  const std::string suf = val.substr(i);
  unsigned shift = 0;
  if (suf == "K" || suf == "k")
    shift = 10;
  else if (suf == "M" || suf == "m")
    shift = 20;
  else if (suf == "G" || suf == "g")
    shift = 30;
  else if (!suf.empty())
    bad(var, val, accepted);
  if (x > (hi >> shift)) bad(var, val, accepted);
  x <<= shift;
  if (x < lo) bad(var, val, accepted);
  return static_cast<std::size_t>(x);
}

// A policy variable with two values: `first` when it is unset or names `first_name`, `second` when
// it names `second_name`; anything else is refused.
template <class E>
static E parse_either(const char* var, const char* first_name, E first, const char* second_name, E second) {
  const char* v = std::getenv(var);
  if (v == nullptr) return first;
  const std::string s = v;
  if (s == second_name) return second;
  if (s != first_name) bad(var, s, std::string(first_name) + ", " + second_name);
  return first;
}

// A policy set in pool_options must be one of its enumerators: an enum class holds any value of
// its underlying type, e.g. static_cast<steal_policy>(9). The enumerators run from 0 to `last`.
template <class E>
static void check_enum(const char* field, const char* type, std::optional<E> v, E last, const char* accepted) {
  if (!v) return;
  const auto x = static_cast<std::underlying_type_t<E>>(*v);
  if (x < 0 || x > static_cast<std::underlying_type_t<E>>(last))
    throw std::invalid_argument(std::string("plait: ") + field + " = " + std::to_string(x) + " is out of range for " +
                                type + "; accepted: " + accepted);
}

static unsigned hardware_cpus() {
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) == 0) {
    int c = CPU_COUNT(&s);
    if (c > 0) return static_cast<unsigned>(c);
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? static_cast<unsigned>(c) : 1u;
}

pool_options pool_options::from_env() { return from_env(pool_options{}); }

pool_options pool_options::from_env(pool_options o) {
  if (o.num_workers == 0) {
    if (const char* v = std::getenv("PLAIT_NUM_THREADS"))
      o.num_workers = parse_workers("PLAIT_NUM_THREADS", v);
    else if (const char* w = std::getenv("OMP_NUM_THREADS"))
      o.num_workers = parse_workers("OMP_NUM_THREADS", w);
    else
      o.num_workers = std::min(hardware_cpus(), max_workers);
  } else if (o.num_workers > max_workers) {
    throw std::invalid_argument("plait: num_workers " + std::to_string(o.num_workers) + " is out of range; accepted 1.." +
                                std::to_string(max_workers));
  }
  check_enum("pin", "pin_policy", o.pin, pin_policy::cores, "none, cores");
  check_enum("idle", "idle_policy", o.idle, idle_policy::spin, "sleep, spin");
  check_enum("steal", "steal_policy", o.steal, steal_policy::adaptive, "one, chunk, half, adaptive");
  if (!o.pin) o.pin = parse_either("PLAIT_PIN", "none", pin_policy::none, "cores", pin_policy::cores);
  if (o.places.empty())
    if (const char* v = std::getenv("PLAIT_PLACES"); v != nullptr && *v != '\0') o.places = v;
  if (!o.idle) o.idle = parse_either("PLAIT_IDLE", "sleep", idle_policy::sleep, "spin", idle_policy::spin);
  if (!o.steal) {
    o.steal = steal_policy::one;
    if (const char* v = std::getenv("PLAIT_STEAL")) {
      std::string s = v;
      const char* accepted = "one, chunk:K (K in 1..1048576), half, adaptive";
      if (s == "one") {
        o.steal = steal_policy::one;
      } else if (s == "half") {
        o.steal = steal_policy::half;
      } else if (s == "adaptive") {
        o.steal = steal_policy::adaptive;
      } else if (s.rfind("chunk:", 0) == 0) {
        o.steal = steal_policy::chunk;
        o.steal_chunk = static_cast<std::size_t>(parse_count("PLAIT_STEAL", s, s.substr(6), 1u << 20, accepted));
      } else {
        bad("PLAIT_STEAL", s, accepted);
      }
    }
  }
  if (o.steal_chunk < 1 || o.steal_chunk > (std::size_t{1} << 20))
    throw std::invalid_argument("plait: steal_chunk " + std::to_string(o.steal_chunk) +
                                " is out of range; accepted: 1..1048576");
  if (o.stack_size == 0) {
    if (const char* v = std::getenv("PLAIT_STACK_SIZE"))
      o.stack_size = parse_size("PLAIT_STACK_SIZE", v);
    else
      o.stack_size = std::size_t{1} << 30;
  } else if (o.stack_size < (64u << 10)) {
    throw std::invalid_argument("plait: stack_size " + std::to_string(o.stack_size) + " is below the minimum 65536");
  }
  if (o.deque_capacity == 0) o.deque_capacity = std::size_t{1} << 21;
  // Stress mode is a process-wide switch that stress.cpp reads once, when the first pool is made;
  // a malformed value is refused here first, so that no pool runs with it.
  if (const char* v = std::getenv("PLAIT_STRESS")) {
    std::string s = v;
    if (!s.empty() && s != "0" && s != "1") bad("PLAIT_STRESS", s, "0 (off), 1 (on), empty (off)");
  }
  if (o.group_throttle == 0) {
    if (const char* v = std::getenv("PLAIT_GROUP_THROTTLE")) {
      std::string s = v;
      o.group_throttle = s == "off" ? pool_options::group_throttle_off
                                    : static_cast<std::size_t>(parse_count("PLAIT_GROUP_THROTTLE", s, s, 1u << 30,
                                                                           "off or a count in 1..1073741824"));
    } else {
      o.group_throttle = 1024;
    }
  } else if (o.group_throttle != pool_options::group_throttle_off && o.group_throttle > (std::size_t{1} << 30)) {
    throw std::invalid_argument("plait: group_throttle " + std::to_string(o.group_throttle) +
                                " is out of range; accepted: 1..1073741824 or group_throttle_off");
  }
  if (o.poll_period_us == 0) {
    if (const char* v = std::getenv("PLAIT_POLL_US")) {
      std::string s = v;
      o.poll_period_us = parse_count("PLAIT_POLL_US", s, s, 10'000'000, "microseconds in 1..10000000");
    } else {
      o.poll_period_us = 100;
    }
  } else if (o.poll_period_us > 10'000'000) {
    throw std::invalid_argument("plait: poll_period_us " + std::to_string(o.poll_period_us) +
                                " is out of range; accepted: 1..10000000 (0: PLAIT_POLL_US, else 100)");
  }
  return o;
}

}  // namespace plait
