/* nowait: a loop without its implicit barrier. Two static loops of the same shape assign the same
 * iterations to the same threads, so the second may read what the first wrote for its own
 * iterations without a barrier (exact check); after an explicit barrier every iteration of every
 * nowait loop is done; many nowait loops of mixed schedules back to back (the runtime keeps the
 * work shares of several loops alive at once: fast threads run ahead to later loops). */
#define TEST_NAME "for_nowait"
#include "omp_test.h"
#include <omp.h>

#define N 3000
#define LOOPS 12

static int first[N], second[N], third[N];
static int hits[LOOPS][N];

int main(void) {
  int stale = 0;
  #pragma omp parallel
  {
    for (int round = 1; round <= 20; ++round) {
      #pragma omp for schedule(static) nowait
      for (int i = 0; i < N; ++i) first[i] = round * N + i;
      #pragma omp for schedule(static) nowait
      for (int i = 0; i < N; ++i) {
        if (first[i] != round * N + i) AT_INC(&stale);
        second[i] = first[i];
      }
      /* another array: a thread may still be in the loops above */
      #pragma omp for schedule(static, 16) nowait
      for (int i = 0; i < N; ++i) third[i] = -i - round;
      #pragma omp for schedule(static, 16) nowait
      for (int i = 0; i < N; ++i)
        if (third[i] != -i - round) AT_INC(&stale);
      #pragma omp barrier
    }
  }
  CHECK(stale == 0, "two static loops with nowait: %d iterations saw another thread's (unfinished) work", stale);
  for (int i = 0; i < N; ++i) CHECK(second[i] == 20 * N + i, "second[%d] = %d", i, second[i]);

  int missing = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    /* thread 0 starts late, so the others run ahead through several nowait loops */
    if (me == 0) ot_spin_work(20000);
    for (int l = 0; l < LOOPS; ++l) {
      switch (l % 4) {
        case 0:
          #pragma omp for schedule(dynamic, 5) nowait
          for (int i = 0; i < N; ++i) AT_INC(&hits[l][i]);
          break;
        case 1:
          #pragma omp for schedule(guided) nowait
          for (int i = 0; i < N; ++i) AT_INC(&hits[l][i]);
          break;
        case 2:
          #pragma omp for schedule(static, 3) nowait
          for (int i = 0; i < N; ++i) AT_INC(&hits[l][i]);
          break;
        default:
          #pragma omp for schedule(nonmonotonic: dynamic) nowait
          for (int i = 0; i < N; ++i) AT_INC(&hits[l][i]);
          break;
      }
    }
    #pragma omp barrier
    for (int l = me; l < LOOPS; l += omp_get_num_threads())
      for (int i = 0; i < N; ++i)
        if (AT_LOAD(&hits[l][i]) != 1) AT_INC(&missing);
  }
  CHECK(missing == 0, "after the barrier following %d nowait loops, %d iterations had not run exactly once", LOOPS,
        missing);
  PASS();
}
