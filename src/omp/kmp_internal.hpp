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
//   kmp_task.cpp      tasks (libomp's task descriptor inside a task record, or around a GOMP
//                     task record: see there), dependences,
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
PLAIT_COLD kmp_int32 assign_global_tid() noexcept;
PLAIT_INLINE kmp_int32 global_tid() noexcept {
  const kmp_int32 g = tls.gtid;
  return PLAIT_LIKELY(g >= 0) ? g : assign_global_tid();
}
// How many threads have a global thread number.
kmp_int32 known_threads() noexcept;


// ---- task descriptors (kmp_task.cpp; the fast way's allocation in task.cpp) ----

using kmp_routine_entry_t = kmp_int32 (*)(kmp_int32, void*);

struct kmp_task_t {
  void* shareds;
  kmp_routine_entry_t routine;
  kmp_int32 part_id;
  union {
    kmp_int32 priority;
    kmp_routine_entry_t destructors;
  } data1;
  union {
    kmp_int32 priority;
    kmp_routine_entry_t destructors;
  } data2;
};
static_assert(sizeof(kmp_task_t) == 40);

// kmp_tasking_flags_t's compiler bits.
inline constexpr kmp_int32 kf_tied = 0x1, kf_final = 0x2, kf_destructors = 0x8, kf_priority = 0x20,
                           kf_detachable = 0x40;

// Every descriptor has these 32 bytes right before it (the compiler never touches memory before
// the task pointer): kmp_task.cpp's.
struct KmpTail {
  kmp_task_t* task;          // the descriptor (first: a fast record's argument block starts with it)
  void* ext;                 // a Header's descriptor: the Header; a fast one: its undeferred frame
  kmp_int32 flags;           // the compiler's kmp_tasking_flags_t
  std::uint32_t task_bytes;  // from the descriptor's start to the end of the shareds block
  std::uint32_t shareds_off; // from the descriptor's start (0: no shareds block)
  bool fast;                 // in a task.cpp record (descriptor_alloc_fast), else after a Header
  bool running;              // the body runs (a descriptor handed back now is an untied task's next part)
  bool resubmit;             // an untied part handed the descriptor back
};
static_assert(sizeof(KmpTail) == 32);

// A task the fast way may take (kmp_task.cpp, "fast"): tied or untied, with or without
// destructors, nothing else.
inline constexpr kmp_int32 kf_fast = kf_tied | kf_destructors;

// __kmpc_omp_task_alloc: descriptor_alloc_fast (task.cpp) makes a fast descriptor in a task record
// when it can and otherwise tail-calls descriptor_alloc_general (kmp_task.cpp), so that neither
// the entry point nor the fast way saves a register. fast_descriptor_body: a fast descriptor's record's
// routine (kmp_task.cpp).
void* descriptor_alloc_fast(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds, void* routine) noexcept;
void* descriptor_alloc_general(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds, void* routine);
void fast_descriptor_body(void* arg);
// __kmpc_omp_task: descriptor_submit (task.cpp) pushes a fast descriptor's record as GOMP_task's
// fast path does, and otherwise tail-calls descriptor_submit_general (kmp_task.cpp: an untied
// task's next part, a descriptor after a Header, a fast one the fast path refused).
kmp_int32 descriptor_submit(void* task) noexcept;
kmp_int32 descriptor_submit_general(void* task) noexcept;

}  // namespace plait::omp
