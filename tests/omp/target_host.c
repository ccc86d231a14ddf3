/* target constructs with no offload device: the regions run on the host (host fallback), as on
 * libgomp without devices. Checks map(to/tofrom/from) results, firstprivate (the region writes its
 * own copy), a target region starting from the initial ICVs, thread_limit bounding its parallel
 * regions, target teams distribute (num_teams(k) with a lower bound: k teams, or 2..5 for 2:5),
 * nowait targets as deferred tasks in a dependence chain, target data / update / enter / exit data,
 * and the device memory routines on the initial device (alloc, memcpy, memcpy_rect, is_present,
 * free; associate is refused with EINVAL).
 * Argument "missing-device": a target region on device 5 (which does not exist) under
 * OMP_TARGET_OFFLOAD=mandatory, which must stop the program (checked by the harness). */
#define TEST_NAME "target_host"
#include "omp_test.h"
#include <errno.h>
#include <omp.h>

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "missing-device")) {
    int x = 0;
    #pragma omp target device(5) map(tofrom : x)
    x = 1;
    CHECK(0, "a target region on device 5 ran (x = %d) under OMP_TARGET_OFFLOAD=mandatory", x);
  }
  const int host = omp_get_initial_device();
  CHECK(omp_get_num_devices() >= 0 && host >= 0, "device numbers: %d devices, initial device %d",
        omp_get_num_devices(), host);

  int a[64];
  for (int i = 0; i < 64; ++i) a[i] = i;
  long sum = 0;
  int fp = 5, seen_fp = -1, on_host = -1;
  #pragma omp target map(to : a) map(tofrom : sum) firstprivate(fp) map(from : seen_fp, on_host)
  {
    for (int i = 0; i < 64; ++i) sum += a[i];
    seen_fp = fp;
    fp = 99;
    on_host = omp_is_initial_device();
  }
  CHECK(sum == 64 * 63 / 2, "target region: sum %ld, want %d", sum, 64 * 63 / 2);
  CHECK(seen_fp == 5 && fp == 5, "firstprivate: the region saw %d, the variable is %d afterwards", seen_fp, fp);
  if (omp_get_num_devices() == 0) CHECK(on_host == 1, "no device, yet the region did not run on the host");

  /* the region starts from the initial ICVs; the encountering task's are left as they were */
  const int initial_max = omp_get_max_threads();
  omp_set_num_threads(initial_max + 2);
  int inside_max = -1;
  #pragma omp target map(from : inside_max)
  inside_max = omp_get_max_threads();
  CHECK(inside_max == initial_max, "inside a target region omp_get_max_threads() is %d, want the initial %d",
        inside_max, initial_max);
  CHECK(omp_get_max_threads() == initial_max + 2, "after a target region omp_get_max_threads() is %d, want %d",
        omp_get_max_threads(), initial_max + 2);
  omp_set_num_threads(initial_max);

  int team = -1, limit = -1;
  #pragma omp target thread_limit(2) map(from : team, limit)
  {
    #pragma omp parallel num_threads(4)
    #pragma omp single
    {
      team = omp_get_num_threads();
      limit = omp_get_thread_limit();
    }
  }
  CHECK(team >= 1 && team <= 2 && limit == 2, "thread_limit(2): a region of %d threads, limit %d", team, limit);

  int hits[1000], nteams = -1;
  memset(hits, 0, sizeof hits);
  #pragma omp target teams distribute num_teams(4) map(tofrom : hits) map(from : nteams)
  for (int i = 0; i < 1000; ++i) {
    hits[i]++;
    if (i == 0) nteams = omp_get_num_teams();
  }
  for (int i = 0; i < 1000; ++i) CHECK(hits[i] == 1, "target teams distribute: iteration %d ran %d times", i, hits[i]);
  CHECK(nteams == 4, "num_teams(4): %d teams", nteams);
  memset(hits, 0, sizeof hits);
  #pragma omp target teams distribute parallel for num_teams(2 : 5) map(tofrom : hits) map(from : nteams)
  for (int i = 0; i < 1000; ++i) {
    hits[i]++;
    if (i == 0) nteams = omp_get_num_teams();
  }
  for (int i = 0; i < 1000; ++i) CHECK(hits[i] == 1, "teams distribute parallel for: iteration %d ran %d times", i, hits[i]);
  CHECK(nteams >= 2 && nteams <= 5, "num_teams(2:5): %d teams", nteams);

  /* nowait targets are deferred tasks with dependences: 1, then *10, then +3 */
  for (int round = 0; round < 20; ++round) {
    int v = 0;
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
      #pragma omp task depend(out : v) shared(v)
      v = 1;
      #pragma omp target nowait depend(inout : v) map(tofrom : v)
      v = v * 10;
      #pragma omp task depend(in : v) shared(v)
      v = v + 3;
      #pragma omp taskwait
    }
    CHECK(v == 13, "nowait target in a dependence chain: %d, want 13", v);
  }
  /* a nowait target's firstprivate copy is taken at the construct */
  int late = 0;
  #pragma omp parallel num_threads(2)
  #pragma omp single
  {
    int src = 7;
    #pragma omp target nowait firstprivate(src) map(from : late) depend(out : late)
    late = src;
    src = 8;
    #pragma omp taskwait
    (void)src;
  }
  CHECK(late == 7, "nowait target firstprivate: the region saw %d, want 7", late);

  /* data constructs */
  for (int i = 0; i < 64; ++i) a[i] = i;
  #pragma omp target data map(tofrom : a)
  {
    #pragma omp target update to(a)
    #pragma omp target
    a[0] = 42;
    #pragma omp target update from(a)
  }
  CHECK(a[0] == 42, "target data: a[0] = %d, want 42", a[0]);
  #pragma omp target enter data map(to : a)
  #pragma omp target
  a[1] = 43;
  #pragma omp target exit data map(from : a)
  CHECK(a[1] == 43, "enter/exit data: a[1] = %d, want 43", a[1]);

  /* device memory routines on the initial device */
  int *p = omp_target_alloc(16 * sizeof(int), host);
  CHECK(p != NULL, "omp_target_alloc on the initial device returned NULL");
  CHECK(omp_target_memcpy(p, a, 16 * sizeof(int), 0, 0, host, host) == 0 && p[0] == 42 && p[15] == 15,
        "omp_target_memcpy on the initial device");
  CHECK(omp_target_memcpy(p, a, sizeof(int), 2 * sizeof(int), 5 * sizeof(int), host, host) == 0 && p[2] == 5,
        "omp_target_memcpy with offsets");
  CHECK(omp_target_is_present(a, host) == 1, "omp_target_is_present on the initial device");
  omp_target_free(p, host);
  int src[3][4], dst[3][4];
  for (int i = 0; i < 12; ++i) ((int *)src)[i] = i;
  memset(dst, 0, sizeof dst);
  size_t vol[2] = {2, 2}, doff[2] = {1, 1}, soff[2] = {0, 2}, ddim[2] = {3, 4}, sdim[2] = {3, 4};
  CHECK(omp_target_memcpy_rect(dst, src, sizeof(int), 2, vol, doff, soff, ddim, sdim, host, host) == 0,
        "omp_target_memcpy_rect failed");
  CHECK(dst[1][1] == 2 && dst[1][2] == 3 && dst[2][1] == 6 && dst[2][2] == 7 && dst[0][0] == 0 && dst[1][3] == 0,
        "omp_target_memcpy_rect: wrong block %d %d %d %d", dst[1][1], dst[1][2], dst[2][1], dst[2][2]);
  CHECK(omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, host, host) >= 3,
        "omp_target_memcpy_rect: fewer than 3 dimensions supported");
  CHECK(omp_target_associate_ptr(a, dst, sizeof a, 0, host) == EINVAL, "omp_target_associate_ptr on the host");
  CHECK(omp_target_disassociate_ptr(a, host) == EINVAL, "omp_target_disassociate_ptr on the host");
  PASS();
}
