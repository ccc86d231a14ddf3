// Compiler helpers shared by every Plait header.
#pragma once

#define PLAIT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PLAIT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PLAIT_COLD [[gnu::cold]] [[gnu::noinline]]
#define PLAIT_NOINLINE [[gnu::noinline]]
#define PLAIT_INLINE [[gnu::always_inline]] inline

// Invariants of the runtime's protocols, checked in debug builds (NDEBUG unset); nothing in
// release builds. A failed check prints the condition and its place, then aborts.
#ifdef NDEBUG
#define PLAIT_ASSERT(cond) ((void)0)
#else
#define PLAIT_ASSERT(cond) ((cond) ? (void)0 : ::plait::detail::assert_failed(#cond, __FILE__, __LINE__))
#endif

namespace plait {
namespace detail {
[[noreturn]] void assert_failed(const char* cond, const char* file, int line) noexcept;
}
// Size of a cache line on the machines we target; owner-only and thief-visible state never share one.
inline constexpr unsigned cache_line = 64;
}  // namespace plait
