/* Worksharing loops under every schedule kind, in a region (GOMP_loop_*_start/next/end, the region
 * also doing other work so that gcc keeps them apart) and combined (GOMP_parallel_loop_*): each
 * logical iteration exactly once and every thread out of the loop; static chunk c maps chunk j to
 * thread j % nthreads exactly; static without chunk gives each thread at most one block and the
 * same assignment to two loops of the same shape; dynamic chunks are aligned runs of c; guided
 * chunks are at least c but the last; monotonic schedules (static, monotonic:dynamic,
 * monotonic:guided) run each thread's iterations in increasing order. Signed loops with steps other
 * than 1, negative steps, empty loops and loops shorter than the team. */
#define TEST_NAME "for_schedule"
#include "omp_test.h"
#include "loop_check.h"

#define N 5000

static int assign1[N], assign2[N];

int main(void) {
  /* static, no chunk (gcc computes static schedules inline, without GOMP_loop_* calls) */
  lc_begin("static", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(static)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_static_blocks();
  lc_check_monotonic();

  /* the same assignment for two static loops of the same shape (what nowait relies on) */
  #pragma omp parallel
  {
    #pragma omp for schedule(static) nowait
    for (int i = 0; i < N; ++i) assign1[i] = omp_get_thread_num();
    #pragma omp for schedule(static)
    for (int i = 0; i < N; ++i) assign2[i] = omp_get_thread_num();
  }
  for (int i = 0; i < N; ++i)
    CHECK(assign1[i] == assign2[i], "two schedule(static) loops of %d iterations: iteration %d on threads %d and %d",
          N, i, assign1[i], assign2[i]);

  /* static chunk: exact round robin, chunks that do not divide the count */
  static const int chunks[] = {1, 3, 7, 64, 4999, 6000};
  for (unsigned c = 0; c < sizeof chunks / sizeof chunks[0]; ++c) {
    int ch = chunks[c];
    lc_begin("static,c", N);
    #pragma omp parallel
    {
      #pragma omp for schedule(static, ch)
      for (int i = 0; i < N; ++i) lc_hit(i);
      lc_leave();
    }
    lc_check_cover();
    lc_check_static_chunk(ch);
    lc_check_monotonic();
  }

  /* combined parallel for, static chunk, step 3 from a negative start */
  lc_begin("parallel for static,5 step 3", (N + 2) / 3);
  #pragma omp parallel for schedule(static, 5)
  for (int i = -N / 2; i < N - N / 2; i += 3) lc_hit((i + N / 2) / 3);
  lc_check_cover();
  lc_check_static_chunk(5);

  /* dynamic (nonmonotonic by default since OpenMP 5.0) */
  lc_begin("dynamic", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(dynamic)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  static const int dchunks[] = {1, 4, 13, 5000};
  LC_DYNAMIC_CHUNKS("dynamic,c", N, "omp for schedule(dynamic, ch)", dchunks, 97, 200);
  lc_begin("monotonic:dynamic,3", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(monotonic: dynamic, 3)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_runs(3, 1);
  lc_check_monotonic();
  lc_begin("parallel for monotonic:dynamic,3", N);
  #pragma omp parallel for schedule(monotonic: dynamic, 3)
  for (int i = 0; i < N; ++i) lc_hit(i);
  lc_check_cover();
  lc_check_runs(3, 1);
  lc_check_monotonic();

  lc_begin("parallel for dynamic,2 descending", N);
  #pragma omp parallel for schedule(dynamic, 2)
  for (int i = N - 1; i >= 0; --i) lc_hit(N - 1 - i);
  lc_check_cover();
  lc_check_runs(2, 1);

  /* guided */
  lc_begin("guided", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(guided)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_begin("guided,c", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(guided, 16)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_runs(16, 0);
  lc_begin("monotonic:guided,5", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(monotonic: guided, 5)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  lc_check_runs(5, 0);
  lc_check_monotonic();
  lc_begin("parallel for monotonic:guided,7 step -4", (N + 3) / 4);
  #pragma omp parallel for schedule(monotonic: guided, 7)
  for (long i = 2L * N; i > N; i -= 4) lc_hit((int)((2L * N - i) / 4));
  lc_check_cover();
  lc_check_runs(7, 0);
  lc_check_monotonic();

  /* auto, and runtime with whatever run-sched-var is (the default here) */
  lc_begin("auto", N);
  #pragma omp parallel for schedule(auto)
  for (int i = 0; i < N; ++i) lc_hit(i);
  lc_check_cover();
  lc_begin("runtime (default run-sched-var)", N);
  #pragma omp parallel
  {
    #pragma omp for schedule(runtime)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();

  /* empty loops and loops shorter than the team, under each kind */
  int runs = 0;
  int lo = 5, hi = 5;
  #pragma omp parallel
  {
    #pragma omp for schedule(static)
    for (int i = lo; i < hi; ++i) AT_INC(&runs);
    #pragma omp for schedule(dynamic, 2)
    for (int i = lo; i < hi; ++i) AT_INC(&runs);
    #pragma omp for schedule(guided)
    for (int i = hi; i > lo; --i) AT_INC(&runs);
  }
  CHECK(runs == 0, "empty loops ran %d iterations", runs);
  for (int n = 1; n <= 3; ++n) {
    lc_begin("short static", n);
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) lc_hit(i);
    lc_check_cover();
    lc_begin("short dynamic", n);
    #pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; ++i) lc_hit(i);
    lc_check_cover();
    lc_begin("short guided", n);
    #pragma omp parallel for schedule(guided, 2)
    for (int i = 0; i < n; ++i) lc_hit(i);
    lc_check_cover();
  }

  /* the implicit barrier at the end of a loop: every iteration is done after it */
  int done[N];
  memset(done, 0, sizeof done);
  int missing = 0;
  #pragma omp parallel
  {
    #pragma omp for schedule(dynamic, 8)
    for (int i = 0; i < N; ++i) AT_STORE(&done[i], 1);
    for (int i = 0; i < N; ++i)
      if (!AT_LOAD(&done[i])) AT_INC(&missing);
  }
  CHECK(missing == 0, "after a loop's implicit barrier %d iterations were not done", missing);
  PASS();
}
