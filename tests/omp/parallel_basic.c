/* parallel: default team size, num_threads clause, omp_get_thread_num/num_threads inside, if(0)
 * and if(expr) regions, a region in a called function (orphaned), many regions in a row. */
#define TEST_NAME "parallel_basic"
#include "omp_test.h"
#include <omp.h>

#define MAXT 64

static int team_seen[MAXT];

/* Each member marks its slot; every slot 0..n-1 exactly once, n == omp_get_num_threads(). */
static void check_team(const char *what, int want) {
  int n = -1, bad = 0;
  memset(team_seen, 0, sizeof team_seen);
  #pragma omp parallel num_threads(want)
  {
    int id = omp_get_thread_num(), nt = omp_get_num_threads();
    if (id < 0 || id >= nt || nt > MAXT) {
      AT_INC(&bad);
    } else {
      AT_INC(&team_seen[id]);
    }
    #pragma omp single
    n = nt;
  }
  CHECK(bad == 0, "%s: thread number outside [0, num_threads)", what);
  CHECK(n == want, "%s: num_threads(%d) gave a team of %d (dyn-var false, no nesting)", what, want, n);
  for (int i = 0; i < n; ++i)
    CHECK(team_seen[i] == 1, "%s: thread number %d seen %d times", what, i, team_seen[i]);
}

static int orphan_count;
static void orphan_body(void) {
  /* no clause: nthreads-var */
  #pragma omp parallel
  AT_INC(&orphan_count);
}

int main(void) {
  int maxt = omp_get_max_threads();
  CHECK(maxt >= 1 && maxt <= MAXT, "omp_get_max_threads() = %d", maxt);
  CHECK(omp_get_thread_num() == 0 && omp_get_num_threads() == 1, "outside any region: thread %d of %d",
        omp_get_thread_num(), omp_get_num_threads());

  /* default size: nthreads-var (OMP_NUM_THREADS) */
  int def = -1, count = 0;
  #pragma omp parallel
  {
    AT_INC(&count);
    #pragma omp master
    def = omp_get_num_threads();
  }
  CHECK(def == maxt, "default team has %d threads, omp_get_max_threads() said %d", def, maxt);
  CHECK(count == def, "%d threads ran the region body of a team of %d", count, def);

  check_team("num_threads(1)", 1);
  check_team("num_threads(2)", 2);
  check_team("num_threads(3)", 3);
  check_team("num_threads(8)", 8);

  /* if(0): a team of one, the encountering thread as thread 0; still a region (level 1, inactive) */
  int in_n = -1, in_id = -1, lvl = -1, alvl = -1, inpar = -1;
  count = 0;
  #pragma omp parallel if(0) num_threads(4)
  {
    AT_INC(&count);
    in_n = omp_get_num_threads();
    in_id = omp_get_thread_num();
    lvl = omp_get_level();
    alvl = omp_get_active_level();
    inpar = omp_in_parallel();
  }
  CHECK(count == 1 && in_n == 1 && in_id == 0, "if(0): %d executions, thread %d of %d", count, in_id, in_n);
  CHECK(lvl == 1 && alvl == 0 && inpar == 0, "if(0): level %d, active level %d, in_parallel %d (want 1, 0, 0)",
        lvl, alvl, inpar);

  /* if(expr) evaluated at run time */
  for (int k = 0; k < 2; ++k) {
    int n = -1;
    #pragma omp parallel if(k) num_threads(2)
    {
      #pragma omp single
      n = omp_get_num_threads();
    }
    CHECK(n == (k ? 2 : 1), "if(%d) num_threads(2): team of %d", k, n);
  }

  /* omp_set_num_threads changes the default of later regions */
  omp_set_num_threads(3);
  CHECK(omp_get_max_threads() == 3, "omp_set_num_threads(3): omp_get_max_threads() = %d", omp_get_max_threads());
  orphan_count = 0;
  orphan_body();
  CHECK(orphan_count == 3, "after omp_set_num_threads(3) a region ran with %d threads", orphan_count);
  omp_set_num_threads(maxt);

  /* many short regions: the team is rebuilt or reused correctly each time */
  long total = 0;
  for (int r = 0; r < 60; ++r) {
    int nt = 1 + r % 4;
    #pragma omp parallel num_threads(nt)
    {
      long mine = omp_get_thread_num() + 1;
      AT_ADD(&total, mine);
    }
  }
  long want = 0;
  for (int r = 0; r < 60; ++r) {
    int nt = 1 + r % 4;
    want += (long)nt * (nt + 1) / 2;
  }
  CHECK(total == want, "60 regions: thread-number sum %ld, want %ld", total, want);

  /* shared and private data */
  int shared_v = 0, priv = 42, first = 7, bad = 0;
  #pragma omp parallel num_threads(4) private(priv) firstprivate(first) shared(shared_v)
  {
    priv = omp_get_thread_num();
    if (first != 7) AT_INC(&bad);
    first = -1;
    AT_ADD(&shared_v, priv);
  }
  CHECK(bad == 0, "firstprivate copy did not start at 7");
  CHECK(first == 7 && priv == 42, "private/firstprivate leaked out: first %d priv %d", first, priv);
  CHECK(shared_v == 0 + 1 + 2 + 3, "shared sum %d, want 6", shared_v);
  PASS();
}
