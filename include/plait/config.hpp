// Compiler helpers shared by every Plait header.
#pragma once

#define PLAIT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PLAIT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PLAIT_COLD [[gnu::cold]] [[gnu::noinline]]
#define PLAIT_NOINLINE [[gnu::noinline]]
#define PLAIT_INLINE [[gnu::always_inline]] inline

// The LIFO-join check is on in debug builds (NDEBUG unset) and whenever PLAIT_CHECK_LIFO is 1.
#ifndef PLAIT_CHECK_LIFO
#ifdef NDEBUG
#define PLAIT_CHECK_LIFO 0
#else
#define PLAIT_CHECK_LIFO 1
#endif
#endif

namespace plait {
// Size of a cache line on the machines we target; owner-only and thief-visible state never share one.
inline constexpr unsigned cache_line = 64;
}  // namespace plait
