/* mergeable: a runtime may merge a mergeable undeferred or included task into its generating task
 * (sharing its data environment) or run it as usual; the program is written so that both are right
 * (only shared variables are written) and checks the results of both paths: plain deferred, if(0),
 * and final subtrees where merging is most likely. */
#define TEST_NAME "task_mergeable"
#include "omp_test.h"
#include <omp.h>

static long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  #pragma omp task mergeable shared(a) final(n < 12)
  a = fib(n - 1);
  #pragma omp task mergeable shared(b) final(n < 12)
  b = fib(n - 2);
  #pragma omp taskwait
  return a + b;
}

int main(void) {
  int count = 0;
  long f = -1;
  #pragma omp parallel
  #pragma omp single
  {
    for (int i = 0; i < 300; ++i) {
      #pragma omp task mergeable shared(count)
      AT_INC(&count);
      #pragma omp task mergeable if(0) shared(count)
      AT_INC(&count);
    }
    #pragma omp taskwait
    CHECK(AT_LOAD(&count) == 600, "mergeable tasks: %d of 600 ran", count);
    f = fib(20);
  }
  CHECK(f == 6765, "mergeable/final fib(20) = %ld", f);
  PASS();
}
