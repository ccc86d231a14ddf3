/* Nested parallel regions get real teams (OpenMP's nested parallelism; libgomp gives them, so must
 * Plait: reporting a nesting level without delivering it is not allowed). Arguments from the
 * harness say how nesting was asked for:
 *   api          omp_set_nested(1) / omp_set_max_active_levels: inner num_threads(3), innermost 2
 *   list A B     OMP_NUM_THREADS=A,B: the outer team has A threads, each inner one B
 *   limit L      OMP_THREAD_LIMIT=L with OMP_NESTED=true: never more than L threads at once
 * and in every case: each inner team's members are seen once, every member of every level reports
 * the right level, active level, thread number, ancestors and team sizes, inner teams run their
 * own barriers, worksharing loops and tasks (a sum checked), and two levels below
 * max-active-levels an inner region is a team of one again. */
#define TEST_NAME "parallel_nested_teams"
#include "omp_test.h"
#include <omp.h>

static int bad;

/* Checks of one member of an inner team (level 2) whose outer thread number is `o`. */
static void check_member(int o, int outer_n, int inner_n) {
  if (omp_get_level() != 2 || omp_get_active_level() != (inner_n > 1 ? 2 : 1)) AT_INC(&bad);
  if (omp_get_num_threads() != inner_n || omp_get_thread_num() >= inner_n) AT_INC(&bad);
  if (omp_get_ancestor_thread_num(0) != 0 || omp_get_ancestor_thread_num(1) != o ||
      omp_get_ancestor_thread_num(2) != omp_get_thread_num())
    AT_INC(&bad);
  if (omp_get_team_size(0) != 1 || omp_get_team_size(1) != outer_n || omp_get_team_size(2) != inner_n) AT_INC(&bad);
}

/* An outer team of `outer` and inner teams of `inner` (0: nthreads-var). Returns the inner size seen. */
static int run(int outer, int inner, int want_outer, int want_inner) {
  int seen_outer = -1, sizes[64], sum_ok[64];
  memset(sizes, 0, sizeof sizes);
  memset(sum_ok, 0, sizeof sum_ok);
  #pragma omp parallel num_threads(outer) shared(seen_outer, sizes, sum_ok)
  {
    const int o = omp_get_thread_num(), on = omp_get_num_threads();
    #pragma omp single
    seen_outer = on;
    int members[64];
    memset(members, 0, sizeof members);
    long sum = 0;
    #pragma omp parallel num_threads(inner > 0 ? inner : omp_get_max_threads()) shared(members, sum)
    {
      const int n = omp_get_num_threads();
      check_member(o, on, n);
      if (omp_get_thread_num() < 64) AT_INC(&members[omp_get_thread_num()]);
      #pragma omp barrier
      #pragma omp for reduction(+: sum) schedule(dynamic, 3)
      for (int i = 0; i < 1000; ++i) sum += i;
      #pragma omp single
      for (int k = 0; k < 20; ++k) {
        #pragma omp task shared(sum)
        {
          if (omp_get_level() != 2 || omp_get_ancestor_thread_num(1) != o) AT_INC(&bad);
          #pragma omp atomic
          sum += 1;
        }
      }
      #pragma omp master
      sizes[o] = n;
    }
    int once = 1;
    for (int i = 0; i < sizes[o] && i < 64; ++i) once &= members[i] == 1;
    sum_ok[o] = once && sum == 1000L * 999 / 2 + 20;
  }
  CHECK(seen_outer == want_outer, "outer team of %d, want %d", seen_outer, want_outer);
  for (int o = 0; o < seen_outer; ++o) {
    CHECK(sizes[o] == want_inner, "inner team of outer thread %d has %d threads, want %d", o, sizes[o], want_inner);
    CHECK(sum_ok[o], "inner team of outer thread %d: a member seen twice or never, or a wrong sum", o);
  }
  CHECK(bad == 0, "%d inner members saw a wrong level, thread number, ancestor or team size", bad);
  return sizes[0];
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "api";
  if (!strcmp(mode, "api")) {
    omp_set_nested(1);
    CHECK(omp_get_nested() == 1, "omp_set_nested(1) then omp_get_nested() = %d", omp_get_nested());
    CHECK(omp_get_max_active_levels() > 1, "omp_set_nested(1) but max-active-levels %d", omp_get_max_active_levels());
    run(4, 3, 4, 3);
    run(2, 2, 2, 2);
    /* a third level inside; then max-active-levels 2 makes it a team of one */
    int third[2] = {0, 0};
    for (int pass = 0; pass < 2; ++pass) {
      omp_set_max_active_levels(pass == 0 ? 3 : 2);
      int sz = -1, lvl = -1, act = -1;
      #pragma omp parallel num_threads(2)
      #pragma omp parallel num_threads(2)
      #pragma omp parallel num_threads(2) shared(sz, lvl, act)
      #pragma omp master
      if (omp_get_ancestor_thread_num(1) == 1 && omp_get_ancestor_thread_num(2) == 1) {
        sz = omp_get_num_threads();
        lvl = omp_get_level();
        act = omp_get_active_level();
      }
      third[pass] = sz;
      CHECK(lvl == 3, "third level reports level %d", lvl);
      CHECK(act == (pass == 0 ? 3 : 2), "third level (max-active-levels %d) reports active level %d", 3 - pass, act);
    }
    CHECK(third[0] == 2 && third[1] == 1, "third-level teams of %d and %d threads (max-active-levels 3, 2)", third[0],
          third[1]);
    omp_set_nested(0);
    CHECK(omp_get_nested() == 0, "omp_set_nested(0) then omp_get_nested() = %d", omp_get_nested());
    run(3, 3, 3, 1);
  } else if (!strcmp(mode, "list") && argc > 3) {
    const int a = atoi(argv[2]), b = atoi(argv[3]);
    CHECK(omp_get_max_threads() == a, "OMP_NUM_THREADS=%d,%d: omp_get_max_threads() = %d", a, b, omp_get_max_threads());
    CHECK(omp_get_max_active_levels() >= 2, "an OMP_NUM_THREADS list leaves max-active-levels at %d",
          omp_get_max_active_levels());
    run(0, 0, a, b);
  } else if (!strcmp(mode, "limit") && argc > 2) {
    const int l = atoi(argv[2]);
    CHECK(omp_get_thread_limit() == l, "OMP_THREAD_LIMIT=%d: omp_get_thread_limit() = %d", l, omp_get_thread_limit());
    int most = 0, now = 0;
    #pragma omp parallel num_threads(3) shared(most, now)
    {
      #pragma omp parallel num_threads(3) shared(most, now)
      {
        int c = AT_INC(&now);
        AT_MAX(&most, c);
        ot_spin_work(2000);
        #pragma omp barrier
        AT_DEC(&now);
      }
    }
    CHECK(most <= l, "%d threads at once under OMP_THREAD_LIMIT=%d", most, l);
    CHECK(most >= 2, "nested regions under OMP_THREAD_LIMIT=%d ran on %d thread(s)", l, most);
  } else {
    ot_fail("unknown mode '%s' (api, list A B, limit L)", mode);
  }
  PASS();
}
