/* cancel sections (OMP_CANCELLATION=true from the harness). Guaranteed: the cancelling section
 * stops right after its cancel; a section running while another one cancels leaves at its next
 * cancellation point (it polls one; once it has seen the canceller's flag, set just before the
 * cancel, only the cancellation can end its loop); sections not yet started may be skipped, so each
 * section runs at most once; everybody leaves the construct (GOMP_sections_end_cancel) and the next
 * sections construct runs fully. */
#define TEST_NAME "cancel_sections"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  CHECK(omp_get_cancellation() == 1, "omp_get_cancellation() = %d (the harness sets OMP_CANCELLATION=true)",
        omp_get_cancellation());
  for (int round = 0; round < 20; ++round) {
    int s_runs[3] = {0, 0, 0}, after = 0, next_runs = 0, flag = 0, poller_after = 0;
    #pragma omp parallel
    {
      #pragma omp sections
      {
        #pragma omp section
        {
          AT_INC(&s_runs[0]);
          ot_spin_work(round * 50);
          AT_STORE(&flag, 1);
          #pragma omp cancel sections
          AT_INC(&after);
        }
        #pragma omp section
        {
          AT_INC(&s_runs[1]);
          /* the canceller may not be running at all (same thread, later): poll a bounded time */
          for (int k = 0; k < 100000 && !AT_LOAD(&flag); ++k) {
            #pragma omp cancellation point sections
          }
          if (AT_LOAD(&flag)) {
            /* the cancel is under way: only the cancellation point leaves this loop */
            for (;;) {
              #pragma omp cancellation point sections
              ot_spin_work(10);
            }
          }
          AT_INC(&poller_after);
        }
        #pragma omp section
        AT_INC(&s_runs[2]);
      }
      #pragma omp sections
      {
        #pragma omp section
        AT_INC(&next_runs);
        #pragma omp section
        AT_INC(&next_runs);
      }
    }
    CHECK(after == 0, "round %d: the code after cancel sections ran", round);
    CHECK(s_runs[0] == 1 && s_runs[1] <= 1 && s_runs[2] <= 1, "round %d: sections ran %d, %d, %d times", round,
          s_runs[0], s_runs[1], s_runs[2]);
    CHECK(next_runs == 2, "round %d: the sections construct after the cancelled one ran %d of 2", round, next_runs);
    (void)poller_after;
  }
  PASS();
}
