/* task if(0): an undeferred task. The generating task does not continue until it has completed
 * (its writes are visible right after the construct, checked every time); an undeferred task that
 * creates deferred tasks itself; if(expr) at run time; and an undeferred task with depend waits for
 * its predecessors before it runs (GOMP_task with if false still honours the dependences). */
#define TEST_NAME "task_if0"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int bad = 0, total = 0;
  #pragma omp parallel
  {
    for (int i = 0; i < 200; ++i) {
      int flag = 0;
      #pragma omp task if(0) shared(flag)
      {
        ot_spin_work(20);
        flag = 1;
      }
      if (flag != 1) AT_INC(&bad);
      int g = 0;
      #pragma omp task if(i % 2) shared(g)
      g = 1;
      if (i % 2 == 0 && g != 1) AT_INC(&bad);
      #pragma omp taskwait
      if (g != 1) AT_INC(&bad);
    }
    /* an undeferred task creating deferred children: they belong to it and taskwait inside waits */
    #pragma omp task if(0)
    {
      int kids = 0;
      for (int k = 0; k < 8; ++k) {
        #pragma omp task shared(kids)
        AT_INC(&kids);
      }
      #pragma omp taskwait
      if (kids != 8) AT_INC(&bad);
      AT_ADD(&total, kids);
    }
  }
  CHECK(bad == 0, "%d times an if(0) task had not completed when the generating task went on", bad);

  /* if(0) with depend: waits for the deferred writer it depends on */
  int x = 0, seen = -1, order_bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int r = 0; r < 100; ++r) {
      #pragma omp task depend(out: x) shared(x)
      {
        ot_spin_work(200);
        AT_STORE(&x, r + 1);
      }
      #pragma omp task if(0) depend(in: x) shared(x, seen)
      seen = AT_LOAD(&x);
      if (seen != r + 1) AT_INC(&order_bad);
    }
  }
  CHECK(order_bad == 0, "%d times an if(0) task with depend(in) ran before its out predecessor", order_bad);
  PASS();
}
