/* cancel taskgroup (OMP_CANCELLATION=true from the harness). Guaranteed: the cancelling task stops
 * right after its cancel; tasks of the taskgroup that start after the cancellation either are
 * discarded or leave at their first cancellation point (here they depend on the canceller, so they
 * cannot start before it, and each loops on a cancellation point that only cancellation ends); the
 * taskgroup ends; descendants of cancelled tasks too; a later taskgroup is not cancelled; and
 * cancellation of a taskgroup does not reach tasks outside it. */
#define TEST_NAME "cancel_taskgroup"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  CHECK(omp_get_cancellation() == 1, "omp_get_cancellation() = %d (the harness sets OMP_CANCELLATION=true)",
        omp_get_cancellation());
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int round = 0; round < 20; ++round) {
      int gate = 0, after_cancel = 0, finished = 0, started = 0, outside = 0;
      /* a task outside the taskgroup: never cancelled */
      #pragma omp task shared(outside)
      {
        ot_spin_work(200);
        AT_INC(&outside);
      }
      #pragma omp taskgroup
      {
        #pragma omp task depend(out: gate) shared(gate, after_cancel)
        {
          ot_spin_work(round * 30);
          gate = 1;
          #pragma omp cancel taskgroup
          AT_INC(&after_cancel);
        }
        for (int k = 0; k < 16; ++k) {
          #pragma omp task depend(in: gate) shared(started, finished)
          {
            AT_INC(&started);
            /* grandchildren of the taskgroup are in it too */
            #pragma omp task shared(finished)
            {
              for (;;) {
                #pragma omp cancellation point taskgroup
                ot_spin_work(10);
              }
              AT_INC(&finished);
            }
            for (;;) {
              #pragma omp cancellation point taskgroup
              ot_spin_work(10);
            }
            AT_INC(&finished);
          }
        }
      }
      if (after_cancel != 0 || finished != 0 || started > 16) AT_INC(&bad);
      #pragma omp taskwait
      if (AT_LOAD(&outside) != 1) AT_INC(&bad);
    }

    /* a later taskgroup runs everything */
    int count = 0;
    #pragma omp taskgroup
    {
      for (int k = 0; k < 50; ++k) {
        #pragma omp task shared(count)
        {
          #pragma omp cancellation point taskgroup
          AT_INC(&count);
        }
      }
    }
    if (count != 50) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d cancelled taskgroups ran code after a cancel or lost tasks outside them", bad);

  /* in a taskloop, cancel taskgroup from an iteration cancels the taskloop's own taskgroup */
  int ran = 0, after = 0;
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp taskloop grainsize(1) shared(ran, after)
    for (int i = 0; i < 64; ++i) {
      #pragma omp cancellation point taskgroup
      AT_INC(&ran);
      if (i == 0) {
        #pragma omp cancel taskgroup
        AT_INC(&after);
      }
    }
  }
  CHECK(after == 0 && ran >= 1 && ran <= 64, "cancelled taskloop: %d iterations, after-cancel %d", ran, after);
  PASS();
}
