/* cancel parallel (the harness sets OMP_CANCELLATION=true; omp_get_cancellation() must read it).
 * Guaranteed: the cancelling thread goes to the end of the region at once (nothing after its cancel
 * runs); every other thread leaves at its next cancellation point (an explicit cancellation point,
 * or a barrier, or the end of a worksharing construct in the cancelled region), so loops that only a
 * cancellation point can leave end and nobody passes a barrier the canceller skipped; the program
 * continues after the region, and a later region is not cancelled. */
#define TEST_NAME "cancel_parallel"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  CHECK(omp_get_cancellation() == 1, "omp_get_cancellation() = %d, OMP_CANCELLATION=%s", omp_get_cancellation(),
        getenv("OMP_CANCELLATION") ? getenv("OMP_CANCELLATION") : "(unset)");
  for (int round = 0; round < 20; ++round) {
    int after_cancel = 0, left = 0;
    #pragma omp parallel shared(after_cancel, left)
    {
      if (omp_get_thread_num() == (round % omp_get_num_threads())) {
        ot_spin_work(round * 100);
        #pragma omp cancel parallel
        AT_INC(&after_cancel);
      } else {
        /* only cancellation ends this loop */
        for (;;) {
          #pragma omp cancellation point parallel
          ot_spin_work(10);
        }
      }
      AT_INC(&left);
    }
    CHECK(after_cancel == 0, "round %d: the cancelling thread ran the code after cancel parallel", round);
    CHECK(left == 0, "round %d: %d threads ran past the end of a cancelled region's body", round, left);
  }

  /* a barrier is a cancellation point: threads waiting in it leave when the region is cancelled */
  for (int round = 0; round < 20; ++round) {
    int past_barrier = 0, canceller_after = 0;
    #pragma omp parallel
    {
      if (omp_get_thread_num() == 0) {
        ot_spin_work(500);
        #pragma omp cancel parallel
        AT_INC(&canceller_after);
      }
      #pragma omp barrier
      /* thread 0 never arrives at the barrier, so nobody passes it: the others leave the region
         from inside it, as the cancellation point it is */
      AT_INC(&past_barrier);
    }
    CHECK(canceller_after == 0 && past_barrier == 0, "round %d: cancelled region: %d past the barrier, canceller %d",
          round, past_barrier, canceller_after);
  }

  /* in a region that can be cancelled the ends of worksharing constructs are cancellation points
   * too (GOMP_loop_end_cancel, GOMP_sections_end_cancel, GOMP_barrier_cancel): thread 0 cancels
   * instead of entering the construct, so nobody can pass its end normally, and nobody runs the code
   * after it */
  for (int round = 0; round < 10; ++round) {
    int after_ws = 0, after_cancel = 0;
    for (int form = 0; form < 3; ++form) {
      #pragma omp parallel
      {
        if (omp_get_thread_num() == 0) {
          ot_spin_work(round * 100);
          #pragma omp cancel parallel
          AT_INC(&after_cancel);
        }
        if (form == 0) {
          #pragma omp for schedule(dynamic, 1)
          for (int i = 0; i < 64; ++i) ot_spin_work(10);
        } else if (form == 1) {
          #pragma omp for schedule(static)
          for (int i = 0; i < 64; ++i) ot_spin_work(10);
        } else {
          #pragma omp sections
          {
            #pragma omp section
            ot_spin_work(100);
            #pragma omp section
            ot_spin_work(100);
          }
        }
        AT_INC(&after_ws);
      }
      CHECK(after_ws == 0 && after_cancel == 0,
            "round %d, form %d: %d threads passed the end of a worksharing construct the canceller skipped "
            "(canceller went on %d times)", round, form, after_ws, after_cancel);
    }
  }

  /* if(false) on cancel: no cancellation */
  int full = 0;
  #pragma omp parallel
  {
    #pragma omp cancel parallel if(0)
    #pragma omp barrier
    AT_INC(&full);
  }
  CHECK(full == omp_get_max_threads(), "cancel parallel if(0): %d of %d threads finished", full,
        omp_get_max_threads());

  /* the next region is not cancelled */
  int count = 0;
  #pragma omp parallel
  {
    #pragma omp barrier
    #pragma omp cancellation point parallel
    AT_INC(&count);
  }
  CHECK(count == omp_get_max_threads(), "a region after cancelled ones: %d of %d threads finished", count,
        omp_get_max_threads());
  PASS();
}
