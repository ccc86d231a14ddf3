/* priority: any execution order is allowed, so only completion and the ICV are checked.
 * task_priority [MAX]: the harness sets OMP_MAX_TASK_PRIORITY=MAX (omp_get_max_task_priority reads
 * it back); tasks of priorities 0..MAX+5 (above the maximum is clamped, not an error), from one
 * producer and from every thread, with dependences, and taskloop priority. */
#define TEST_NAME "task_priority"
#include "omp_test.h"
#include <omp.h>

#define NT 1000

static int ran[NT];

int main(int argc, char **argv) {
  int maxp = argc > 1 ? atoi(argv[1]) : 0;
  CHECK(omp_get_max_task_priority() == maxp, "omp_get_max_task_priority() = %d, OMP_MAX_TASK_PRIORITY=%s",
        omp_get_max_task_priority(), getenv("OMP_MAX_TASK_PRIORITY") ? getenv("OMP_MAX_TASK_PRIORITY") : "(unset)");
  int x = 0, chain_bad = 0;
  #pragma omp parallel
  {
    #pragma omp single
    {
      for (int i = 0; i < NT; ++i) {
        #pragma omp task priority(i % (maxp + 6))
        AT_INC(&ran[i]);
      }
      /* a dependence chain where later links have higher priority: order still the chain's */
      for (int k = 0; k < 50; ++k) {
        #pragma omp task depend(inout: x) priority(k % (maxp + 1)) shared(x, chain_bad)
        {
          if (x != k) AT_INC(&chain_bad);
          x = k + 1;
        }
      }
      int tl = 0;
      #pragma omp taskloop priority(maxp) grainsize(10) shared(tl)
      for (int i = 0; i < 500; ++i) AT_INC(&tl);
      CHECK(tl == 500, "taskloop priority(%d): %d of 500 iterations", maxp, tl);
    }
    int me = omp_get_thread_num();
    #pragma omp task priority(me)
    AT_INC(&ran[NT - 1 - me]);
  }
  for (int i = 0; i < NT; ++i) CHECK(ran[i] >= 1, "task %d never ran", i);
  int total = 0;
  for (int i = 0; i < NT; ++i) total += ran[i];
  int nthreads = omp_get_max_threads();
  CHECK(total == NT + nthreads, "%d task runs, want %d", total, NT + nthreads);
  CHECK(chain_bad == 0 && x == 50, "dependence chain with priorities: %d out of order, x = %d", chain_bad, x);
  PASS();
}
