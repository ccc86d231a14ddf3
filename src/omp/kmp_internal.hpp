// Internal: the front door's second ABI — libomp's __kmpc_* entry points, as clang (and Intel's and
// LLVM's other compilers) emit them — on the same teams, loops, tasks and waits as the GOMP_*
// entry points (docs/openmp.md, "libomp's ABI"). The layouts and conventions are libomp's
// (LLVM openmp/runtime/src/kmp.h); the survey behind them: docs/notes/2026-11-28-libomp-abi-survey.md.
//
//   kmp_internal.hpp  this file: the ABI's types, the global thread numbers, which ABI was used
//   kmp_team.cpp      fork/join (the microtask's varargs call), teams, the pushed clauses, the
//                     barrier, single, master/masked, critical, reductions, copyprivate, flush,
//                     cancellation, threadprivate, the error directive, thread queries
//   kmp_loop.cpp      static schedules (loops, sections, distribute), dispatch loops, ordered,
//                     doacross
//   kmp_task.cpp      tasks (libomp's task descriptor around a GOMP task record), dependences,
//                     undeferred and untied tasks, taskwait, taskgroup, taskloop, detach, task
//                     reductions
//   kmp_ext.cpp       the kmp_* / kmpc_* / ompc_* user extensions, __kmpc_ locks and allocators
#pragma once

#include "omp_internal.hpp"

#include <atomic>
#include <cstdint>

namespace plait::omp {

using kmp_int32 = std::int32_t;
using kmp_uint32 = std::uint32_t;
using kmp_int64 = std::int64_t;
using kmp_uint64 = std::uint64_t;

// A source location: what clang passes as the first argument of most entry points.
struct ident_t {
  kmp_int32 reserved_1;
  kmp_int32 flags;  // KMP_IDENT_* bits
  kmp_int32 reserved_2;
  kmp_int32 reserved_3;
  const char* psource;  // ";file;function;line;column;;"
};
inline constexpr kmp_int32 ident_atomic_reduce = 0x10;  // the compiler emitted the atomic reduction path

using kmpc_micro = void (*)(kmp_int32* gtid, kmp_int32* btid, ...);
using kmp_critical_name = kmp_int32[8];  // 32 zeroed bytes per critical name, the runtime's to use

// The global thread number libomp's compilers pass back to the runtime: an opaque token to them,
// here a number per thread, 0 for the thread that loaded the library (kmp_team.cpp). Nothing in
// this runtime looks a thread up by it.
kmp_int32 global_tid() noexcept;
// How many threads have a global thread number.
kmp_int32 known_threads() noexcept;

}  // namespace plait::omp
