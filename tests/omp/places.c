/* Places: omp_get_num_places, omp_get_place_num_procs, omp_get_place_proc_ids, omp_get_place_num,
 * omp_get_partition_num_places, omp_get_partition_place_nums — consistent with each other and
 * with where the threads run. With the argument "bound" (run with OMP_PROC_BIND=close) there is
 * at least one place, every member of a team reports a place, is bound inside that place's CPUs,
 * and members get distinct places while there are enough; without binding a thread with no place
 * reports -1. */
#define _GNU_SOURCE
#define TEST_NAME "places"
#include "omp_test.h"
#include <omp.h>
#include <sched.h>

int main(int argc, char **argv) {
  const int bound = argc > 1 && strcmp(argv[1], "bound") == 0;
  const int n = omp_get_num_places();
  CHECK(n >= 0, "omp_get_num_places() = %d", n);
  if (bound) CHECK(n >= 1, "OMP_PROC_BIND=close but no places");
  static int ids[64][CPU_SETSIZE];
  static int nids[64];
  for (int p = 0; p < n && p < 64; ++p) {
    nids[p] = omp_get_place_num_procs(p);
    CHECK(nids[p] >= 1, "place %d has %d processors", p, nids[p]);
    omp_get_place_proc_ids(p, ids[p]);
    for (int k = 0; k < nids[p]; ++k)
      CHECK(ids[p][k] >= 0 && ids[p][k] < CPU_SETSIZE, "place %d: processor id %d", p, ids[p][k]);
  }
  CHECK(omp_get_place_num_procs(-1) == 0 && omp_get_place_num_procs(n) == 0, "a place outside 0..%d has processors", n - 1);

  int threads = omp_get_max_threads();
  static int place_of[256];
  int bad = 0;
  #pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    const int pl = omp_get_place_num();
    if (me < 256) place_of[me] = pl;
    if (pl < -1 || pl >= n) AT_INC(&bad);
    if (bound && n > 0) {
      if (pl < 0) AT_INC(&bad);
      else if (pl < 64) {
        /* the thread's mask lies inside its place */
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
          for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (!CPU_ISSET(c, &set)) continue;
            int in = 0;
            for (int k = 0; k < nids[pl]; ++k) in |= ids[pl][k] == c;
            if (!in) AT_INC(&bad);
          }
        }
      }
    }
    const int pn = omp_get_partition_num_places();
    if (pn < 0 || pn > n) AT_INC(&bad);
    int nums[64];
    if (pn > 0 && pn <= 64) {
      omp_get_partition_place_nums(nums);
      for (int k = 0; k < pn; ++k)
        if (nums[k] < 0 || nums[k] >= n) AT_INC(&bad);
    }
  }
  CHECK(bad == 0, "%d inconsistent place answers inside the team", bad);
  if (bound && threads <= n && threads <= 256) {
    for (int i = 0; i < threads; ++i)
      for (int j = i + 1; j < threads; ++j)
        CHECK(place_of[i] != place_of[j], "members %d and %d share place %d with %d places for %d threads", i, j,
              place_of[i], n, threads);
  }
  if (n == 0) CHECK(omp_get_place_num() == -1, "no places but omp_get_place_num() = %d", omp_get_place_num());
  PASS();
}
