/* threadprivate: each thread has its own copy (values differ per thread within a region), the
 * copies persist between regions with the same number of threads, dyn-var false and no nesting
 * (thread i finds in region 2 what thread i wrote in region 1), the master's copy is the original
 * outside regions, copyin copies the master's value to every thread at region start, and
 * copyprivate broadcasts one thread's copy. Static and file-scope variables, an array, a struct. */
#define TEST_NAME "threadprivate"
#include "omp_test.h"
#include <omp.h>

typedef struct {
  int id;
  double w[3];
} tpstruct;

static int tp_int;
static long tp_arr[4];
static tpstruct tp_s;
#pragma omp threadprivate(tp_int, tp_arr, tp_s)

int main(void) {
  CHECK(omp_get_dynamic() == 0, "dyn-var should be false by default for this test");
  static int tp_local = 5;
  #pragma omp threadprivate(tp_local)
  int n = 0, bad = 0;
  for (int round = 0; round < 5; ++round) {
    #pragma omp parallel
    {
      int me = omp_get_thread_num();
      #pragma omp single
      n = omp_get_num_threads();
      if (round > 0) {
        /* what this thread number wrote in the previous region */
        if (tp_int != (round - 1) * 100 + me || tp_arr[3] != -(long)me || tp_s.id != me || tp_local != me + round - 1)
          AT_INC(&bad);
      }
      tp_int = round * 100 + me;
      tp_arr[3] = -(long)me;
      tp_s.id = me;
      tp_s.w[2] = me * 0.5;
      tp_local = me + round;
      #pragma omp barrier
      /* everybody's own copy, untouched by the others */
      if (tp_int != round * 100 + me || tp_s.w[2] != me * 0.5) AT_INC(&bad);
    }
    /* outside: the initial thread's copy (thread 0's) */
    if (tp_int != round * 100 || tp_s.id != 0) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d threadprivate copies were shared or did not persist between regions", bad);

  /* copyin: the master's values reach every thread */
  tp_int = 777;
  tp_arr[0] = 11;
  tp_arr[3] = 33;
  tp_s.id = 4242;
  tp_s.w[0] = 1.25;
  tp_local = -9;
  int copied_bad = 0;
  #pragma omp parallel copyin(tp_int, tp_arr, tp_s, tp_local)
  {
    if (tp_int != 777 || tp_arr[0] != 11 || tp_arr[3] != 33 || tp_s.id != 4242 || tp_s.w[0] != 1.25 ||
        tp_local != -9)
      AT_INC(&copied_bad);
    tp_int = omp_get_thread_num();
  }
  CHECK(copied_bad == 0, "copyin: %d threads did not get the master's values", copied_bad);
  CHECK(tp_int == 0, "after the region the master's copy is %d, want 0", tp_int);

  /* copyprivate of a threadprivate variable */
  int cp_bad = 0;
  #pragma omp parallel
  {
    #pragma omp single copyprivate(tp_int)
    tp_int = 31337;
    if (tp_int != 31337) AT_INC(&cp_bad);
  }
  CHECK(cp_bad == 0, "copyprivate of a threadprivate variable: %d threads missed it", cp_bad);
  CHECK(n >= 1, "team of %d", n);
  PASS();
}
