/* Memory allocators (OpenMP 5.x): omp_alloc / omp_calloc / omp_aligned_alloc / omp_aligned_calloc /
 * omp_realloc / omp_free on the predefined allocators and on omp_null_allocator (the default
 * allocator, omp_set/get_default_allocator); omp_init_allocator's traits: alignment, pool_size
 * with each fallback (null_fb, default_mem_fb, allocator_fb), invalid traits refused (null
 * handle); the `allocate` clause on parallel and task (GOMP_alloc / GOMP_free), from every thread
 * at once. Every block is written in full and read back. */
#define TEST_NAME "allocators"
#include "omp_test.h"
#include <omp.h>
#include <stdint.h>

static void fill_check(unsigned char *p, size_t n, unsigned seed, const char *what) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(seed + i * 7);
  for (size_t i = 0; i < n; ++i)
    CHECK(p[i] == (unsigned char)(seed + i * 7), "%s: byte %zu of %zu did not keep its value", what, i, n);
}

int main(void) {
  const omp_allocator_handle_t pre[] = {omp_default_mem_alloc, omp_large_cap_mem_alloc, omp_const_mem_alloc,
                                        omp_high_bw_mem_alloc, omp_low_lat_mem_alloc, omp_cgroup_mem_alloc,
                                        omp_pteam_mem_alloc, omp_thread_mem_alloc};
  for (int k = 0; k < 8; ++k) {
    unsigned char *p = omp_alloc(1000, pre[k]);
    CHECK(p != NULL, "omp_alloc(1000) on predefined allocator %d returned null", k + 1);
    fill_check(p, 1000, (unsigned)k, "omp_alloc");
    omp_free(p, pre[k]);
    long *z = omp_calloc(257, sizeof(long), pre[k]);
    CHECK(z != NULL, "omp_calloc on predefined allocator %d returned null", k + 1);
    for (int i = 0; i < 257; ++i) CHECK(z[i] == 0, "omp_calloc: element %d is %ld, not zero", i, z[i]);
    omp_free(z, omp_null_allocator);
  }
  for (size_t al = 1; al <= 4096; al *= 2) {
    void *p = omp_aligned_alloc(al, 3 * al + 5, omp_default_mem_alloc);
    CHECK(p != NULL && (uintptr_t)p % al == 0, "omp_aligned_alloc(%zu) gave %p", al, p);
    fill_check(p, 3 * al + 5, 3, "omp_aligned_alloc");
    omp_free(p, omp_default_mem_alloc);
    int *q = omp_aligned_calloc(al, 100, sizeof(int), omp_default_mem_alloc);
    CHECK(q != NULL && (uintptr_t)q % al == 0, "omp_aligned_calloc(%zu) gave %p", al, (void *)q);
    for (int i = 0; i < 100; ++i) CHECK(q[i] == 0, "omp_aligned_calloc: element %d not zero", i);
    omp_free(q, omp_default_mem_alloc);
  }
  /* realloc keeps the contents up to the smaller size */
  unsigned char *r = omp_alloc(100, omp_default_mem_alloc);
  for (int i = 0; i < 100; ++i) r[i] = (unsigned char)i;
  r = omp_realloc(r, 10000, omp_default_mem_alloc, omp_default_mem_alloc);
  CHECK(r != NULL, "omp_realloc to 10000 bytes returned null");
  for (int i = 0; i < 100; ++i) CHECK(r[i] == (unsigned char)i, "omp_realloc lost byte %d", i);
  fill_check(r, 10000, 9, "omp_realloc");
  r = omp_realloc(r, 50, omp_null_allocator, omp_default_mem_alloc);
  CHECK(r != NULL, "omp_realloc to 50 bytes returned null");
  omp_free(r, omp_null_allocator);

  /* the default allocator */
  CHECK(omp_get_default_allocator() == omp_default_mem_alloc, "default allocator %lu, want omp_default_mem_alloc",
        (unsigned long)omp_get_default_allocator());
  omp_set_default_allocator(omp_high_bw_mem_alloc);
  CHECK(omp_get_default_allocator() == omp_high_bw_mem_alloc, "omp_set_default_allocator did not take");
  void *d = omp_alloc(64, omp_null_allocator);
  CHECK(d != NULL, "omp_alloc on the default allocator returned null");
  omp_free(d, omp_null_allocator);
  omp_set_default_allocator(omp_default_mem_alloc);

  /* traits: alignment */
  omp_alloctrait_t at[] = {{omp_atk_alignment, 512}};
  omp_allocator_handle_t a512 = omp_init_allocator(omp_default_mem_space, 1, at);
  CHECK(a512 != omp_null_allocator, "omp_init_allocator(alignment 512) refused");
  for (int i = 0; i < 20; ++i) {
    void *p = omp_alloc((size_t)(1 + 37 * i), a512);
    CHECK(p != NULL && (uintptr_t)p % 512 == 0, "alignment trait 512: block %p", p);
    omp_free(p, a512);
  }
  omp_destroy_allocator(a512);

  /* traits: a pool of 4096 bytes with each fallback */
  omp_alloctrait_t pn[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t pool = omp_init_allocator(omp_default_mem_space, 2, pn);
  CHECK(pool != omp_null_allocator, "omp_init_allocator(pool_size, null_fb) refused");
  void *p1 = omp_alloc(3000, pool);
  CHECK(p1 != NULL, "3000 bytes of a 4096-byte pool: null");
  void *p2 = omp_alloc(3000, pool);
  CHECK(p2 == NULL, "6000 bytes from a 4096-byte pool with null_fb: got %p", p2);
  omp_free(p1, pool);
  p2 = omp_alloc(3000, pool);
  CHECK(p2 != NULL, "the pool's 3000 bytes were not given back by omp_free");
  omp_free(p2, pool);

  omp_alloctrait_t pd[] = {{omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_default_mem_fb}};
  omp_allocator_handle_t poold = omp_init_allocator(omp_default_mem_space, 2, pd);
  void *big = omp_alloc(100000, poold);
  CHECK(big != NULL, "default_mem_fb: an allocation past the pool returned null");
  fill_check(big, 100000, 5, "default_mem_fb");
  omp_free(big, poold);

  omp_alloctrait_t pf[] = {{omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_allocator_fb},
                           {omp_atk_fb_data, (omp_uintptr_t)pool}};
  omp_allocator_handle_t poolf = omp_init_allocator(omp_default_mem_space, 3, pf);
  CHECK(poolf != omp_null_allocator, "omp_init_allocator(allocator_fb) refused");
  void *f1 = omp_alloc(2000, poolf); /* past poolf's 1024: from `pool` (4096) */
  CHECK(f1 != NULL, "allocator_fb: 2000 bytes returned null");
  void *f2 = omp_alloc(3000, poolf); /* past both: `pool`'s null_fb */
  CHECK(f2 == NULL, "allocator_fb then null_fb: 3000 more bytes gave %p", f2);
  omp_free(f1, poolf);
  omp_destroy_allocator(poolf);
  omp_destroy_allocator(poold);
  omp_destroy_allocator(pool);

  /* invalid traits: a null handle */
  omp_alloctrait_t bad1[] = {{omp_atk_alignment, 24}};
  CHECK(omp_init_allocator(omp_default_mem_space, 1, bad1) == omp_null_allocator,
        "alignment 24 (not a power of two) was accepted");
  omp_alloctrait_t bad2[] = {{omp_atk_fallback, (omp_uintptr_t)99}};
  CHECK(omp_init_allocator(omp_default_mem_space, 1, bad2) == omp_null_allocator,
        "fallback value 99 was accepted");

  /* the allocate clause: private copies from an allocator, in every member and task at once */
  long sum = 0;
  int nth = 0;
  #pragma omp parallel reduction(+ : sum)
  {
    long buf[64];
    #pragma omp single
    nth = omp_get_num_threads();
    int id = omp_get_thread_num();
    #pragma omp task private(buf) allocate(omp_high_bw_mem_alloc : buf) firstprivate(id) shared(sum)
    {
      for (int i = 0; i < 64; ++i) buf[i] = id + i;
      long s = 0;
      for (int i = 0; i < 64; ++i) s += buf[i];
      #pragma omp atomic
      sum += s;
    }
    #pragma omp taskwait
    long mine[16];
    for (int i = 0; i < 16; ++i) mine[i] = 1;
    for (int i = 0; i < 16; ++i) sum += mine[i];
  }
  long want = 0;
  for (int t = 0; t < nth; ++t) want += 64L * t + 63 * 64 / 2 + 16;
  CHECK(sum == want, "allocate clause: sum %ld, want %ld", sum, want);
  PASS();
}
