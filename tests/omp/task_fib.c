/* Tasks creating tasks: fib(n) with a task per call down to the leaves (no cut-off), so tens of
 * thousands of small tasks with taskwait at every level; compared with the closed sum. Also a
 * wide-and-deep tree counted exactly. */
#define TEST_NAME "task_fib"
#include "omp_test.h"
#include <omp.h>

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a)
  a = fib(n - 1);
  #pragma omp task shared(b)
  b = fib(n - 2);
  #pragma omp taskwait
  return a + b;
}

static int nodes;

static void tree(int depth, int fan) {
  AT_INC(&nodes);
  if (depth == 0) return;
  for (int i = 0; i < fan; ++i) {
    #pragma omp task
    tree(depth - 1, fan);
  }
  #pragma omp taskwait
}

int main(void) {
  long want[21] = {0, 1};
  for (int i = 2; i <= 20; ++i) want[i] = want[i - 1] + want[i - 2];
  long got17 = -1, got20 = -1;
  #pragma omp parallel
  {
    #pragma omp single
    {
      got17 = fib(17);
      got20 = fib(20);
    }
    /* every thread starts its own tree at once */
    tree(3, 5);
  }
  CHECK(got17 == want[17], "fib(17) = %ld, want %ld", got17, want[17]);
  CHECK(got20 == want[20], "fib(20) = %ld, want %ld", got20, want[20]);
  int per = 1 + 5 + 25 + 125;
  int n = omp_get_max_threads();
  CHECK(nodes == per * n, "trees: %d nodes, want %d", nodes, per * n);
  PASS();
}
