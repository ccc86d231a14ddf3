/* barrier: no thread leaves a barrier before every thread of the team has reached it. Each round
 * every thread writes its slot for that round, passes the barrier, then reads every slot; a second
 * barrier keeps the next round's writes away from this round's readers. Also a barrier in a
 * function called from the region (orphaned) and the implicit barrier at the end of a region. */
#define TEST_NAME "barrier"
#include "omp_test.h"
#include <omp.h>

#define MAXT 64
#define ROUNDS 60

static int slot[MAXT];

static void orphan_barrier(void) {
  #pragma omp barrier
}

int main(void) {
  int bad_round = -1, bad_thread = -1, nthreads = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    #pragma omp single
    nthreads = n;
    for (int r = 1; r <= ROUNDS; ++r) {
      AT_STORE(&slot[me], r);
      if (r % 2)
        orphan_barrier();
      else {
        #pragma omp barrier
      }
      for (int t = 0; t < n; ++t) {
        if (AT_LOAD(&slot[t]) != r) {
          #pragma omp critical
          {
            bad_round = r;
            bad_thread = t;
          }
        }
      }
      #pragma omp barrier
    }
  }
  CHECK(nthreads >= 1 && nthreads <= MAXT, "team of %d", nthreads);
  CHECK(bad_round < 0, "after the barrier of round %d, thread %d's write of that round was missing", bad_round,
        bad_thread);

  /* the end of a region is a barrier: every member's write is visible after it */
  int marks[MAXT];
  for (int round = 0; round < 20; ++round) {
    memset(marks, 0, sizeof marks);
    int n = 0;
    #pragma omp parallel
    {
      marks[omp_get_thread_num()] = round + 1;
      #pragma omp single nowait
      n = omp_get_num_threads();
    }
    for (int t = 0; t < n; ++t)
      CHECK(marks[t] == round + 1, "region %d: thread %d's write not seen after the region", round, t);
  }
  PASS();
}
