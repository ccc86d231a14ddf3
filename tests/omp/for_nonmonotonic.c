/* schedule(nonmonotonic: ...): a runtime may hand out chunks in any order (work stealing among
 * threads is allowed), but every logical iteration still runs exactly once and every dynamic chunk
 * has exactly c iterations (so runs of one thread are aligned unions of chunks). In a region
 * (GOMP_loop_nonmonotonic_*_start/next) and combined (GOMP_parallel_loop_nonmonotonic_*), with
 * imbalanced iterations, nowait between two such loops, and a runtime schedule in a loop that
 * itself is nonmonotonic (GOMP_loop_nonmonotonic_runtime_*). */
#define TEST_NAME "for_nonmonotonic"
#include "omp_test.h"
#include "loop_check.h"

#define N 5000

int main(void) {
  lc_begin("nonmonotonic:dynamic", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(nonmonotonic: dynamic)
    for (int i = 0; i < N; ++i) {
      if (i < 64) ot_spin_work(300);
      lc_hit(i);
    }
    lc_leave();
  }
  lc_check_cover();

  static const int chunks[] = {1, 5, 32};
  LC_DYNAMIC_CHUNKS("nonmonotonic:dynamic,c", N, "omp for schedule(nonmonotonic: dynamic, ch)", chunks, 500, 2000);

  lc_begin("parallel for nonmonotonic:dynamic,4 step 2", N);
  #pragma omp parallel for schedule(nonmonotonic: dynamic, 4)
  for (long i = 0; i < 2L * N; i += 2) lc_hit((int)(i / 2));
  lc_check_cover();
  lc_check_runs(4, 1);

  lc_begin("nonmonotonic:guided,8", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(nonmonotonic: guided, 8)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_runs(8, 0);

  lc_begin("parallel for nonmonotonic:guided", N);
  #pragma omp parallel for schedule(nonmonotonic: guided)
  for (int i = N; i > 0; --i) lc_hit(N - i);
  lc_check_cover();

  omp_set_schedule(omp_sched_dynamic, 3);
  lc_begin("nonmonotonic:runtime (dynamic,3)", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(nonmonotonic: runtime)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_runs(3, 1);
  lc_begin("parallel for nonmonotonic:runtime (dynamic,3)", N);
  #pragma omp parallel for schedule(nonmonotonic: runtime)
  for (int i = 0; i < N; ++i) lc_hit(i);
  lc_check_cover();
  lc_check_runs(3, 1);

  /* two nonmonotonic loops with nowait, then a barrier: both complete, each exactly once */
  int a[N], b[N];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  #pragma omp parallel
  {
    #pragma omp for schedule(nonmonotonic: dynamic, 7) nowait
    for (int i = 0; i < N; ++i) AT_INC(&a[i]);
    #pragma omp for schedule(nonmonotonic: dynamic, 3) nowait
    for (int i = 0; i < N; ++i) AT_INC(&b[i]);
    #pragma omp barrier
    #pragma omp single
    for (int i = 0; i < N; ++i)
      if (a[i] != 1 || b[i] != 1) ot_fail("nowait loops: iteration %d ran %d and %d times", i, a[i], b[i]);
  }
  PASS();
}
