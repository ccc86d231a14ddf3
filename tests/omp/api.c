/* omp_* queries and setters, read against each other: thread and team numbers outside and inside
 * regions, omp_get_num_procs, omp_get_max_threads and omp_set_num_threads, omp_in_parallel (active
 * regions only), levels and active levels, omp_get_ancestor_thread_num and omp_get_team_size at every
 * level and out of range, omp_get_wtime nondecreasing (per thread) and omp_get_wtick positive, dynamic
 * get/set, max active levels get/set (clamped to the supported number), thread limit, proc_bind and
 * places queries (valid values), schedule get/set round trip, cancellation default off, task
 * priority default, in_final, initial/default device, teams numbers on the host, omp_get_num_devices. */
#define TEST_NAME "api"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  CHECK(omp_get_num_procs() >= 1, "omp_get_num_procs() = %d", omp_get_num_procs());
  CHECK(omp_get_thread_num() == 0 && omp_get_num_threads() == 1, "outside: thread %d of %d", omp_get_thread_num(),
        omp_get_num_threads());
  CHECK(!omp_in_parallel() && omp_get_level() == 0 && omp_get_active_level() == 0,
        "outside: in_parallel %d level %d active %d", omp_in_parallel(), omp_get_level(), omp_get_active_level());
  CHECK(omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(0) == 1, "outside: level 0 ancestor %d size %d",
        omp_get_ancestor_thread_num(0), omp_get_team_size(0));
  CHECK(omp_get_ancestor_thread_num(1) == -1 && omp_get_team_size(1) == -1 && omp_get_ancestor_thread_num(-1) == -1,
        "outside: levels that do not exist must give -1");
  CHECK(!omp_in_final(), "omp_in_final() outside");
  CHECK(omp_get_thread_limit() >= 1, "omp_get_thread_limit() = %d", omp_get_thread_limit());
  CHECK(omp_get_max_task_priority() == 0, "default omp_get_max_task_priority() = %d", omp_get_max_task_priority());
  if (!getenv("OMP_CANCELLATION")) CHECK(omp_get_cancellation() == 0, "cancellation on by default");
  CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0, "host: %d teams, team %d", omp_get_num_teams(),
        omp_get_team_num());
  CHECK(omp_is_initial_device(), "omp_is_initial_device() false on the host");
  CHECK(omp_get_num_devices() >= 0 && omp_get_initial_device() >= -1, "devices %d initial %d", omp_get_num_devices(),
        omp_get_initial_device());

  /* max threads and omp_set_num_threads */
  int maxt = omp_get_max_threads();
  CHECK(maxt >= 1, "omp_get_max_threads() = %d", maxt);
  omp_set_num_threads(5);
  CHECK(omp_get_max_threads() == 5, "after omp_set_num_threads(5): %d", omp_get_max_threads());
  int got = 0;
  #pragma omp parallel
  #pragma omp single
  got = omp_get_num_threads();
  CHECK(got == 5, "a region after omp_set_num_threads(5) has %d threads", got);
  omp_set_num_threads(maxt);

  /* inside a region of 3 */
  int bad = 0;
  #pragma omp parallel num_threads(3)
  {
    int me = omp_get_thread_num();
    if (omp_get_num_threads() != 3 || !omp_in_parallel() || omp_get_level() != 1 || omp_get_active_level() != 1)
      AT_INC(&bad);
    if (omp_get_ancestor_thread_num(1) != me || omp_get_ancestor_thread_num(0) != 0) AT_INC(&bad);
    if (omp_get_team_size(1) != 3 || omp_get_team_size(0) != 1 || omp_get_team_size(2) != -1) AT_INC(&bad);
    if (omp_get_max_threads() < 1) AT_INC(&bad);
    /* a task inside sees the same team */
    #pragma omp task shared(bad)
    if (omp_get_num_threads() != 3 || omp_get_level() != 1) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d inconsistent answers inside a region of 3", bad);

  /* a team of one is an inactive region: in_parallel false, level 1, active level 0 */
  int one_inpar = -1, one_level = -1, one_active = -1;
  #pragma omp parallel num_threads(1)
  {
    one_inpar = omp_in_parallel();
    one_level = omp_get_level();
    one_active = omp_get_active_level();
  }
  CHECK(one_inpar == 0 && one_level == 1 && one_active == 0, "team of one: in_parallel %d level %d active %d",
        one_inpar, one_level, one_active);

  /* wtime / wtick */
  double t0 = omp_get_wtime(), prev = t0;
  for (int i = 0; i < 10000; ++i) {
    double t = omp_get_wtime();
    CHECK(t >= prev, "omp_get_wtime went backwards: %.9f after %.9f", t, prev);
    prev = t;
  }
  CHECK(omp_get_wtick() > 0, "omp_get_wtick() = %g", omp_get_wtick());
  /* each thread's own clock is nondecreasing too (the standard does not make them consistent
   * with each other, so threads are not compared) */
  int clock_bad = 0;
  #pragma omp parallel
  {
    double p = omp_get_wtime();
    for (int i = 0; i < 1000; ++i) {
      double t = omp_get_wtime();
      if (t < p) AT_INC(&clock_bad);
      p = t;
    }
  }
  CHECK(clock_bad == 0, "omp_get_wtime went backwards %d times in team threads", clock_bad);

  /* dynamic */
  CHECK(omp_get_dynamic() == 0, "default dyn-var %d (OMP_DYNAMIC unset)", omp_get_dynamic());
  omp_set_dynamic(1);
  int dyn = omp_get_dynamic();
  CHECK(dyn == 0 || dyn == 1, "omp_get_dynamic() after set(1): %d", dyn);
  omp_set_dynamic(0);
  CHECK(omp_get_dynamic() == 0, "omp_get_dynamic() after set(0): %d", omp_get_dynamic());

  /* max active levels */
  int supported = omp_get_supported_active_levels();
  CHECK(supported >= 1, "omp_get_supported_active_levels() = %d", supported);
  omp_set_max_active_levels(3);
  int mal = omp_get_max_active_levels();
  CHECK(mal == (supported < 3 ? supported : 3), "set_max_active_levels(3) then get: %d (supported %d)", mal,
        supported);
  omp_set_max_active_levels(1);
  CHECK(omp_get_max_active_levels() == 1, "set_max_active_levels(1) then get: %d", omp_get_max_active_levels());
  omp_set_max_active_levels(supported + 100);
  CHECK(omp_get_max_active_levels() == supported, "set beyond the supported levels: %d, want %d",
        omp_get_max_active_levels(), supported);

  /* proc_bind and places: valid answers */
  omp_proc_bind_t pb = omp_get_proc_bind();
  CHECK(pb == omp_proc_bind_false || pb == omp_proc_bind_true || pb == omp_proc_bind_master ||
            pb == omp_proc_bind_close || pb == omp_proc_bind_spread,
        "omp_get_proc_bind() = %d", (int)pb);
  int places = omp_get_num_places();
  CHECK(places >= 0, "omp_get_num_places() = %d", places);
  if (places > 0) {
    CHECK(omp_get_place_num_procs(0) >= 0, "omp_get_place_num_procs(0) = %d", omp_get_place_num_procs(0));
    CHECK(omp_get_place_num() >= -1 && omp_get_place_num() < places, "omp_get_place_num() = %d",
          omp_get_place_num());
  } else {
    CHECK(omp_get_place_num() == -1, "no places but omp_get_place_num() = %d", omp_get_place_num());
  }
  CHECK(omp_get_partition_num_places() >= 0, "omp_get_partition_num_places() = %d", omp_get_partition_num_places());

  /* schedule round trip */
  static const struct {
    omp_sched_t k;
    int c;
  } sc[] = {{omp_sched_static, 4}, {omp_sched_dynamic, 1}, {omp_sched_dynamic, 100}, {omp_sched_guided, 3},
            {omp_sched_auto, 0}};
  for (unsigned i = 0; i < sizeof sc / sizeof sc[0]; ++i) {
    omp_set_schedule(sc[i].k, sc[i].c);
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK((k & ~omp_sched_monotonic) == sc[i].k && (sc[i].k == omp_sched_auto || c == sc[i].c),
          "omp_set_schedule(%d, %d) then get: (%d, %d)", (int)sc[i].k, sc[i].c, (int)k, c);
  }
  PASS();
}
