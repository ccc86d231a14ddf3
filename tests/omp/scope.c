/* scope (OpenMP 5.1): a structured block that every thread of the team executes, with private and
 * reduction clauses (the reduction combined at the scope's implicit barrier, GOMP_scope_start for
 * the task-reduction form), and nowait. */
#define TEST_NAME "scope"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int n = 0, sum = 0, after_bad = 0, priv = 5;
  long tsum = 0;
  #pragma omp parallel
  {
    #pragma omp single
    n = omp_get_num_threads();
    #pragma omp scope reduction(+ : sum) private(priv)
    {
      priv = omp_get_thread_num();
      sum += priv + 1;
    }
    /* the implicit barrier of scope: the reduction is complete */
    if (sum != n * (n + 1) / 2) AT_INC(&after_bad);
    #pragma omp scope reduction(task, + : tsum)
    {
      tsum += 1;
      #pragma omp task in_reduction(+ : tsum)
      tsum += 100;
    }
    #pragma omp scope nowait
    AT_INC(&after_bad);
  }
  CHECK(after_bad == n, "after scope: %d threads saw an incomplete reduction", after_bad - n);
  CHECK(sum == n * (n + 1) / 2, "scope reduction: %d, want %d", sum, n * (n + 1) / 2);
  CHECK(tsum == 101L * n, "scope reduction(task, +): %ld, want %ld", tsum, 101L * n);
  CHECK(priv == 5, "scope private leaked: %d", priv);
  PASS();
}
