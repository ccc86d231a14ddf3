/* target offload, which the Plait runtime does not implement: on libgomp (no offload device here)
 * the region runs on the host and the program checks its answer; on Plait the program must stop
 * at GOMP_target_ext with the one-line refusal naming it (PLAIT_OMP_REFUSED), never run on. */
#define TEST_NAME "target_host"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int a[64];
  for (int i = 0; i < 64; ++i) a[i] = i;
  long sum = 0;
  #pragma omp target map(to : a) map(tofrom : sum)
  for (int i = 0; i < 64; ++i) sum += a[i];
  CHECK(sum == 64 * 63 / 2, "target region on the host: sum %ld, want %d", sum, 64 * 63 / 2);
  PASS();
}
