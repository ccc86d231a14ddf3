/* critical under contention: unnamed and named regions exclude each other's holders exactly
 * (a non-atomic read-modify-write counted exactly, and an atomic "inside" count that must never
 * exceed 1); two different names are independent locks (each still exclusive on its own); the
 * same name in two functions is the same lock; critical inside tasks; hint clause. */
#define TEST_NAME "critical"
#include "omp_test.h"
#include <omp.h>

#define ITERS 2000

static long plain_a, plain_b, plain_c;
static int in_a, in_b, in_c, max_a, max_b, max_c;

static void touch_c_from_function(void) {
  #pragma omp critical(gamma)
  {
    AT_MAX(&max_c, AT_INC(&in_c));
    long v = plain_c;
    ot_spin_work(3);
    plain_c = v + 1;
    AT_DEC(&in_c);
  }
}

int main(void) {
  int nthreads = 0;
  #pragma omp parallel
  {
    #pragma omp single
    nthreads = omp_get_num_threads();
    for (int i = 0; i < ITERS; ++i) {
      #pragma omp critical
      {
        AT_MAX(&max_a, AT_INC(&in_a));
        long v = plain_a;
        ot_spin_work(3);
        plain_a = v + 1;
        AT_DEC(&in_a);
      }
      #pragma omp critical(beta)
      {
        AT_MAX(&max_b, AT_INC(&in_b));
        long v = plain_b;
        plain_b = v + 2;
        AT_DEC(&in_b);
      }
      if (i % 2) {
        #pragma omp critical(gamma) hint(omp_sync_hint_contended)
        {
          AT_MAX(&max_c, AT_INC(&in_c));
          long v = plain_c;
          plain_c = v + 1;
          AT_DEC(&in_c);
        }
      } else {
        touch_c_from_function();
      }
    }
  }
  long want = (long)nthreads * ITERS;
  CHECK(plain_a == want, "unnamed critical: counter %ld, want %ld", plain_a, want);
  CHECK(plain_b == 2 * want, "critical(beta): counter %ld, want %ld", plain_b, 2 * want);
  CHECK(plain_c == want, "critical(gamma) in two places: counter %ld, want %ld", plain_c, want);
  CHECK(max_a == 1 && max_b == 1 && max_c == 1, "threads inside at once: unnamed %d, beta %d, gamma %d", max_a,
        max_b, max_c);

  /* critical inside tasks created by every thread */
  plain_a = 0;
  max_a = 0;
  #pragma omp parallel
  {
    for (int i = 0; i < 200; ++i) {
      #pragma omp task
      {
        #pragma omp critical
        {
          AT_MAX(&max_a, AT_INC(&in_a));
          long v = plain_a;
          plain_a = v + 1;
          AT_DEC(&in_a);
        }
      }
    }
  }
  CHECK(plain_a == 200L * nthreads && max_a == 1, "critical in tasks: counter %ld want %ld, most inside %d",
        plain_a, 200L * nthreads, max_a);
  PASS();
}
