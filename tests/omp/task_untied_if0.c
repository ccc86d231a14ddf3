/* An untied task made undeferred by if(0), with task scheduling points in its body (a child task,
 * taskwait, taskyield): it runs to its end before the construct completes, its children included,
 * and its private data survive the scheduling points. clang splits an untied task's body into parts
 * at those points; libomp 16 stops such a program on an assertion (td_last_tied) when the task is
 * undeferred. Also an untied if(0) task inside a deferred one, and one that is final. */
#define TEST_NAME "task_untied_if0"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  for (int round = 0; round < 50; ++round) {
    int done = 0, child = 0;
    long local_sum = 0;
    #pragma omp task untied if(0) shared(done, child, local_sum)
    {
      long mine = round;
      #pragma omp task shared(child)
      AT_INC(&child);
      #pragma omp taskwait
      mine += child;  /* the child is complete after the taskwait */
      #pragma omp taskyield
      for (int k = 0; k < 10; ++k) {
        mine += k;
        #pragma omp taskyield
      }
      local_sum = mine;
      done = 1;
    }
    /* undeferred: complete before the construct ends */
    if (!done || child != 1 || local_sum != round + 1 + 45) AT_INC(&bad);

    int inner_done = 0;
    #pragma omp task shared(inner_done)
    {
      #pragma omp task untied if(0) shared(inner_done)
      {
        #pragma omp taskyield
        AT_INC(&inner_done);
      }
      if (AT_LOAD(&inner_done) != 1) AT_INC(&bad);
    }
    #pragma omp taskwait
    int fin = 0;
    #pragma omp task untied final(1) shared(fin)
    {
      #pragma omp task shared(fin)
      AT_INC(&fin);
      #pragma omp taskyield
      AT_INC(&fin);
    }
    #pragma omp taskwait
    if (inner_done != 1 || fin != 2) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d untied undeferred tasks ran out of order or lost their data", bad);
  PASS();
}
