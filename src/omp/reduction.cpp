// Task reductions (OpenMP 5.0): task_reduction on a taskgroup, reduction on a taskloop, the task
// modifier on parallel, worksharing and scope reductions, and in_reduction on the tasks that take
// part (GOMP_taskgroup_reduction_register / _unregister, GOMP_task_reduction_remap,
// GOMP_parallel_reductions, GOMP_workshare_task_reduction_unregister; the worksharing entry
// points' `reductions` argument, loop.cpp).
//
// The compiler describes the reduction variables of one construct in a block of words:
//   [0] cnt     variables                [1] size    bytes of one thread's private copies
//   [2] align   alignment in; the runtime writes the address of the private copies there
//   [3] allocator (-1: the default)      [4] next    another block of the same construct, or 0
//   [5], [6]    the runtime's            [7 + 3 j]   variable j: its original's address, the
//                                                    offset of its copy, a word for the runtime
// with the variables in increasing offset. The runtime gives every thread of the team (nthreads,
// fixed at registration) one zeroed copy of `size` bytes; thread i's copy of variable j is at
// [2] + i * size + offset_j. The compiler's code initialises a copy on first use (a flag beside
// each variable), and after the construct combines the copies of threads 0..nthreads-1 into the
// originals, then unregisters. The runtime's part at run time is remap: a task with in_reduction
// asks, for each variable, the address of its thread's copy, naming it by the original's address
// or by an address inside some thread's copy (a task made by a task that remapped already).
//
// Here: [5] of a registration's first block holds an index (original address -> its entry, the
// enclosing registrations' entries included, inner ones first), [6] of every block the end of its
// private copies; an entry's third word points to its block. Registrations nest like taskgroups:
// a taskgroup inherits its enclosing taskgroup's registration (Taskgroup::reductions), and a new
// one chains to it through the last block's [4].
#include "omp_internal.hpp"

#include <stdlib.h>  // posix_memalign

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace plait::omp {
namespace {

enum : std::size_t { w_cnt = 0, w_size = 1, w_array = 2, w_next = 4, w_index = 5, w_end = 6, w_entries = 7 };
using Index = std::unordered_map<std::uintptr_t, std::uintptr_t*>;

std::uintptr_t* next_block(const std::uintptr_t* d) noexcept { return reinterpret_cast<std::uintptr_t*>(d[w_next]); }
std::uintptr_t* entry(std::uintptr_t* d, std::size_t j) noexcept { return d + w_entries + 3 * j; }

}  // namespace

void register_task_reductions(std::uintptr_t* data, std::uintptr_t* old, const std::uintptr_t* shared,
                              unsigned nthreads) {
  // The private copies of each block, and the chain's end linked to the enclosing registration.
  for (std::uintptr_t* d = data;; d = next_block(d)) {
    if (shared != nullptr) {
      d[w_array] = shared[w_array];
      d[w_end] = shared[w_end];
      shared = next_block(shared);
    } else {
      const std::size_t size = d[w_size];
      std::size_t align = d[w_array];
      if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
      if ((align & (align - 1)) != 0) fatal("task reduction: alignment %zu is not a power of two", align);
      if (nthreads != 0 && size > (std::size_t{1} << 40) / nthreads)
        fatal("task reduction: %zu bytes per thread for %u threads is too large", size, nthreads);
      const std::size_t bytes = size * nthreads;
      void* p = nullptr;
      if (posix_memalign(&p, align, bytes == 0 ? align : bytes) != 0)
        fatal("out of memory for the private copies of a task reduction (%zu bytes)", bytes);
      std::memset(p, 0, bytes);
      d[w_array] = reinterpret_cast<std::uintptr_t>(p);
      d[w_end] = d[w_array] + bytes;
    }
    d[w_index] = 0;
    if (d[w_next] == 0) {
      d[w_next] = reinterpret_cast<std::uintptr_t>(old);
      break;
    }
  }
  auto* index = new Index;
  if (old != nullptr && old[w_index] != 0) *index = *reinterpret_cast<const Index*>(old[w_index]);
  for (std::uintptr_t* d = data;; d = next_block(d)) {
    for (std::size_t j = 0; j < d[w_cnt]; ++j) {
      std::uintptr_t* e = entry(d, j);
      e[2] = reinterpret_cast<std::uintptr_t>(d);
      (*index)[e[0]] = e;  // an inner registration of the same variable hides the outer one
    }
    if (d[w_next] == reinterpret_cast<std::uintptr_t>(old)) break;
  }
  data[w_index] = reinterpret_cast<std::uintptr_t>(index);
}

void forget_task_reductions(std::uintptr_t* data) noexcept {
  delete reinterpret_cast<Index*>(data[w_index]);
  data[w_index] = 0;
}

void unregister_task_reductions(std::uintptr_t* data) noexcept {
  forget_task_reductions(data);
  // This registration's blocks: up to the enclosing registration's first (its index is set).
  std::uintptr_t* d = data;
  do {
    std::free(reinterpret_cast<void*>(d[w_array]));
    d = next_block(d);
  } while (d != nullptr && d[w_index] == 0);
}

}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

void GOMP_taskgroup_reduction_register(std::uintptr_t* data) {
  Thread& t = thread_state();
  Taskgroup* g = innermost_taskgroup(t);
  if (g == nullptr) fatal("GOMP_taskgroup_reduction_register outside every taskgroup");
  register_task_reductions(data, g->reductions, nullptr, t.team != nullptr ? t.team->n : 1);
  g->reductions = data;
}

void GOMP_taskgroup_reduction_unregister(std::uintptr_t* data) { unregister_task_reductions(data); }

// For i < cnt: ptrs[i], the address of an original list item or of some thread's private copy of
// one, becomes the address of the calling thread's copy; for i < cntorig, ptrs[cnt + i] becomes
// the original's address too.
void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  Thread& t = thread_state();
  const Taskgroup* g = innermost_taskgroup(t);
  std::uintptr_t* const data = g != nullptr ? g->reductions : nullptr;
  if (data == nullptr) fatal("GOMP_task_reduction_remap: in_reduction on a task that no task reduction encloses");
  const Index& index = *reinterpret_cast<const Index*>(data[w_index]);
  const std::uintptr_t id = t.num;
  for (std::size_t i = 0; i < cnt; ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    if (auto it = index.find(a); it != index.end()) {
      const std::uintptr_t* e = it->second;
      const auto* d = reinterpret_cast<const std::uintptr_t*>(e[2]);
      ptrs[i] = reinterpret_cast<void*>(d[w_array] + id * d[w_size] + e[1]);
      if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(e[0]);
      continue;
    }
    // An address inside the private copies of one of the registrations.
    std::uintptr_t* d = data;
    while (d != nullptr && !(a >= d[w_array] && a < d[w_end])) d = next_block(d);
    if (d == nullptr || d[w_size] == 0)
      fatal("GOMP_task_reduction_remap: %p is no variable of an enclosing task reduction", ptrs[i]);
    const std::uintptr_t off = (a - d[w_array]) % d[w_size];
    ptrs[i] = reinterpret_cast<void*>(d[w_array] + id * d[w_size] + off);
    if (i < cntorig) {
      std::size_t lo = 0, hi = d[w_cnt];  // the entries are sorted by offset
      while (lo < hi) {
        const std::size_t m = lo + (hi - lo) / 2;
        if (entry(d, m)[1] < off)
          lo = m + 1;
        else
          hi = m;
      }
      if (lo == d[w_cnt] || entry(d, lo)[1] != off)
        fatal("GOMP_task_reduction_remap: %p is no variable of an enclosing task reduction", ptrs[i]);
      ptrs[cnt + i] = reinterpret_cast<void*>(entry(d, lo)[0]);
    }
  }
}

// The end of a worksharing construct's (or scope's) task reduction, after its tasks ran (the
// construct's barrier) and member 0 combined the copies: the construct's taskgroup ends, member
// 0 frees the copies (the others their index), then the team's barrier unless cancelled.
void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  Thread& t = thread_state();
  Taskgroup* g = innermost_taskgroup(t);
  std::uintptr_t* const data = g != nullptr ? g->reductions : nullptr;
  if (data == nullptr) fatal("GOMP_workshare_task_reduction_unregister without a worksharing task reduction");
  GOMP_taskgroup_end();
  if (t.num == 0)
    unregister_task_reductions(data);
  else
    forget_task_reductions(data);
  if (!cancelled) GOMP_barrier();
}

}  // extern "C"
