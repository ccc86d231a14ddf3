/* untied tasks: with task scheduling points inside (taskwait, taskyield, child creation) an untied
 * task may resume on another thread; its private data and results must survive that. A recursive
 * sum with untied tasks, untied tasks that yield in a loop, and omp_get_thread_num read consistently
 * (a valid thread number of the team at every point). */
#define TEST_NAME "task_untied"
#include "omp_test.h"
#include <omp.h>

static long sum_range(int lo, int hi) {
  if (hi - lo <= 16) {
    long s = 0;
    for (int i = lo; i < hi; ++i) s += i;
    return s;
  }
  long a = 0, b = 0;
  int mid = lo + (hi - lo) / 2;
  #pragma omp task untied shared(a)
  a = sum_range(lo, mid);
  #pragma omp task untied shared(b)
  b = sum_range(mid, hi);
  #pragma omp taskwait
  return a + b;
}

int main(void) {
  long total = -1;
  int bad_tid = 0, done = 0;
  #pragma omp parallel
  {
    int n = omp_get_num_threads();
    #pragma omp single
    {
      #pragma omp task untied shared(total)
      total = sum_range(0, 20000);
      for (int t = 0; t < 64; ++t) {
        #pragma omp task untied
        {
          long local = t;
          for (int k = 0; k < 20; ++k) {
            int me = omp_get_thread_num();
            if (me < 0 || me >= n) AT_INC(&bad_tid);
            local += k;
            #pragma omp taskyield
          }
          if (local != t + 190) AT_INC(&bad_tid);
          AT_INC(&done);
        }
      }
    }
  }
  CHECK(total == 20000L * 19999 / 2, "untied recursive sum %ld, want %ld", total, 20000L * 19999 / 2);
  CHECK(bad_tid == 0, "%d bad thread numbers or lost private values in untied tasks", bad_tid);
  CHECK(done == 64, "%d of 64 yielding untied tasks completed", done);
  PASS();
}
