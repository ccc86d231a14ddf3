// Stress mode: with PLAIT_STRESS=1 every protocol point (between a thief's read of the deque
// bounds and its CAS, before the owner's split CAS, before a publish, inside join and group waits)
// yields the CPU with probability 1/4, widening the race windows that the tests try to hit.
#include "pool_impl.hpp"

#include <sched.h>

#include <cstdlib>
#include <cstring>

namespace plait::detail {

// Read once, before main; only "1" turns it on. Unset, empty and "0" leave it off, and any other
// value is refused by pool_options::from_env (src/env.cpp) when a pool is created, since a static
// initialiser has nobody to report an error to.
static bool read_stress_env() {
  const char* s = std::getenv("PLAIT_STRESS");
  return s != nullptr && std::strcmp(s, "1") == 0;
}

bool g_stress = read_stress_env();

void stress_yield() noexcept {
  // A per-thread xorshift; the quality does not matter, only that threads differ.
  static thread_local std::uint32_t x = 0;
  if (x == 0) x = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&x)) | 1u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  if ((x & 3u) == 0) sched_yield();
}

}  // namespace plait::detail
