/* taskyield: a task scheduling point that may switch to another task (it need not). Tasks that
 * yield in loops keep their private state and all complete; the implicit task and a task creating
 * children yield too; a task polls a flag set by another task, yielding between polls (a bounded
 * number of them: yield need not switch, so only completion is checked). */
#define TEST_NAME "taskyield"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int done = 0, bad = 0, flag = 0, polls_done = 0;
  #pragma omp parallel
  {
    #pragma omp taskyield
    #pragma omp single
    {
      for (int t = 0; t < 200; ++t) {
        #pragma omp task firstprivate(t) shared(done, bad)
        {
          long acc = 0;
          for (int k = 0; k < 10; ++k) {
            acc += t + k;
            #pragma omp taskyield
          }
          if (acc != 10L * t + 45) AT_INC(&bad);
          AT_INC(&done);
        }
        if (t % 10 == 0) {
          #pragma omp taskyield
        }
      }
      #pragma omp task shared(flag)
      AT_STORE(&flag, 1);
      #pragma omp task shared(flag, polls_done)
      {
        for (int k = 0; k < 1000 && !AT_LOAD(&flag); ++k) {
          #pragma omp taskyield
        }
        AT_INC(&polls_done);
      }
      #pragma omp taskwait
      if (AT_LOAD(&done) != 200 || AT_LOAD(&flag) != 1 || AT_LOAD(&polls_done) != 1) AT_INC(&bad);
    }
  }
  CHECK(done == 200, "%d of 200 yielding tasks completed", done);
  CHECK(bad == 0, "%d yielding tasks lost private state (or taskwait returned early)", bad);
  PASS();
}
