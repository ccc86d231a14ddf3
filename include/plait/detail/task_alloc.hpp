// Internal: the allocator for task records (task_group children). Not part of the public API.
//
// Why: a task_group child outlives the call that adds it, so its closure lives on the heap. With
// malloc, a child cost its creator ~340 instructions of malloc + free on one worker (callgrind,
// flatloop puretask-single: the records are all allocated before any is freed, so glibc's
// per-thread cache is empty on every malloc and full on every free), and records of 48 bytes
// shared cache lines across the workers that ran them. Here a record costs a few instructions.
//
// Design: a magazine allocator (Bonwick) with per-worker caches and one depot per pool.
//   * Size classes of 64, 128, 256 and 512 bytes, cache-line aligned: two records never share a
//     line. A record type picks its class at compile time, so blocks carry no header. Larger or
//     over-aligned records go to operator new.
//   * Each worker keeps, per class, a list `head` of fewer than B blocks and at most one full
//     batch `full` of exactly B blocks (B = 16 KiB / block size). Allocation pops `head`; freeing
//     pushes onto `head`. No atomics: the lists are owner-only.
//   * Blocks move between workers with the tasks: the worker that runs a record frees it into its
//     own cache. A cache that overflows (head reaches B blocks while `full` is taken) hands `full`
//     to the pool's depot; an empty cache takes a batch from the depot, or carves a new one from
//     fresh memory. The depot is a mutex and a list of batches, touched once per B operations at
//     most; the two magazines give hysteresis, so a worker that alternates allocations and frees
//     never reaches it.
//   * Memory goes back to the system when the pool is destroyed (every record was freed by then:
//     a child frees itself before its group can be waited for). Peak use is retained meanwhile.
// Records are allocated and freed on workers of one pool (a child is pushed on the deque of the
// worker that adds it and is run by a worker of that pool), so one depot per pool suffices. A
// thread that is no worker of the pool gives a block back through task_free_foreign (the depot's
// `strays`, under its mutex).
#pragma once

#include <plait/config.hpp>
#include <plait/detail/worker.hpp>

#include <bit>
#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define PLAIT_ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLAIT_ALLOC_ASAN 1
#endif
#endif
#ifndef PLAIT_ALLOC_ASAN
#define PLAIT_ALLOC_ASAN 0
#endif
#if PLAIT_ALLOC_ASAN
#include <sanitizer/asan_interface.h>
// A free block is poisoned whole; the allocator unpoisons its two links only while it uses them.
// So AddressSanitizer still reports a task that touches its record after it was freed.
#define PLAIT_ALLOC_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define PLAIT_ALLOC_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define PLAIT_ALLOC_POISON(p, n) ((void)0)
#define PLAIT_ALLOC_UNPOISON(p, n) ((void)0)
#endif

namespace plait::detail {

inline constexpr std::size_t alloc_min_block = 64;
inline constexpr std::size_t alloc_max_block = alloc_min_block << (alloc_classes - 1);  // 512
inline constexpr std::size_t alloc_batch_bytes = 16 * 1024;

// The size class of a block of `bytes` (<= alloc_max_block): the smallest c with
// alloc_min_block << c >= bytes. Without a loop: a record size known only at run time (an
// OpenMP task's argument block) pays two instructions, not one round per class.
constexpr unsigned alloc_class_of(std::size_t bytes) noexcept {
  return bytes <= alloc_min_block ? 0u : static_cast<unsigned>(std::bit_width(bytes - 1)) - 6u;
}
static_assert(alloc_min_block == 64 && alloc_class_of(64) == 0 && alloc_class_of(65) == 1 && alloc_class_of(128) == 1 &&
              alloc_class_of(129) == 2 && alloc_class_of(512) == 3 && alloc_class_of(1) == 0);
constexpr std::size_t alloc_block_size(unsigned c) noexcept { return alloc_min_block << c; }
// Blocks per batch of class c: a shift, not a division (a class known only at run time made the
// free path of an OpenMP task record pay a `div`).
constexpr std::uint32_t alloc_batch(unsigned c) noexcept {
  return static_cast<std::uint32_t>(alloc_batch_bytes >> (std::countr_zero(alloc_min_block) + c));
}
static_assert(alloc_batch(0) == alloc_batch_bytes / 64 && alloc_batch(3) == alloc_batch_bytes / 512);
static_assert(sizeof(FreeBlock) <= alloc_min_block);

// Slow paths (src/task_alloc.cpp): the cache of class c is empty / has just reached a full batch.
PLAIT_NOINLINE void* alloc_refill(Worker* w, unsigned c);
PLAIT_NOINLINE void alloc_spill(Worker* w, unsigned c) noexcept;

// Memory for a record of `bytes` (aligned to `align`) on worker w: from the worker's cache when it
// fits a size class, else operator new. The free must give the same `bytes` and `align`.
PLAIT_INLINE void* task_alloc_bytes(Worker* w, std::size_t bytes, std::size_t align) {
  if (PLAIT_UNLIKELY(bytes > alloc_max_block || align > alloc_min_block))
    return ::operator new(bytes, std::align_val_t{align});
  const unsigned c = alloc_class_of(bytes);
  AllocCache& k = w->acache[c];
  FreeBlock* b = k.head;
  if (PLAIT_UNLIKELY(b == nullptr)) return alloc_refill(w, c);
  PLAIT_ALLOC_UNPOISON(b, alloc_block_size(c));
  k.head = b->next;
  --k.n;
  return b;
}

// Gives a block of class c (one that task_alloc_bytes took from a size class) back to worker w's
// cache: for callers that kept the class instead of the size.
PLAIT_INLINE void task_free_class(Worker* w, void* p, unsigned c) noexcept {
  AllocCache& k = w->acache[c];
  auto* b = static_cast<FreeBlock*>(p);
  b->next = k.head;
  PLAIT_ALLOC_POISON(b, alloc_block_size(c));
  k.head = b;
  if (PLAIT_UNLIKELY(++k.n == alloc_batch(c))) alloc_spill(w, c);
}

PLAIT_INLINE void task_free_bytes(Worker* w, void* p, std::size_t bytes, std::size_t align) noexcept {
  if (PLAIT_UNLIKELY(bytes > alloc_max_block || align > alloc_min_block)) {
    ::operator delete(p, std::align_val_t{align});
    return;
  }
  task_free_class(w, p, alloc_class_of(bytes));
}

// Whether a block of `bytes` aligned to `align` comes from a size class (else operator new).
constexpr bool alloc_in_class(std::size_t bytes, std::size_t align) noexcept {
  return bytes <= alloc_max_block && align <= alloc_min_block;
}

// task_free_bytes for a thread that is no worker of `home`, the pool whose worker allocated the
// block (an OpenMP task whose detach event another thread fulfilled): the block goes to the
// pool's depot, under its mutex. Out of line, src/task_alloc.cpp.
PLAIT_NOINLINE void task_free_foreign(Pool* home, void* p, std::size_t bytes, std::size_t align) noexcept;

// task_alloc_bytes for a thread that is no worker of `home`: a block from the pool's depot, under
// its mutex (a stray if there is one, else one block of a batch whose rest become the strays).
// Out of line, src/task_alloc.cpp. May throw bad_alloc.
PLAIT_NOINLINE void* task_alloc_foreign(Pool* home, std::size_t bytes, std::size_t align);

// Memory from the magazines of pool `home` for any thread: the calling worker's cache when it is a
// worker of `home`, the depot otherwise. The one way the runtime allocates small objects whose
// free may happen on another thread of the pool or outside it (data-flow nodes, the data-flow
// table's map nodes through task_alloc_resource). The block lives at most as long as the pool.
PLAIT_INLINE void* pool_alloc_bytes(Pool* home, std::size_t bytes, std::size_t align) {
  Worker* w = tl_worker;
  if (PLAIT_LIKELY(w->pool == home)) return task_alloc_bytes(w, bytes, align);
  return task_alloc_foreign(home, bytes, align);
}
// Gives back a block of pool_alloc_bytes(home, bytes, align), from any thread.
PLAIT_INLINE void pool_free_bytes(Pool* home, void* p, std::size_t bytes, std::size_t align) noexcept {
  Worker* w = tl_worker;
  if (PLAIT_LIKELY(w->pool == home)) {
    task_free_bytes(w, p, bytes, align);
    return;
  }
  task_free_foreign(home, p, bytes, align);
}

// Memory for one T on worker w (w is a worker of a pool, never no_worker). May throw bad_alloc.
// (task_alloc_bytes with constants: the class is computed at compile time.)
template <class T>
PLAIT_INLINE void* task_alloc(Worker* w) {
  return task_alloc_bytes(w, sizeof(T), alignof(T));
}

// Gives back the memory of a T (already destroyed) on worker w: any worker of the pool whose
// worker allocated it.
template <class T>
PLAIT_INLINE void task_free(Worker* w, void* p) noexcept {
  task_free_bytes(w, p, sizeof(T), alignof(T));
}

}  // namespace plait::detail
