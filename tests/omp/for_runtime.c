/* schedule(runtime) under run-sched-var set two ways.
 *   for_runtime api               omp_set_schedule(kind, chunk) for each kind: omp_get_schedule
 *                                 returns what was set, and a schedule(runtime) loop follows it.
 *   for_runtime env KIND CHUNK [monotonic|nonmonotonic]
 *                                 the harness sets OMP_SCHEDULE to match ([modifier:]KIND[,CHUNK],
 *                                 CHUNK 0 = none given): omp_get_schedule reads it back and a
 *                                 schedule(runtime) loop follows it. */
#define TEST_NAME "for_runtime"
#include "omp_test.h"
#include "loop_check.h"

#define N 2000

/* The loop just run followed (kind, chunk); chunk 0 = no chunk given. */
static void check_follows(omp_sched_t kind, int chunk, int monotonic) {
  switch (kind) {
    case omp_sched_static:
      if (chunk > 0)
        lc_check_static_chunk(chunk);
      else
        lc_check_static_blocks();
      lc_check_monotonic();
      break;
    case omp_sched_dynamic:
      if (chunk > 0) lc_check_runs(chunk, 1);
      if (monotonic) lc_check_monotonic();
      break;
    case omp_sched_guided:
      if (chunk > 0) lc_check_runs(chunk, 0);
      if (monotonic) lc_check_monotonic();
      break;
    default:
      break;
  }
}

/* schedule(runtime) loops of several forms under the current run-sched-var (kind, chunk). */
static void run_loops(const char *what, omp_sched_t kind, int chunk, int monotonic) {
  lc_begin(what, N);
  #pragma omp parallel
  {
    #pragma omp for schedule(runtime)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  check_follows(kind, chunk, monotonic);

  /* the monotonic modifier on the loop itself (GOMP_loop_runtime_*, GOMP_parallel_loop_runtime) */
  lc_begin(what, N);
  #pragma omp parallel
  {
    #pragma omp for schedule(monotonic: runtime)
    for (int i = 0; i < N; ++i) lc_hit(i);
    lc_leave();
  }
  lc_check_cover();
  check_follows(kind, chunk, 1);
  lc_begin(what, N);
  #pragma omp parallel for schedule(monotonic: runtime)
  for (int i = 0; i < N; ++i) lc_hit(i);
  lc_check_cover();
  check_follows(kind, chunk, 1);

  /* combined, and an unsigned long long loop whose bounds gcc cannot narrow */
  lc_begin(what, N);
  #pragma omp parallel for schedule(runtime)
  for (int i = 0; i < N; ++i) lc_hit(i);
  lc_check_cover();
  check_follows(kind, chunk, monotonic);
  const unsigned long long base = ~0ULL - 2 * N;
  lc_begin(what, N);
  #pragma omp parallel
  {
    #pragma omp for schedule(runtime)
    for (unsigned long long u = base; u < base + N; ++u) lc_hit((int)(u - base));
    lc_leave();
  }
  lc_check_cover();
  check_follows(kind, chunk, monotonic);
}

static omp_sched_t parse_kind(const char *s) {
  if (!strcmp(s, "static")) return omp_sched_static;
  if (!strcmp(s, "dynamic")) return omp_sched_dynamic;
  if (!strcmp(s, "guided")) return omp_sched_guided;
  if (!strcmp(s, "auto")) return omp_sched_auto;
  ot_fail("unknown schedule kind '%s' on the command line", s);
  return omp_sched_static;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "api")) {
    static const struct {
      omp_sched_t kind;
      int chunk;
    } cases[] = {{omp_sched_static, 1}, {omp_sched_static, 6}, {omp_sched_dynamic, 1}, {omp_sched_dynamic, 9},
                 {omp_sched_guided, 1}, {omp_sched_guided, 20}, {omp_sched_auto, 0}};
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
      omp_set_schedule(cases[c].kind, cases[c].chunk);
      omp_sched_t k;
      int ch;
      omp_get_schedule(&k, &ch);
      CHECK((k & ~omp_sched_monotonic) == cases[c].kind, "omp_set_schedule(%d, %d) then get: kind %d",
            (int)cases[c].kind, cases[c].chunk, (int)k);
      if (cases[c].kind != omp_sched_auto)
        CHECK(ch == cases[c].chunk, "omp_set_schedule(%d, %d) then get: chunk %d", (int)cases[c].kind,
              cases[c].chunk, ch);
      char what[64];
      snprintf(what, sizeof what, "omp_set_schedule(%d, %d)", (int)cases[c].kind, cases[c].chunk);
      run_loops(what, cases[c].kind, cases[c].chunk, 0);
    }
    /* the monotonic modifier through the API */
    omp_set_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 2);
    omp_sched_t k;
    int ch;
    omp_get_schedule(&k, &ch);
    CHECK((k & ~omp_sched_monotonic) == omp_sched_dynamic && ch == 2,
          "omp_set_schedule(monotonic|dynamic, 2) then get: kind %#x chunk %d", (unsigned)k, ch);
    run_loops("omp_set_schedule(monotonic|dynamic, 2)", omp_sched_dynamic, 2, (k & omp_sched_monotonic) != 0);
    /* run-sched-var is per task: a region's implicit tasks inherit it, changes inside stay there */
    omp_set_schedule(omp_sched_static, 3);
    int bad = 0;
    #pragma omp parallel num_threads(2)
    {
      omp_sched_t ik;
      int ic;
      omp_get_schedule(&ik, &ic);
      if ((ik & ~omp_sched_monotonic) != omp_sched_static || ic != 3) AT_INC(&bad);
      omp_set_schedule(omp_sched_guided, 5);
    }
    omp_get_schedule(&k, &ch);
    CHECK(bad == 0, "an implicit task did not inherit run-sched-var static,3");
    CHECK((k & ~omp_sched_monotonic) == omp_sched_static && ch == 3,
          "omp_set_schedule inside a region changed the outer task's run-sched-var (now %d,%d)", (int)k, ch);
    PASS();
  }
  if (argc >= 4 && !strcmp(argv[1], "env")) {
    omp_sched_t want = parse_kind(argv[2]);
    int chunk = atoi(argv[3]);
    int monotonic = argc >= 5 && !strcmp(argv[4], "monotonic");
    const char *env = getenv("OMP_SCHEDULE");
    CHECK(env != NULL, "OMP_SCHEDULE is not set (the harness sets it for this test)");
    omp_sched_t k;
    int ch;
    omp_get_schedule(&k, &ch);
    CHECK((k & ~omp_sched_monotonic) == want, "OMP_SCHEDULE=%s: omp_get_schedule kind %#x, want %d", env,
          (unsigned)k, (int)want);
    if (chunk > 0) CHECK(ch == chunk, "OMP_SCHEDULE=%s: omp_get_schedule chunk %d, want %d", env, ch, chunk);
    if (argc >= 5 && !strcmp(argv[4], "nonmonotonic"))
      CHECK((k & omp_sched_monotonic) == 0, "OMP_SCHEDULE=%s: omp_get_schedule has the monotonic bit", env);
    run_loops(env, want, chunk, monotonic);
    PASS();
  }
  ot_fail("usage: for_runtime api | env KIND CHUNK [monotonic|nonmonotonic]");
  return 1;
}
