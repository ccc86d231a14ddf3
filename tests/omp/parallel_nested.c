/* Nested parallel regions. A runtime may serialise inner regions (team of 1) or give them a real
 * team; both are accepted, but what the API reports must be consistent with the team it gave:
 * levels, active levels, ancestor thread numbers, team sizes at every level, and the inner team's
 * members each seen exactly once. With max-active-levels 1 an inner region must be a team of 1. */
#define TEST_NAME "parallel_nested"
#include "omp_test.h"
#include <omp.h>

#define OUTER 3
#define INNER 2

struct inner_obs {
  int size;         /* omp_get_num_threads() in the inner region */
  int seen[8];      /* inner thread numbers seen */
  int level, active, in_par;
  int anc0, anc1, anc2, ts1, ts2, ts0;
  int bad;
};

static struct inner_obs obs[OUTER];

static void run(int max_active, int *serialised, int *real) {
  memset(obs, 0, sizeof obs);
  omp_set_max_active_levels(max_active);
  int outer_n = -1;
  #pragma omp parallel num_threads(OUTER)
  {
    int o = omp_get_thread_num();
    #pragma omp single
    outer_n = omp_get_num_threads();
    struct inner_obs *ob = &obs[o];
    #pragma omp parallel num_threads(INNER)
    {
      int i = omp_get_thread_num(), n = omp_get_num_threads();
      if (i < 0 || i >= n || n > 8) {
        AT_INC(&ob->bad);
      } else {
        AT_INC(&ob->seen[i]);
      }
      if (i == 0) {
        ob->size = n;
        ob->level = omp_get_level();
        ob->active = omp_get_active_level();
        ob->in_par = omp_in_parallel();
        ob->anc0 = omp_get_ancestor_thread_num(0);
        ob->anc1 = omp_get_ancestor_thread_num(1);
        ob->anc2 = omp_get_ancestor_thread_num(2);
        ob->ts0 = omp_get_team_size(0);
        ob->ts1 = omp_get_team_size(1);
        ob->ts2 = omp_get_team_size(2);
      }
      /* every member agrees on the level and on its outer ancestor */
      if (omp_get_level() != 2 || omp_get_ancestor_thread_num(1) != o || omp_get_team_size(2) != n)
        AT_INC(&ob->bad);
    }
  }
  CHECK(outer_n == OUTER, "outer num_threads(%d) gave %d", OUTER, outer_n);
  for (int o = 0; o < OUTER; ++o) {
    struct inner_obs *ob = &obs[o];
    CHECK(ob->bad == 0, "max_active_levels %d, outer thread %d: an inner member saw an inconsistent level, "
          "ancestor or team size", max_active, o);
    CHECK(ob->size == 1 || ob->size == INNER, "inner team of %d (num_threads(%d) asked)", ob->size, INNER);
    for (int i = 0; i < ob->size; ++i)
      CHECK(ob->seen[i] == 1, "outer %d: inner thread number %d seen %d times", o, i, ob->seen[i]);
    int want_active = ob->size > 1 ? 2 : 1;
    CHECK(ob->level == 2, "inner omp_get_level() = %d, want 2", ob->level);
    CHECK(ob->active == want_active, "inner team of %d but omp_get_active_level() = %d", ob->size, ob->active);
    CHECK(ob->in_par == 1, "omp_in_parallel() false inside an active outer region");
    CHECK(ob->anc0 == 0 && ob->anc1 == o && ob->anc2 == 0,
          "ancestor thread numbers (0,1,2) = (%d,%d,%d), want (0,%d,0)", ob->anc0, ob->anc1, ob->anc2, o);
    CHECK(ob->ts0 == 1 && ob->ts1 == OUTER && ob->ts2 == ob->size,
          "team sizes (0,1,2) = (%d,%d,%d), want (1,%d,%d)", ob->ts0, ob->ts1, ob->ts2, OUTER, ob->size);
    if (ob->size == 1)
      ++*serialised;
    else
      ++*real;
  }
}

int main(void) {
  int ser = 0, real = 0;
  /* max-active-levels 1: the inner region must be inactive, a team of one */
  run(1, &ser, &real);
  CHECK(real == 0, "max_active_levels 1 but %d inner regions got a team of more than one", real);

  /* max-active-levels >= 2: either a real nested team or a serialised one */
  ser = real = 0;
  run(4, &ser, &real);
  int got = omp_get_max_active_levels();
  CHECK(got >= 1 && got <= 4, "omp_set_max_active_levels(4) then get = %d", got);
  if (got == 1) CHECK(real == 0, "max_active_levels reads 1 but nested teams were real");

  /* a third level: the level counts through inactive regions too */
  int lvl3 = -1, anc3 = -1;
  #pragma omp parallel num_threads(2)
  #pragma omp parallel num_threads(2)
  #pragma omp parallel num_threads(2)
  {
    #pragma omp critical
    {
      lvl3 = omp_get_level();
      anc3 = omp_get_ancestor_thread_num(3);
    }
    if (omp_get_ancestor_thread_num(3) != omp_get_thread_num()) ot_fail("ancestor(level) != own thread number");
    if (omp_get_ancestor_thread_num(4) != -1 || omp_get_team_size(4) != -1 || omp_get_team_size(-1) != -1)
      ot_fail("a level deeper than the current one did not give -1");
  }
  CHECK(lvl3 == 3 && anc3 >= 0, "third-level region: level %d, ancestor %d", lvl3, anc3);
  NOTE("observed: with max_active_levels 4 (reads %d) inner teams serialised %d, real %d", got, ser, real);
  PASS();
}
