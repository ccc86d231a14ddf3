// Stress mode: with PLAIT_STRESS=1 the hook at every protocol point (at_point: between a thief's
// read of the deque bounds and its CAS, before the owner's split RMWs, before a publish, while a
// waiter pauses, before a would-be sleeper's last look) yields the CPU with probability 1/4,
// widening the race windows that the tests try to hit.
#include "pool_impl.hpp"

#include <sched.h>

#include <cstdlib>
#include <cstring>

namespace plait::detail {

static void stress_yield(protocol_point) noexcept {
  // A per-thread xorshift; the quality does not matter, only that threads differ.
  static thread_local std::uint32_t x = 0;
  if (x == 0) x = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&x)) | 1u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  if ((x & 3u) == 0) sched_yield();
}

// Read once, when the first pool is made (a function-local static: thread-safe, and the hook is
// written before any worker of any pool exists). Only "1" turns it on. Unset, empty and "0"
// leave it off; any other value is refused by pool_options::from_env (src/env.cpp).
void stress_init() noexcept {
  static const bool on = [] {
    const char* s = std::getenv("PLAIT_STRESS");
    const bool yes = s != nullptr && std::strcmp(s, "1") == 0;
    if (yes && g_protocol_hook == nullptr) g_protocol_hook = &stress_yield;
    return yes;
  }();
  (void)on;
}

}  // namespace plait::detail
