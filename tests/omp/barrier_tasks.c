/* Barriers and pending tasks: all explicit tasks created in the region before a barrier (explicit,
 * or the implicit one of single, for, sections, or the region's end) are complete after it,
 * including descendants that nobody waited for; tasks created by every thread, and tasks created by
 * one thread while the others already wait at the barrier. */
#define TEST_NAME "barrier_tasks"
#include "omp_test.h"
#include <omp.h>

static int done;

static void nest(int depth) {
  AT_INC(&done);
  if (depth == 0) return;
  for (int k = 0; k < 2; ++k) {
    #pragma omp task
    nest(depth - 1);
  }
}

int main(void) {
  int bad = 0, n = 0;
  #pragma omp parallel
  {
    #pragma omp single
    n = omp_get_num_threads();
    for (int r = 0; r < 20; ++r) {
      /* every thread: 10 tasks with descendants (7 nodes each) */
      for (int k = 0; k < 10; ++k) {
        #pragma omp task
        nest(2);
      }
      #pragma omp barrier
      if (AT_LOAD(&done) != 70 * n * (r + 1)) AT_INC(&bad);
      #pragma omp barrier
    }
    /* one producer while the others are already at the barrier (single nowait) */
    #pragma omp single nowait
    {
      for (int k = 0; k < 100; ++k) {
        #pragma omp task
        {
          ot_spin_work(50);
          nest(1);
        }
      }
    }
    #pragma omp barrier
    if (AT_LOAD(&done) != 70 * n * 20 + 300) AT_INC(&bad);
    #pragma omp barrier
    /* the implicit barrier of a worksharing loop */
    #pragma omp for schedule(static)
    for (int i = 0; i < 64; ++i) {
      #pragma omp task
      nest(0);
    }
    if (AT_LOAD(&done) != 70 * n * 20 + 300 + 64) AT_INC(&bad);
    #pragma omp barrier
    /* the implicit barrier of single */
    #pragma omp single
    {
      for (int k = 0; k < 30; ++k) {
        #pragma omp task
        nest(0);
      }
    }
    if (AT_LOAD(&done) != 70 * n * 20 + 300 + 64 + 30) AT_INC(&bad);
    #pragma omp barrier
    /* sections */
    #pragma omp sections
    {
      #pragma omp section
      {
        #pragma omp task
        nest(3);
      }
      #pragma omp section
      {
        #pragma omp task
        nest(0);
      }
    }
    if (AT_LOAD(&done) != 70 * n * 20 + 300 + 64 + 30 + 16) AT_INC(&bad);
    #pragma omp barrier
    /* the region's end */
    #pragma omp task
    nest(1);
  }
  CHECK(bad == 0, "%d times a thread left a barrier before all earlier tasks were complete", bad);
  CHECK(done == 70 * n * 20 + 300 + 64 + 30 + 16 + 3 * n, "after the region %d task bodies ran, want %d", done,
        70 * n * 20 + 300 + 64 + 30 + 16 + 3 * n);
  PASS();
}
