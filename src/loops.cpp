// The out-of-line parts of plait/parallel_for.hpp: partitioner names and parsing, and the errors.
#include "pool_impl.hpp"

#include <plait/parallel_for.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace plait {

namespace detail {

void bad_partitioner_arg(const char* what, std::int64_t v) {
  throw std::invalid_argument(std::string("plait::") + what + " = " + std::to_string(v) +
                              " is not valid; accepted: an integer >= 1");
}

void bad_range(const char* what, std::int64_t b, std::int64_t e) {
  if (e < b)
    throw std::invalid_argument(std::string(what) + ": reversed range [" + std::to_string(b) + ", " +
                                std::to_string(e) + "); accepted: begin <= end (an empty range is a no-op)");
  throw std::invalid_argument(std::string(what) + ": range [" + std::to_string(b) + ", " + std::to_string(e) +
                              ") has more than 2^63-1 iterations");
}

unsigned workers_of(const Worker* w) noexcept { return w->pool != nullptr ? w->pool->n : 1u; }

}  // namespace detail

std::string partitioner::name() const {
  switch (kind_) {
    case kind::static_: return "static";
    case kind::dynamic: return "dynamic:" + std::to_string(param_);
    case kind::guided: return "guided:" + std::to_string(param_);
    case kind::grainsize: return "grainsize:" + std::to_string(param_);
    case kind::num_tasks: return "num_tasks:" + std::to_string(param_);
    case kind::recursive: return "recursive:" + std::to_string(param_);
    case kind::adaptive: return "adaptive";
  }
  return "?";
}

partitioner parse_partitioner(std::string_view spec) {
  const std::string accepted =
      "accepted: static, dynamic:C, guided:C, grainsize:G, num_tasks:N, recursive:G, adaptive (C, G, N integers >= 1)";
  std::string s(spec);
  auto bad = [&]() -> partitioner {
    throw std::invalid_argument("plait: partitioner '" + s + "' is not valid; " + accepted);
  };
  if (s == "static") return static_partition();
  if (s == "adaptive") return adaptive_partition();
  auto colon = s.find(':');
  if (colon == std::string::npos) return bad();
  std::string name = s.substr(0, colon), num = s.substr(colon + 1);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) return bad();
  errno = 0;
  unsigned long long v = std::strtoull(num.c_str(), nullptr, 10);
  if (errno == ERANGE || v < 1 || v > static_cast<unsigned long long>(INT64_MAX)) return bad();
  auto x = static_cast<std::int64_t>(v);
  if (name == "dynamic") return dynamic_partition(x);
  if (name == "guided") return guided_partition(x);
  if (name == "grainsize") return taskloop_grainsize(x);
  if (name == "num_tasks") return taskloop_num_tasks(x);
  if (name == "recursive") return recursive_partition(x);
  return bad();
}

}  // namespace plait
