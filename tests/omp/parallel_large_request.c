/* A parallel region asking for more threads than the runtime has: num_threads is a request bounded
 * by thread-limit-var, so the region runs with the largest team the runtime gives (libgomp starts
 * them all; Plait's largest team is 1024 threads, which omp_get_thread_limit() reports) — never a
 * stop. Output the program buffered before the region is still printed. Also inside `teams` with
 * a thread_limit clause (SOLLVE's form). */
#define TEST_NAME "parallel_large_request"
#include "omp_test.h"
#include <omp.h>

#define ASK 2000

int main(void) {
  printf("before the region\n"); /* buffered: lost if the runtime stopped the program */
  const int limit = omp_get_thread_limit();
  CHECK(limit >= 1, "omp_get_thread_limit() = %d", limit);
  int n = 0, ids = 0, bad = 0;
  long sum = 0;
  #pragma omp parallel num_threads(ASK) shared(n, ids, bad) reduction(+: sum)
  {
    #pragma omp single
    n = omp_get_num_threads();
    if (omp_get_thread_num() >= omp_get_num_threads()) AT_INC(&bad);
    AT_INC(&ids);
    #pragma omp for
    for (int i = 0; i < 10000; ++i) sum += i;
  }
  CHECK(n >= 1 && n <= ASK && n <= limit, "num_threads(%d) gave %d threads (thread limit %d)", ASK, n, limit);
  CHECK(ids == n && bad == 0, "%d members of a team of %d ran (%d bad thread numbers)", ids, n, bad);
  CHECK(sum == 10000L * 9999 / 2, "the loop's sum is %ld", sum);
  if (n < ASK) NOTE("num_threads(%d) gave %d threads (the runtime's limit %d)", ASK, n, limit);

  int tn = 0;
  #pragma omp teams num_teams(1) thread_limit(ASK)
  #pragma omp parallel num_threads(ASK) shared(tn)
  #pragma omp single
  tn = omp_get_num_threads();
  CHECK(tn >= 1 && tn <= ASK, "in teams thread_limit(%d), num_threads(%d) gave %d threads", ASK, ASK, tn);
  PASS();
}
