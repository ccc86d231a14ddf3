/* The GOMP_1.0 split form of parallel regions, as gcc before 4.9 lowered them: GOMP_parallel_start
 * starts the team and returns, the program calls the region's function itself as thread 0, then
 * GOMP_parallel_end; the combined loop and sections forms (GOMP_parallel_loop_*_start,
 * GOMP_parallel_sections_start) start the team with the worksharing construct set up, and the
 * function takes its first chunk or section with the _next call. gcc 12 emits none of them, so this
 * program calls the entry points by hand, exactly as such a binary does. Checked: every member runs
 * the function once, each iteration and section runs once, tasks made inside finish by
 * GOMP_parallel_end, a region opened inside a split region is nested (level 2), and
 * regions of both forms alternate. */
#define TEST_NAME "parallel_split"
#include "omp_test.h"
#include <omp.h>
#include <stdbool.h>

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_static_start(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,
                                     long incr, long chunk);
void GOMP_parallel_loop_dynamic_start(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,
                                      long incr, long chunk);
void GOMP_parallel_loop_guided_start(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,
                                     long incr, long chunk);
void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,
                                      long incr);
void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads, unsigned count);
bool GOMP_loop_static_next(long *istart, long *iend);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
bool GOMP_loop_guided_next(long *istart, long *iend);
bool GOMP_loop_runtime_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);
void GOMP_barrier(void);

#define N 1000
#define MAXT 64

struct region {
  int seen[MAXT];   /* per thread number: how many times the function ran there */
  int nthreads;     /* omp_get_num_threads inside */
  int level;        /* omp_get_level inside */
  long tasks_done;  /* tasks made inside, counted when they finish */
  int inner_level, inner_threads;
};

static void body(void *p) {
  struct region *r = p;
  const int me = omp_get_thread_num();
  CHECK(me >= 0 && me < MAXT, "thread number %d", me);
  __atomic_add_fetch(&r->seen[me], 1, __ATOMIC_RELAXED);
  if (me == 0) {
    r->nthreads = omp_get_num_threads();
    r->level = omp_get_level();
  }
  /* tasks made in the region: GOMP_parallel_end's barrier completes them */
  for (int k = 0; k < 20; ++k) {
    #pragma omp task shared(r)
    {
      ot_spin_work(k % 5);
      __atomic_add_fetch(&r->tasks_done, 1, __ATOMIC_RELAXED);
    }
  }
  GOMP_barrier();
}

static void inner_body(void *p) {
  struct region *r = p;
  /* every member of the inner team writes the same values */
  __atomic_store_n(&r->inner_level, omp_get_level(), __ATOMIC_RELAXED);
  __atomic_store_n(&r->inner_threads, omp_get_num_threads(), __ATOMIC_RELAXED);
}

static void nesting_body(void *p) {
  struct region *r = p;
  body(p);
  if (omp_get_thread_num() == 0) {
    struct region *in = r;
    GOMP_parallel_start(inner_body, in, 4);
    inner_body(in);
    GOMP_parallel_end();
  }
}

static void check_region(const struct region *r, const char *what, int want_threads) {
  CHECK(r->nthreads == want_threads, "%s: %d threads, want %d", what, r->nthreads, want_threads);
  CHECK(r->level == 1, "%s: level %d inside, want 1", what, r->level);
  for (int i = 0; i < MAXT; ++i)
    CHECK(r->seen[i] == (i < want_threads), "%s: thread %d ran the function %d times", what, i, r->seen[i]);
  CHECK(r->tasks_done == 20L * want_threads, "%s: %ld tasks finished by GOMP_parallel_end, want %ld", what,
        r->tasks_done, 20L * want_threads);
  CHECK(omp_get_level() == 0 && !omp_in_parallel(), "%s: still in a region after GOMP_parallel_end", what);
}

static int hits[N];

enum kind { K_STATIC, K_DYNAMIC, K_GUIDED, K_RUNTIME };
struct loop_args {
  enum kind kind;
};

static bool next(enum kind k, long *s, long *e) {
  switch (k) {
    case K_STATIC: return GOMP_loop_static_next(s, e);
    case K_DYNAMIC: return GOMP_loop_dynamic_next(s, e);
    case K_GUIDED: return GOMP_loop_guided_next(s, e);
    default: return GOMP_loop_runtime_next(s, e);
  }
}

/* as old gcc lowered `parallel for`: the team was started with the loop set up, so the function
 * takes even its first chunk with _next */
static void loop_body(void *p) {
  const struct loop_args *a = p;
  long s, e;
  while (next(a->kind, &s, &e)) {
    CHECK(s >= 0 && e <= 3 * N && s < e && s % 3 == 0, "chunk [%ld, %ld)", s, e);
    for (long i = s; i < e; i += 3) {
      ot_spin_work((int)(i % 7));
      __atomic_add_fetch(&hits[i / 3], 1, __ATOMIC_RELAXED);
    }
  }
  GOMP_loop_end_nowait();
}

static int section_runs[5];
static void sections_body(void *p) {
  (void)p;
  for (unsigned i = GOMP_sections_next(); i != 0; i = GOMP_sections_next()) {
    CHECK(i >= 1 && i <= 5, "section %u of 5", i);
    ot_spin_work(3);
    __atomic_add_fetch(&section_runs[i - 1], 1, __ATOMIC_RELAXED);
  }
  GOMP_sections_end_nowait();
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "end-without-start") == 0) {
    GOMP_parallel_end(); /* a broken program: Plait stops it with one line (registered for Plait only) */
    PASS();
  }
  const int t = omp_get_max_threads();
  CHECK(t <= MAXT, "at most %d threads here", MAXT);

  for (int round = 0; round < 3; ++round) {
    struct region r = {0};
    GOMP_parallel_start(body, &r, 0);
    body(&r);
    GOMP_parallel_end();
    check_region(&r, "parallel_start", t);

    /* the new form in between: the two kinds of region share the pools */
    int count = 0;
    #pragma omp parallel reduction(+ : count)
    count += 1;
    CHECK(count == t, "GOMP_parallel between split regions: %d members, want %d", count, t);
  }

  /* num_threads: asks for 2 */
  {
    struct region r = {0};
    GOMP_parallel_start(body, &r, 2);
    body(&r);
    GOMP_parallel_end();
    check_region(&r, "parallel_start num_threads(2)", 2); /* the clause beats nthreads-var */
  }

  /* a region opened by the master inside a split region: nested, a team of one at level 2 */
  {
    struct region r = {0};
    GOMP_parallel_start(nesting_body, &r, 0);
    nesting_body(&r);
    GOMP_parallel_end();
    check_region(&r, "nesting", t);
    /* inside an active region (max-active-levels 1 by default) a team of one; inside the inactive
     * region of one thread, libgomp gives it the 4 threads it asks for, Plait a team of one
     * (docs/openmp.md, nested regions) */
    CHECK(r.inner_level == 2 && (r.inner_threads == 1 || (t == 1 && r.inner_threads == 4)),
          "inner split region: level %d with %d threads, want level 2 and a team of one", r.inner_level,
          r.inner_threads);
  }

  /* the combined loop forms: i = 0, 3, ..., 3(N-1) */
  static const char *names[] = {"static", "dynamic", "guided", "runtime"};
  for (int k = K_STATIC; k <= K_RUNTIME; ++k) {
    memset(hits, 0, sizeof hits);
    struct loop_args a = {(enum kind)k};
    switch (k) {
      case K_STATIC: GOMP_parallel_loop_static_start(loop_body, &a, 0, 0, 3 * N, 3, 7); break;
      case K_DYNAMIC: GOMP_parallel_loop_dynamic_start(loop_body, &a, 0, 0, 3 * N, 3, 5); break;
      case K_GUIDED: GOMP_parallel_loop_guided_start(loop_body, &a, 0, 0, 3 * N, 3, 2); break;
      default: GOMP_parallel_loop_runtime_start(loop_body, &a, 0, 0, 3 * N, 3); break;
    }
    loop_body(&a);
    GOMP_parallel_end();
    for (int i = 0; i < N; ++i) CHECK(hits[i] == 1, "parallel_loop_%s_start: iteration %d ran %d times", names[k], 3 * i, hits[i]);
  }

  /* the combined sections form */
  GOMP_parallel_sections_start(sections_body, NULL, 0, 5);
  sections_body(NULL);
  GOMP_parallel_end();
  for (int i = 0; i < 5; ++i) CHECK(section_runs[i] == 1, "parallel_sections_start: section %d ran %d times", i + 1, section_runs[i]);

  PASS();
}
