/* OMP_PROC_BIND / OMP_PLACES (set by the test) must not confine a team to one CPU: the CPUs the
 * members may run on, together, number at least min(team size, CPUs the program was started with).
 * The CPUs it was started with are its parent's (ctest's) affinity: when libgomp is loaded it binds
 * the initial thread in its constructor, before main, so the program's own mask may already be one
 * CPU. (A runtime preloaded over libgomp whose threads inherited that binding ran every team on
 * one CPU.) */
#define _GNU_SOURCE
#define TEST_NAME "proc_bind"
#include "omp_test.h"
#include <omp.h>
#include <sched.h>

int main(void) {
  cpu_set_t started, seen;
  CPU_ZERO(&started);
  CPU_ZERO(&seen);
  CHECK(sched_getaffinity(getppid(), sizeof started, &started) == 0, "cannot read the parent's CPU affinity");
  int n = 0, bad = 0;
  #pragma omp parallel shared(seen, n, bad)
  {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) AT_INC(&bad);
    #pragma omp critical
    CPU_OR(&seen, &seen, &mine);
    #pragma omp single
    n = omp_get_num_threads();
  }
  CHECK(bad == 0, "sched_getaffinity failed in %d threads", bad);
  const int want = n < CPU_COUNT(&started) ? n : CPU_COUNT(&started);
  CHECK(CPU_COUNT(&seen) >= want, "a team of %d may run on %d CPUs only, of the %d the program was started with",
        n, CPU_COUNT(&seen), CPU_COUNT(&started));
  PASS();
}
