// Memory allocators (OpenMP 5.x): omp_alloc and its kin, omp_init_allocator's traits, the default
// allocator, and GOMP_alloc / GOMP_free (gcc's `allocate` clauses and directive).
//
// This host has one kind of memory, so every memory space and predefined allocator (handles 1..8)
// gives ordinary memory, as libgomp does without memkind. A user allocator (omp_init_allocator) is
// a heap object whose address is the handle; it honours `alignment` (at least that), `pool_size`
// (bytes outstanding through it; an allocation past it fails) and `fallback` (what a failure does:
// default_mem_fb retries with omp_default_mem_alloc, null_fb returns null, abort_fb stops the
// program with one line, allocator_fb retries with `fb_data`, the default allocator when that is
// omp_null_allocator, as libgomp accepts it). `pinned` = true is refused
// (omp_init_allocator returns omp_null_allocator, as gcc 12's libgomp does); sync_hint, access
// and partition are checked for a valid value and have nothing to change here.
//
// Every block carries a header just below the address returned: the malloc'd base (for free), the
// size (for realloc and the pool) and the allocator, so omp_free and omp_realloc need no handle.
#include "omp_internal.hpp"

#include <stdlib.h>  // posix_memalign

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace plait::omp {
namespace {

enum : std::uintptr_t {
  null_allocator = 0,
  default_mem_alloc = 1,
  last_predefined = 8,
  // omp_alloctrait_key_t
  atk_sync_hint = 1, atk_alignment = 2, atk_access = 3, atk_pool_size = 4, atk_fallback = 5, atk_fb_data = 6,
  atk_pinned = 7, atk_partition = 8,
};
enum : std::uintptr_t {
  atv_default = ~std::uintptr_t{0}, atv_false = 0, atv_true = 1, atv_contended = 3, atv_uncontended = 4,
  atv_serialized = 5, atv_private = 6, atv_all = 7, atv_thread = 8, atv_pteam = 9, atv_cgroup = 10,
  atv_default_mem_fb = 11, atv_null_fb = 12, atv_abort_fb = 13, atv_allocator_fb = 14, atv_environment = 15,
  atv_nearest = 16, atv_blocked = 17, atv_interleaved = 18,
};

struct Allocator {
  std::size_t alignment = 1;
  std::uintptr_t fallback = atv_default_mem_fb;
  std::uintptr_t fb_data = null_allocator;
  std::size_t pool_size = 0;  // 0: no limit
  std::atomic<std::size_t> used{0};
};

struct Header {
  void* base;
  std::size_t size;
  std::uintptr_t allocator;
};

bool predefined(std::uintptr_t a) { return a >= default_mem_alloc && a <= last_predefined; }
bool power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// The default allocator (def-allocator-var), per thread; OMP_ALLOCATOR sets the initial one.
thread_local std::uintptr_t default_allocator = 0;  // 0: not set on this thread yet

std::uintptr_t resolve(std::uintptr_t a) {
  if (a != null_allocator) return a;
  if (default_allocator == 0) default_allocator = global().def_allocator;
  return default_allocator;
}

void* raw_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  const std::size_t head = (sizeof(Header) + alignment - 1) & ~(alignment - 1);
  if (size > (std::size_t{1} << 62) - head) return nullptr;
  void* base = nullptr;
  if (posix_memalign(&base, alignment, head + size) != 0) return nullptr;
  char* p = static_cast<char*>(base) + head;
  auto* h = reinterpret_cast<Header*>(p - sizeof(Header));
  h->base = base;
  h->size = size;
  h->allocator = allocator;
  return p;
}

void* alloc_with(std::size_t alignment, std::size_t size, std::uintptr_t allocator, int depth) {
  allocator = resolve(allocator);
  if (alignment != 0 && !power_of_two(alignment)) return nullptr;  // (omp_aligned_alloc's precondition)
  if (predefined(allocator)) return raw_alloc(alignment, size, allocator);
  auto* a = reinterpret_cast<Allocator*>(allocator);
  if (a->alignment > alignment) alignment = a->alignment;
  void* p = nullptr;
  bool in_pool = true;
  if (a->pool_size != 0) {
    // relaxed: a budget, not a synchronisation; the block's memory is published by its use.
    const std::size_t before = a->used.fetch_add(size, std::memory_order_relaxed);
    if (before + size > a->pool_size || before + size < before) {
      a->used.fetch_sub(size, std::memory_order_relaxed);
      in_pool = false;
    }
  }
  if (in_pool) {
    p = raw_alloc(alignment, size, allocator);
    if (p == nullptr && a->pool_size != 0) a->used.fetch_sub(size, std::memory_order_relaxed);
  }
  if (p != nullptr) return p;
  switch (a->fallback) {
    case atv_null_fb: return nullptr;
    case atv_abort_fb:
      fatal("omp_alloc: %zu bytes could not be allocated and the allocator's fallback is abort_fb", size);
    case atv_allocator_fb:
      if (depth > 64) fatal("omp_alloc: the allocators' fallbacks form a cycle");
      return alloc_with(alignment, size, a->fb_data, depth + 1);
    default: return raw_alloc(alignment, size, default_mem_alloc);
  }
}

Header* header_of(void* p) { return reinterpret_cast<Header*>(static_cast<char*>(p) - sizeof(Header)); }

void free_block(void* p) {
  if (p == nullptr) return;
  Header* h = header_of(p);
  if (!predefined(h->allocator)) {
    auto* a = reinterpret_cast<Allocator*>(h->allocator);
    if (a->pool_size != 0) a->used.fetch_sub(h->size, std::memory_order_relaxed);
  }
  std::free(h->base);
}

}  // namespace
}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const AllocTrait* traits) {
  if (memspace > 4 || ntraits < 0 || (ntraits > 0 && traits == nullptr)) return null_allocator;
  auto* a = new Allocator;
  for (int i = 0; i < ntraits; ++i) {
    const std::uintptr_t key = traits[i].key & 0xffffffffu, v = traits[i].value;
    bool ok = true;
    switch (key) {
      case atk_sync_hint: ok = v == atv_default || (v >= atv_contended && v <= atv_private); break;
      case atk_alignment:
        ok = v == atv_default || power_of_two(v);
        if (ok && v != atv_default) a->alignment = v;
        break;
      case atk_access: ok = v == atv_default || (v >= atv_all && v <= atv_cgroup); break;
      case atk_pool_size:
        if (v != atv_default) a->pool_size = v;
        break;
      case atk_fallback:
        ok = v == atv_default || (v >= atv_default_mem_fb && v <= atv_allocator_fb);
        if (ok && v != atv_default) a->fallback = v;
        break;
      case atk_fb_data: a->fb_data = v; break;
      case atk_pinned: ok = v == atv_default || v == atv_false; break;  // pinned memory: not here
      case atk_partition: ok = v == atv_default || (v >= atv_environment && v <= atv_interleaved); break;
      default: ok = false;
    }
    if (!ok) {
      delete a;
      return null_allocator;
    }
  }
  return reinterpret_cast<std::uintptr_t>(a);
}

void omp_destroy_allocator(std::uintptr_t allocator) {
  if (allocator != null_allocator && !predefined(allocator)) delete reinterpret_cast<Allocator*>(allocator);
}

void omp_set_default_allocator(std::uintptr_t allocator) {
  default_allocator = allocator == null_allocator ? global().def_allocator : allocator;
}

uintptr_t omp_get_default_allocator(void) { return resolve(null_allocator); }

void* omp_alloc(std::size_t size, std::uintptr_t allocator) { return alloc_with(0, size, allocator, 0); }

void* omp_aligned_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
  return alloc_with(alignment, size, allocator, 0);
}

void* omp_calloc(std::size_t nmemb, std::size_t size, std::uintptr_t allocator) {
  if (size != 0 && nmemb > ~std::size_t{0} / size) return nullptr;
  void* p = alloc_with(0, nmemb * size, allocator, 0);
  if (p != nullptr) std::memset(p, 0, nmemb * size);
  return p;
}

void* omp_aligned_calloc(std::size_t alignment, std::size_t nmemb, std::size_t size, std::uintptr_t allocator) {
  if (size != 0 && nmemb > ~std::size_t{0} / size) return nullptr;
  void* p = alloc_with(alignment, nmemb * size, allocator, 0);
  if (p != nullptr) std::memset(p, 0, nmemb * size);
  return p;
}

void omp_free(void* ptr, std::uintptr_t /*allocator: the block's header names it*/) { free_block(ptr); }

void* omp_realloc(void* ptr, std::size_t size, std::uintptr_t allocator, std::uintptr_t free_allocator) {
  (void)free_allocator;  // the block's header names the allocator that made it
  if (ptr == nullptr) return omp_alloc(size, allocator);
  if (size == 0) {
    free_block(ptr);
    return nullptr;
  }
  const Header* h = header_of(ptr);
  void* q = alloc_with(0, size, allocator == null_allocator ? h->allocator : allocator, 0);
  if (q == nullptr) return nullptr;  // the old block stays valid
  std::memcpy(q, ptr, h->size < size ? h->size : size);
  free_block(ptr);
  return q;
}

void* GOMP_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
  return alloc_with(alignment, size, allocator, 0);
}

void GOMP_free(void* ptr, std::uintptr_t /*allocator*/) { free_block(ptr); }

}  // extern "C"
