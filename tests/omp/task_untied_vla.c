/* An untied task whose body declares a variable-length array and has task scheduling points after
 * it (a child task, taskyield, taskwait): the array's contents must survive them. clang splits an
 * untied task's body into parts at its scheduling points and re-enters the task function for each
 * part; under libomp 16 such a program crashes (see docs/openmp.md, "Untied tasks"). Deferred and
 * undeferred forms, at several sizes. */
#define TEST_NAME "task_untied_vla"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  for (int n = 1; n <= 64; n *= 2) {
    for (int form = 0; form < 2; ++form) {
      long got = -1;
      #pragma omp task untied if(form == 0) firstprivate(n) shared(got)
      {
        int vla[n];
        for (int i = 0; i < n; ++i) vla[i] = i * 3;
        int kid = 0;
        #pragma omp task shared(kid)
        kid = 1;
        #pragma omp taskyield
        #pragma omp taskwait
        long s = kid;
        for (int i = 0; i < n; ++i) s += vla[i];
        got = s;
      }
      #pragma omp taskwait
      long want = 1 + 3L * n * (n - 1) / 2;
      if (got != want) AT_INC(&bad);
    }
  }
  CHECK(bad == 0, "%d untied tasks lost their variable-length array across a scheduling point", bad);
  PASS();
}
