/* ordered: the ordered parts of a loop with the ordered clause run in iteration order, whatever the
 * schedule (GOMP_loop_ordered_*_start, GOMP_ordered_start/end), with work outside the ordered part
 * running in any order; an iteration without an ordered part; and doacross loops (ordered(n) with
 * depend(sink)/depend(source), GOMP_loop_doacross_*, GOMP_doacross_post/wait) computing a
 * recurrence that is only right if each iteration waits for the one it names. */
#define TEST_NAME "for_ordered"
#include "omp_test.h"
#include <omp.h>

#define N 300

static int order_log[N];
static volatile unsigned long long ull_base = ~0ULL - 3 * N; /* read at run time: gcc keeps the ull forms */
static int pos;

static void check_log(const char *what, int n, int stride) {
  CHECK(pos == n, "%s: %d ordered parts ran, want %d", what, pos, n);
  for (int k = 0; k < n; ++k)
    CHECK(order_log[k] == k * stride, "%s: ordered position %d holds iteration %d, want %d", what, k, order_log[k],
          k * stride);
}

/* One loop with the ordered clause and the schedule of PRAGMA (a string: "omp for ordered ..." for
 * a loop inside a region, "omp parallel for ordered ..." combined), over i = 0, STEP, ... below
 * STEP * N; each iteration does WORK (an expression of i) units of ot_spin_work, then logs i in its
 * ordered part. */
#define ORDERED_LOOP(PRAGMA, STEP, WORK)            \
  do {                                              \
    _Pragma(PRAGMA)                                 \
    for (int i = 0; i < (STEP) * N; i += (STEP)) {  \
      ot_spin_work(WORK);                           \
      _Pragma("omp ordered")                        \
      order_log[pos++] = i;                         \
    }                                               \
  } while (0)

/* One doacross loop over [1, N) with the schedule of PRAGMA (a string: "omp for ordered(1) ..."):
 * a[i] = a[i - 1] + 1, only right if iteration i waits for i - 1. */
#define DOACROSS_COUNT(PRAGMA)                   \
  do {                                           \
    _Pragma(PRAGMA)                              \
    for (int i = 1; i < N; ++i) {                \
      _Pragma("omp ordered depend(sink: i - 1)") \
      a[i] = AT_LOAD(&a[i - 1]) + 1;             \
      _Pragma("omp ordered depend(source)")      \
    }                                            \
  } while (0)

int main(void) {
  /* schedules: static, static chunk, dynamic chunk, guided, runtime; inside a region and combined */
  pos = 0;
  #pragma omp parallel
  ORDERED_LOOP("omp for ordered schedule(static)", 1, i % 13);
  check_log("ordered static", N, 1);

  pos = 0;
  ORDERED_LOOP("omp parallel for ordered schedule(static, 3)", 1, 0);
  check_log("parallel for ordered static,3", N, 1);

  pos = 0;
  #pragma omp parallel
  ORDERED_LOOP("omp for ordered schedule(dynamic, 4)", 2, (i * 7) % 50);
  check_log("ordered dynamic,4 step 2", N, 2);

  pos = 0;
  ORDERED_LOOP("omp parallel for ordered schedule(guided)", 1, 0);
  check_log("parallel for ordered guided", N, 1);

  omp_set_schedule(omp_sched_dynamic, 1);
  pos = 0;
  #pragma omp parallel
  ORDERED_LOOP("omp for ordered schedule(runtime)", 1, 0);
  check_log("ordered runtime dynamic,1", N, 1);

  /* only some iterations reach an ordered part: those still in order, the others do not block */
  pos = 0;
  #pragma omp parallel for ordered schedule(dynamic)
  for (int i = 0; i < N; ++i) {
    if (i % 3 == 0) {
      #pragma omp ordered
      order_log[pos++] = i;
    }
  }
  CHECK(pos == (N + 2) / 3, "ordered in every third iteration: %d parts ran", pos);
  for (int k = 0; k < pos; ++k)
    CHECK(order_log[k] == 3 * k, "every third: position %d holds %d, want %d", k, order_log[k], 3 * k);

  /* doacross, one dimension: a[i] = a[i-1] + i, only right if i waits for i-1 */
  static long a[N];
  memset(a, 0, sizeof a);
  #pragma omp parallel
  {
    #pragma omp for ordered(1) schedule(dynamic, 1)
    for (int i = 1; i < N; ++i) {
      #pragma omp ordered depend(sink: i - 1)
      a[i] = AT_LOAD(&a[i - 1]) + i;
      #pragma omp ordered depend(source)
    }
  }
  for (int i = 1; i < N; ++i)
    CHECK(a[i] == (long)i * (i + 1) / 2, "doacross 1-D: a[%d] = %ld, want %ld", i, a[i], (long)i * (i + 1) / 2);

  /* doacross, two dimensions: b[i][j] = b[i-1][j] + b[i][j-1] (binomial counts) */
  enum { R = 20, S = 20 };
  static long b[R][S];
  for (int i = 0; i < R; ++i) b[i][0] = 1;
  for (int j = 0; j < S; ++j) b[0][j] = 1;
  #pragma omp parallel for ordered(2) schedule(static, 1)
  for (int i = 1; i < R; ++i)
    for (int j = 1; j < S; ++j) {
      #pragma omp ordered depend(sink: i - 1, j) depend(sink: i, j - 1)
      b[i][j] = AT_LOAD(&b[i - 1][j]) + AT_LOAD(&b[i][j - 1]);
      #pragma omp ordered depend(source)
    }
  /* b[i][j] = C(i+j, i) */
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < S; ++j) {
      long c = 1;
      for (int k = 1; k <= i; ++k) c = c * (j + k) / k;
      CHECK(b[i][j] == c, "doacross 2-D: b[%d][%d] = %ld, want %ld", i, j, b[i][j], c);
    }

  /* doacross, three dimensions with the outer two collapsed, static schedule without a chunk:
   * d[i][j][k] = 1 + d[i-1][j][k] + d[i][j-1][k] + d[i][j][k-1], each sink to a neighbour, the
   * sinks off the edges ignored */
  enum { P = 6, Q = 5, W = 7 };
  static long d3[P][Q][W], want3[P][Q][W];
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < Q; ++j)
      for (int k = 0; k < W; ++k)
        want3[i][j][k] = 1 + (i ? want3[i - 1][j][k] : 0) + (j ? want3[i][j - 1][k] : 0) + (k ? want3[i][j][k - 1] : 0);
  #pragma omp parallel for ordered(3) collapse(2) schedule(static)
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < Q; ++j)
      for (int k = 0; k < W; ++k) {
        #pragma omp ordered depend(sink: i - 1, j, k) depend(sink: i, j - 1, k) depend(sink: i, j, k - 1)
        d3[i][j][k] = 1 + (i ? AT_LOAD(&d3[i - 1][j][k]) : 0) + (j ? AT_LOAD(&d3[i][j - 1][k]) : 0) +
                      (k ? AT_LOAD(&d3[i][j][k - 1]) : 0);
        #pragma omp ordered depend(source)
      }
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < Q; ++j)
      for (int k = 0; k < W; ++k)
        CHECK(d3[i][j][k] == want3[i][j][k], "doacross 3-D collapse(2): d[%d][%d][%d] = %ld, want %ld", i, j, k,
              d3[i][j][k], want3[i][j][k]);

  /* doacross under guided and runtime schedules (GOMP_loop_doacross_guided/runtime_start) */
  for (int form = 0; form < 2; ++form) {
    memset(a, 0, sizeof a);
    omp_set_schedule(omp_sched_dynamic, 2);
    #pragma omp parallel
    {
      if (form == 0)
        DOACROSS_COUNT("omp for ordered(1) schedule(guided)");
      else
        DOACROSS_COUNT("omp for ordered(1) schedule(runtime)");
    }
    for (int i = 0; i < N; ++i) CHECK(a[i] == i, "doacross form %d: a[%d] = %ld", form, i, a[i]);
  }

  /* doacross over unsigned long long above LLONG_MAX (GOMP_loop_ull_doacross_*,
   * GOMP_doacross_ull_post/wait); element k belongs to iteration base + k */
  static unsigned long long u[N];
  memset(u, 0, sizeof u);
  const unsigned long long base = ull_base;
  #pragma omp parallel
  {
    #pragma omp for ordered(1) schedule(dynamic, 3)
    for (unsigned long long i = base + 1; i < base + N; ++i) {
      #pragma omp ordered depend(sink: i - 1)
      u[i - base] = AT_LOAD(&u[i - base - 1]) + 2;
      #pragma omp ordered depend(source)
    }
  }
  for (int i = 0; i < N; ++i) CHECK(u[i] == 2ULL * (unsigned)i, "doacross ull: u[%d] = %llu", i, u[i]);
  PASS();
}
