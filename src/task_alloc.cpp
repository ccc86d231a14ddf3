// The task-record allocator's slow paths: refilling an empty worker cache and spilling a full one,
// through the pool's depot. The design and the fast paths are in include/plait/detail/task_alloc.hpp.
//
// Synchronisation: a block is owned by exactly one party at a time — the worker whose cache holds
// it, the task record it became (passed to other workers through the deque, which orders the
// accesses: the thief's acquire CAS sees the creator's writes, and the worker that frees it is
// the one that ran it), or the depot (under its mutex). No atomics are needed beyond the mutex.
#include "pool_impl.hpp"

#include <new>

namespace plait::detail {

// Links `n` blocks carved from fresh memory at `mem` into one list (the batch's first block first).
static FreeBlock* carve(void* mem, unsigned c, std::uint32_t n) noexcept {
  const std::size_t sz = alloc_block_size(c);
  auto* base = static_cast<char*>(mem);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto* b = reinterpret_cast<FreeBlock*>(base + i * sz);
    b->next = i + 1 < n ? reinterpret_cast<FreeBlock*>(base + (i + 1) * sz) : nullptr;
    b->next_batch = nullptr;
    PLAIT_ALLOC_POISON(b, sz);
  }
  return reinterpret_cast<FreeBlock*>(base);
}

// The first block of a list of n (a cache's or the depot's strays), taken off it.
static FreeBlock* pop_block(FreeBlock*& head, std::uint32_t& n, [[maybe_unused]] unsigned c) noexcept {
  FreeBlock* b = head;
  PLAIT_ALLOC_UNPOISON(b, alloc_block_size(c));
  head = b->next;
  --n;
  return b;
}

// A whole batch the depot keeps, unlinked from it; null when it has none. d.mu held.
static FreeBlock* take_batch(AllocDepot& d) noexcept {
  FreeBlock* got = d.batches;
  if (got == nullptr) return nullptr;
  PLAIT_ALLOC_UNPOISON(got, sizeof(FreeBlock));
  d.batches = got->next_batch;
  PLAIT_ALLOC_POISON(got, sizeof(FreeBlock));
  return got;
}

// A batch of B blocks of class c from fresh memory, whose slab the depot keeps (alloc_release
// frees it). The allocation may throw bad_alloc (task_group::run passes it on); `lock`: the
// caller does not hold d.mu (the slab list is taken under it; the allocation is not).
static FreeBlock* fresh_batch(AllocDepot& d, unsigned c, std::uint32_t B, bool lock) {
  void* mem = ::operator new(alloc_batch_bytes, std::align_val_t{alloc_min_block});
  try {
    if (lock) {
      std::lock_guard<std::mutex> lk(d.mu);
      d.slabs.push_back(mem);
    } else {
      d.slabs.push_back(mem);
    }
  } catch (...) {
    ::operator delete(mem, std::align_val_t{alloc_min_block});
    throw;
  }
  return carve(mem, c, B);
}

void* alloc_refill(Worker* w, unsigned c) {
  AllocCache& k = w->acache[c];
  const std::uint32_t B = alloc_batch(c);
  if (k.full != nullptr) {
    // The second magazine: no trip to the depot.
    k.head = k.full;
    k.full = nullptr;
    k.n = B;
  } else {
    AllocDepot& d = w->pool->depot[c];
    FreeBlock* got = nullptr;
    {
      std::lock_guard<std::mutex> lk(d.mu);
      got = take_batch(d);
    }
    if (got == nullptr) got = fresh_batch(d, c, B, /*lock=*/true);
    k.head = got;
    k.n = B;
  }
  return pop_block(k.head, k.n, c);  // as the fast path would have
}

void alloc_spill(Worker* w, unsigned c) noexcept {
  AllocCache& k = w->acache[c];
  // `head` now holds exactly one batch. Keep it as the second magazine; if that one is taken,
  // hand the older full batch to the depot first.
  if (k.full != nullptr) {
    AllocDepot& d = w->pool->depot[c];
    FreeBlock* b = k.full;
    std::lock_guard<std::mutex> lk(d.mu);
    PLAIT_ALLOC_UNPOISON(b, sizeof(FreeBlock));
    b->next_batch = d.batches;
    PLAIT_ALLOC_POISON(b, sizeof(FreeBlock));
    d.batches = b;
  }
  k.full = k.head;
  k.head = nullptr;
  k.n = 0;
}

void task_free_foreign(Pool* home, void* p, std::size_t bytes, std::size_t align) noexcept {
  if (bytes > alloc_max_block || align > alloc_min_block) {
    ::operator delete(p, std::align_val_t{align});
    return;
  }
  const unsigned c = alloc_class_of(bytes);
  AllocDepot& d = home->depot[c];
  auto* b = static_cast<FreeBlock*>(p);
  std::lock_guard<std::mutex> lk(d.mu);
  b->next = d.strays;
  d.strays = b;
  if (++d.stray_n == alloc_batch(c)) {  // a batch's worth: hand it out like any batch
    b->next_batch = d.batches;
    d.batches = b;
    d.strays = nullptr;
    d.stray_n = 0;
  }
  PLAIT_ALLOC_POISON(b, alloc_block_size(c));
}

void* task_alloc_foreign(Pool* home, std::size_t bytes, std::size_t align) {
  if (bytes > alloc_max_block || align > alloc_min_block) return ::operator new(bytes, std::align_val_t{align});
  const unsigned c = alloc_class_of(bytes);
  const std::uint32_t B = alloc_batch(c);
  AllocDepot& d = home->depot[c];
  std::lock_guard<std::mutex> lk(d.mu);
  if (d.strays == nullptr) {
    // The strays are empty: they become one batch less a block (the depot keeps whole batches
    // in `batches` and fewer than a batch's worth in `strays`).
    FreeBlock* got = take_batch(d);
    if (got == nullptr) got = fresh_batch(d, c, B, /*lock=*/false);
    d.strays = got;
    d.stray_n = B;
  }
  return pop_block(d.strays, d.stray_n, c);
}

void alloc_release(Pool* p) noexcept {
  for (unsigned c = 0; c < alloc_classes; ++c) {
    AllocDepot& d = p->depot[c];
    for (void* mem : d.slabs) {
      PLAIT_ALLOC_UNPOISON(mem, alloc_batch_bytes);
      ::operator delete(mem, std::align_val_t{alloc_min_block});
    }
    d.slabs.clear();
    d.batches = nullptr;
    d.strays = nullptr;
    d.stray_n = 0;
  }
  // The workers' caches point into the slabs just freed; the workers are deleted right after.
}

}  // namespace plait::detail
