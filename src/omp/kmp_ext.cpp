// libomp's ABI: the user extensions LLVM's omp.h declares (kmp_*), their kmpc_* and ompc_* forms,
// the __kmpc_ lock and allocator entry points, the omp_* routines only libomp has, and the nestable
// lock in libomp's layout (kmp_internal.hpp).
//
// What the extensions do here:
//   kmp_set_stacksize[_s]     the stack size of the threads of teams started afterwards (libomp:
//                             before the first region only; here any pool made later)
//   kmp_set_blocktime, kmp_set_library*, kmp_set_disp_num_buffers, kmp_set_warnings_*
//                             accepted and without effect: Plait's idle workers follow their own
//                             policy (OMP_WAIT_POLICY; docs/design.md, "Sleeping"), its worksharing
//                             ring has a fixed size; the getters answer what libomp would
//   kmp_set_defaults          "NAME=value": set in the environment, so an OMP_* / PLAIT_* variable
//                             takes effect if the runtime has not read it yet (libomp's rule)
//   affinity masks            cpu_set_t masks; kmp_set_affinity binds the calling thread
//   kmp_malloc and kin        the C library's allocator
//
// The nestable lock. LLVM's omp.h makes omp_nest_lock_t one pointer (8 bytes); gcc's is 16 bytes,
// and the omp_*_nest_lock functions of libgomp's ABI use all of them. At libomp's version node the
// lock word holds a pointer to a gcc-layout lock (allocated by omp_init_nest_lock@VERSION). The
// simple lock needs nothing: gcc's is 4 bytes, libomp's 8.
#include "kmp_internal.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
void omp_set_num_threads(int);
void omp_set_dynamic(int);
void omp_set_nested(int);
void omp_set_max_active_levels(int);
void omp_set_schedule(int, int);
int omp_get_ancestor_thread_num(int);
int omp_get_team_size(int);
void omp_set_affinity_format(const char*);
std::size_t omp_get_affinity_format(char*, std::size_t);
void omp_display_affinity(const char*);
std::size_t omp_capture_affinity(char*, std::size_t, const char*);
void omp_init_lock(void*);
void omp_destroy_lock(void*);
void omp_set_lock(void*);
void omp_unset_lock(void*);
int omp_test_lock(void*);
void omp_init_nest_lock(void*);
void omp_destroy_nest_lock(void*);
void omp_set_nest_lock(void*);
void omp_unset_nest_lock(void*);
int omp_test_nest_lock(void*);
void* omp_alloc(std::size_t, std::uintptr_t);
void* omp_aligned_alloc(std::size_t, std::size_t, std::uintptr_t);
void* omp_calloc(std::size_t, std::size_t, std::uintptr_t);
void* omp_realloc(void*, std::size_t, std::uintptr_t, std::uintptr_t);
void omp_free(void*, std::uintptr_t);
std::uintptr_t omp_init_allocator(std::uintptr_t, int, const void*);
void omp_destroy_allocator(std::uintptr_t);
void omp_set_default_allocator(std::uintptr_t);
std::uintptr_t omp_get_default_allocator(void);
plait::omp::kmp_int32 __kmpc_cancellationpoint(plait::omp::ident_t*, plait::omp::kmp_int32, plait::omp::kmp_int32);
int omp_pause_resource_all(int);
}

// A function of libomp's version node defined here under its own name (see the top): the generator
// (scripts/gen_omp_abi.py) leaves these names out of its jumps.
#define PLAIT_AT_VERSION(name) __asm__(".symver plait_kmpv_" #name ", " #name "@VERSION")

namespace plait::omp {
namespace {
std::atomic<std::size_t> stacksize_request{0};  // relaxed: read when a pool is made
std::atomic<int> blocktime_ms{200};
std::atomic<int> library_mode{3};  // libomp's library_throughput

// kmp_affinity_mask_t: a pointer to a cpu_set_t of ours.
cpu_set_t* mask_of(void** mask) {
  if (mask == nullptr || *mask == nullptr) return nullptr;
  return static_cast<cpu_set_t*>(*mask);
}
}  // namespace

std::size_t requested_stacksize() {
  const std::size_t s = stacksize_request.load(std::memory_order_relaxed);
  return s != 0 ? s : global().stacksize;
}

}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

// ---- ompc_*: the omp_* routines under libomp's other names ----
void ompc_set_num_threads(int n) { omp_set_num_threads(n); }
void ompc_set_dynamic(int v) { omp_set_dynamic(v); }
void ompc_set_nested(int v) { omp_set_nested(v); }
void ompc_set_max_active_levels(int v) { omp_set_max_active_levels(v); }
void ompc_set_schedule(int kind, int chunk) { omp_set_schedule(kind, chunk); }
int ompc_get_ancestor_thread_num(int level) { return omp_get_ancestor_thread_num(level); }
int ompc_get_team_size(int level) { return omp_get_team_size(level); }
void ompc_set_affinity_format(const char* f) { omp_set_affinity_format(f); }
std::size_t ompc_get_affinity_format(char* buf, std::size_t size) { return omp_get_affinity_format(buf, size); }
void ompc_display_affinity(const char* f) { omp_display_affinity(f); }
std::size_t ompc_capture_affinity(char* buf, std::size_t size, const char* f) { return omp_capture_affinity(buf, size, f); }

// ---- stack size, blocktime, library mode ----
int kmp_get_stacksize(void) { return static_cast<int>(requested_stacksize()); }
std::size_t kmp_get_stacksize_s(void) { return requested_stacksize(); }
void kmp_set_stacksize_s(std::size_t s) { stacksize_request.store(s < (64u << 10) ? (64u << 10) : s, std::memory_order_relaxed); }
void kmp_set_stacksize(int s) { kmp_set_stacksize_s(s > 0 ? static_cast<std::size_t>(s) : 0); }
void kmpc_set_stacksize(int s) { kmp_set_stacksize(s); }
void kmpc_set_stacksize_s(std::size_t s) { kmp_set_stacksize_s(s); }
int kmp_get_blocktime(void) { return blocktime_ms.load(std::memory_order_relaxed); }
void kmp_set_blocktime(int ms) { blocktime_ms.store(ms, std::memory_order_relaxed); }
void kmpc_set_blocktime(int ms) { kmp_set_blocktime(ms); }
int kmp_get_library(void) { return global().wait_active ? 2 : library_mode.load(std::memory_order_relaxed); }
void kmp_set_library(int mode) { library_mode.store(mode, std::memory_order_relaxed); }
void kmpc_set_library(int mode) { kmp_set_library(mode); }
void kmp_set_library_serial(void) { kmp_set_library(1); }
void kmp_set_library_turnaround(void) { kmp_set_library(2); }
void kmp_set_library_throughput(void) { kmp_set_library(3); }
void kmp_set_disp_num_buffers(int) {}
void kmpc_set_disp_num_buffers(int) {}
void kmp_set_warnings_on(void) {}
void kmp_set_warnings_off(void) {}

void kmp_set_defaults(const char* str) {
  if (str == nullptr) return;
  const std::string s(str);
  const std::size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    fatal("kmp_set_defaults: '%s' is not NAME=value", str);
  setenv(s.substr(0, eq).c_str(), s.substr(eq + 1).c_str(), 1);
}
void kmpc_set_defaults(const char* str) { kmp_set_defaults(str); }

int kmp_get_cancellation_status(int kind) { return __kmpc_cancellationpoint(nullptr, 0, kind); }
int kmp_get_num_known_threads(void) { return known_threads(); }

// ---- affinity masks ----
void kmp_create_affinity_mask(void** mask) {
  auto* set = static_cast<cpu_set_t*>(std::malloc(sizeof(cpu_set_t)));
  if (set == nullptr) fatal("out of memory for an affinity mask");
  CPU_ZERO(set);
  *mask = set;
}
void kmp_destroy_affinity_mask(void** mask) {
  std::free(*mask);
  *mask = nullptr;
}
int kmp_set_affinity_mask_proc(int proc, void** mask) {
  cpu_set_t* set = mask_of(mask);
  if (set == nullptr || proc < 0 || proc >= CPU_SETSIZE) return -1;
  CPU_SET(proc, set);
  return 0;
}
int kmp_unset_affinity_mask_proc(int proc, void** mask) {
  cpu_set_t* set = mask_of(mask);
  if (set == nullptr || proc < 0 || proc >= CPU_SETSIZE) return -1;
  CPU_CLR(proc, set);
  return 0;
}
int kmp_get_affinity_mask_proc(int proc, void** mask) {
  cpu_set_t* set = mask_of(mask);
  if (set == nullptr || proc < 0 || proc >= CPU_SETSIZE) return -1;
  return CPU_ISSET(proc, set) ? 1 : 0;
}
int kmpc_set_affinity_mask_proc(int proc, void** mask) { return kmp_set_affinity_mask_proc(proc, mask); }
int kmpc_unset_affinity_mask_proc(int proc, void** mask) { return kmp_unset_affinity_mask_proc(proc, mask); }
int kmpc_get_affinity_mask_proc(int proc, void** mask) { return kmp_get_affinity_mask_proc(proc, mask); }
int kmp_set_affinity(void** mask) {
  cpu_set_t* set = mask_of(mask);
  if (set == nullptr || CPU_COUNT(set) == 0) return -1;
  return pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), set) == 0 ? 0 : -1;
}
int kmp_get_affinity(void** mask) {
  cpu_set_t* set = mask_of(mask);
  if (set == nullptr) return -1;
  return pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), set) == 0 ? 0 : -1;
}
int kmp_get_affinity_max_proc(void) {
  int m = 0;
  for (int c : initial_cpus()) m = c + 1 > m ? c + 1 : m;
  return m;
}
int kmp_set_thread_affinity_mask_initial(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : initial_cpus()) CPU_SET(c, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
}

// ---- memory ----
void* kmp_malloc(std::size_t n) { return std::malloc(n); }
void* kmp_calloc(std::size_t n, std::size_t s) { return std::calloc(n, s); }
void* kmp_realloc(void* p, std::size_t n) { return std::realloc(p, n); }
void kmp_free(void* p) { std::free(p); }
void* kmp_aligned_malloc(std::size_t size, std::size_t alignment) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return nullptr;
  void* p = nullptr;
  return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}
void* kmpc_malloc(std::size_t n) { return kmp_malloc(n); }
void* kmpc_calloc(std::size_t n, std::size_t s) { return kmp_calloc(n, s); }
void* kmpc_realloc(void* p, std::size_t n) { return kmp_realloc(p, n); }
void kmpc_free(void* p) { kmp_free(p); }
void* kmpc_aligned_malloc(std::size_t size, std::size_t alignment) { return kmp_aligned_malloc(size, alignment); }

// ---- allocators (depobj storage, the allocate directive and clause) ----
void* __kmpc_alloc(int, std::size_t size, std::uintptr_t al) { return omp_alloc(size, al); }
void* __kmpc_aligned_alloc(int, std::size_t align, std::size_t size, std::uintptr_t al) {
  return omp_aligned_alloc(align, size, al);
}
void* __kmpc_calloc(int, std::size_t nmemb, std::size_t size, std::uintptr_t al) { return omp_calloc(nmemb, size, al); }
void* __kmpc_realloc(int, void* p, std::size_t size, std::uintptr_t al, std::uintptr_t free_al) {
  return omp_realloc(p, size, al, free_al);
}
void __kmpc_free(int, void* p, std::uintptr_t al) { omp_free(p, al); }
std::uintptr_t __kmpc_init_allocator(int, std::uintptr_t memspace, int ntraits, const void* traits) {
  return omp_init_allocator(memspace, ntraits, traits);
}
void __kmpc_destroy_allocator(int, std::uintptr_t al) { omp_destroy_allocator(al); }
void __kmpc_set_default_allocator(int, std::uintptr_t al) { omp_set_default_allocator(al); }
std::uintptr_t __kmpc_get_default_allocator(int) { return omp_get_default_allocator(); }

// ---- the nestable lock in libomp's layout (see the top) ----
void plait_kmpv_omp_init_nest_lock(void** lock) {
  void* gcc_lock = std::calloc(1, 16);
  if (gcc_lock == nullptr) fatal("out of memory for a nestable lock");
  nest_lock_init(gcc_lock, lock);
  *lock = gcc_lock;
}
PLAIT_AT_VERSION(omp_init_nest_lock);
void plait_kmpv_omp_destroy_nest_lock(void** lock) {
  if (*lock == nullptr) return;
  nest_lock_destroy(*lock, lock);
  std::free(*lock);
  *lock = nullptr;
}
PLAIT_AT_VERSION(omp_destroy_nest_lock);
void plait_kmpv_omp_set_nest_lock(void** lock) {
  if (*lock == nullptr) fatal("omp_set_nest_lock: a lock that was not initialised");
  nest_lock_set(*lock, lock);
}
PLAIT_AT_VERSION(omp_set_nest_lock);
void plait_kmpv_omp_unset_nest_lock(void** lock) {
  if (*lock == nullptr) fatal("omp_unset_nest_lock: a lock that was not initialised");
  nest_lock_unset(*lock, lock);
}
PLAIT_AT_VERSION(omp_unset_nest_lock);
int plait_kmpv_omp_test_nest_lock(void** lock) {
  if (*lock == nullptr) fatal("omp_test_nest_lock: a lock that was not initialised");
  return nest_lock_test(*lock, lock);
}
PLAIT_AT_VERSION(omp_test_nest_lock);
void omp_init_nest_lock_with_hint(void** lock, int) { plait_kmpv_omp_init_nest_lock(lock); }
void omp_init_lock_with_hint(void* lock, int) { omp_init_lock(lock); }

// ---- __kmpc_ locks (the user lock entry points libomp exports; clang calls omp_* instead) ----
// KMPC_LOCK(x): __kmpc_x(ident_t*, kmp_int32, void** l), returning omp_x(l); KMPC_NEST_LOCK(x) the
// same forwarding to libomp's nestable lock, plait_kmpv_omp_x (scripts/gen_omp_abi.py reads each
// invocation as the definition of __kmpc_x).
#define KMPC_LOCK(x) \
  auto __kmpc_##x(ident_t*, kmp_int32, void** l) -> decltype(omp_##x(l)) { return omp_##x(l); }
#define KMPC_NEST_LOCK(x)                                                              \
  auto __kmpc_##x(ident_t*, kmp_int32, void** l) -> decltype(plait_kmpv_omp_##x(l)) { \
    return plait_kmpv_omp_##x(l);                                                      \
  }
KMPC_LOCK(init_lock)
void __kmpc_init_lock_with_hint(ident_t*, kmp_int32, void** l, kmp_uint32) { omp_init_lock(l); }
KMPC_LOCK(destroy_lock)
KMPC_LOCK(set_lock)
KMPC_LOCK(unset_lock)
KMPC_LOCK(test_lock)
KMPC_NEST_LOCK(init_nest_lock)
void __kmpc_init_nest_lock_with_hint(ident_t*, kmp_int32, void** l, kmp_uint32) { plait_kmpv_omp_init_nest_lock(l); }
KMPC_NEST_LOCK(destroy_nest_lock)
KMPC_NEST_LOCK(set_nest_lock)
KMPC_NEST_LOCK(unset_nest_lock)
KMPC_NEST_LOCK(test_nest_lock)

// ---- omp_* routines only libomp has ----
int omp_in_explicit_task(void) {
  const Thread& t = thread_state();
  return t.task != nullptr && t.task->is_explicit ? 1 : 0;
}
// omp_control_tool_notool (-2) without a tool; with one, omp_control_tool_nocallback (-1): this
// runtime delivers no control_tool callback (docs/openmp.md, "Tools (OMPT)").
int omp_control_tool(int, int, void*) { return ompt::enabled ? -1 : -2; }

// ---- task ids (libomp's, for its debuggers and tools): the task context's address ----
kmp_uint64 __kmpc_get_taskid(void) { return reinterpret_cast<kmp_uint64>(thread_state().task); }
kmp_uint64 __kmpc_get_parent_taskid(void) {
  const TaskCtx* c = thread_state().task;
  return c != nullptr ? reinterpret_cast<kmp_uint64>(c->parent) : 0;
}
// OMP_TARGET_OFFLOAD in libomp's values (0 disabled, 1 default, 2 mandatory).
int __kmpc_get_target_offload(void) {
  switch (global().target_offload) {
    case target_offload_disabled: return 0;
    case target_offload_mandatory: return 2;
    default: return 1;
  }
}
int __kmpc_pause_resource(int kind) { return omp_pause_resource_all(kind); }

}  // extern "C"
