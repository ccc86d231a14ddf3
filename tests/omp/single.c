/* single: exactly one thread runs each single region, the others wait at its implicit barrier
 * (the executor's write is visible to all after it), nowait drops that barrier; copyprivate
 * broadcasts the executor's private values (scalars, a struct, a pointer) to every thread
 * (GOMP_single_copy_start/end), also many times in a row. */
#define TEST_NAME "single"
#include "omp_test.h"
#include <omp.h>

#define MAXT 64
#define ROUNDS 40

struct blob {
  double d;
  int v[5];
  char tag[8];
};

int main(void) {
  int executions[ROUNDS];
  memset(executions, 0, sizeof executions);
  int bad_visible = 0, bad_copy = 0, nowait_execs = 0, nthreads = 0;
  #pragma omp parallel
  {
    #pragma omp single
    nthreads = omp_get_num_threads();
    for (int r = 0; r < ROUNDS; ++r) {
      #pragma omp single
      {
        AT_INC(&executions[r]);
      }
      /* implicit barrier: the increment is done */
      if (AT_LOAD(&executions[r]) != 1) AT_INC(&bad_visible);
    }
    for (int r = 0; r < ROUNDS; ++r) {
      #pragma omp single nowait
      AT_INC(&nowait_execs);
    }
    #pragma omp barrier

    /* copyprivate of scalars and a struct */
    for (int r = 0; r < ROUNDS; ++r) {
      int x;
      double y;
      struct blob b;
      int who;
      #pragma omp single copyprivate(x, y, b, who)
      {
        who = omp_get_thread_num();
        x = r * 3 + who;
        y = r * 0.5;
        b.d = -r;
        for (int k = 0; k < 5; ++k) b.v[k] = r + k;
        memcpy(b.tag, "plait01", 8);
      }
      int ok = x == r * 3 + who && y == r * 0.5 && b.d == -r && memcmp(b.tag, "plait01", 8) == 0;
      for (int k = 0; k < 5; ++k) ok = ok && b.v[k] == r + k;
      if (!ok) AT_INC(&bad_copy);
    }

    /* copyprivate of a pointer: everybody ends up with the executor's allocation */
    int *p = NULL;
    #pragma omp single copyprivate(p)
    {
      p = (int *)calloc(MAXT, sizeof(int));
    }
    if (p == NULL) {
      AT_INC(&bad_copy);
    } else {
      AT_INC(&p[omp_get_thread_num()]);
    }
    #pragma omp barrier
    #pragma omp single
    {
      if (p != NULL) {
        for (int t = 0; t < omp_get_num_threads(); ++t)
          if (p[t] != 1) AT_INC(&bad_copy);
        free(p);
      }
    }
  }
  for (int r = 0; r < ROUNDS; ++r)
    CHECK(executions[r] == 1, "single region %d ran %d times", r, executions[r]);
  CHECK(bad_visible == 0, "%d times a thread left a single before its write was done", bad_visible);
  CHECK(nowait_execs == ROUNDS, "%d single nowait regions ran %d times in all", ROUNDS, nowait_execs);
  CHECK(bad_copy == 0, "copyprivate: %d threads saw values other than the executor's", bad_copy);
  CHECK(nthreads >= 1, "team of %d", nthreads);
  PASS();
}
