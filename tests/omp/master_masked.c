/* master and masked: only thread 0 runs master and masked without filter, only the filtered
 * thread runs masked filter(k) (nobody when k is not a thread number of the team), each once per
 * encounter, in teams of every size. */
#define TEST_NAME "master_masked"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int master_by = -1, master_runs = 0, masked0_by = -1, masked0_runs = 0;
  int masked1_by = -1, masked1_runs = 0, masked_far_runs = 0, nthreads = 0;
  int f = 1;
  #pragma omp parallel
  {
    #pragma omp single
    nthreads = omp_get_num_threads();
    for (int r = 0; r < 100; ++r) {
      #pragma omp master
      {
        AT_INC(&master_runs);
        master_by = omp_get_thread_num();
      }
      #pragma omp masked
      {
        AT_INC(&masked0_runs);
        masked0_by = omp_get_thread_num();
      }
      #pragma omp masked filter(f)
      {
        AT_INC(&masked1_runs);
        masked1_by = omp_get_thread_num();
      }
      #pragma omp masked filter(omp_get_num_threads())
      AT_INC(&masked_far_runs);
    }
    #pragma omp barrier
  }
  CHECK(master_runs == 100 && master_by == 0, "master ran %d times (want 100), last by thread %d", master_runs,
        master_by);
  CHECK(masked0_runs == 100 && masked0_by == 0, "masked ran %d times (want 100), last by thread %d", masked0_runs,
        masked0_by);
  if (nthreads > 1) {
    CHECK(masked1_runs == 100 && masked1_by == 1, "masked filter(1) ran %d times (want 100), last by thread %d",
          masked1_runs, masked1_by);
  } else {
    CHECK(masked1_runs == 0, "masked filter(1) ran %d times in a team of one", masked1_runs);
  }
  CHECK(masked_far_runs == 0, "masked filter(team size) ran %d times", masked_far_runs);
  PASS();
}
