/* The teams ICVs on the host (OpenMP 5.1): nteams-var (omp_set_num_teams / omp_get_max_teams,
 * OMP_NUM_TEAMS) gives the league size of a teams construct without num_teams; teams-thread-limit-var
 * (omp_set_teams_thread_limit / omp_get_teams_thread_limit, OMP_TEAMS_THREAD_LIMIT) becomes the
 * thread-limit-var inside a teams region without thread_limit, bounding its parallel regions; a
 * thread_limit clause does the same; outside the region the old thread limit holds again.
 * Negative values are ignored, 0 is taken.
 *
 * Arguments: none (no OMP_NUM_TEAMS / OMP_TEAMS_THREAD_LIMIT set: both start at 0), or
 * "env N L" (OMP_NUM_TEAMS=N, OMP_TEAMS_THREAD_LIMIT=L set by the harness). */
#define TEST_NAME "teams_icv"
#include "omp_test.h"
#include <omp.h>

struct league {
  int teams;      /* omp_get_num_teams() seen by team 0 */
  int ran;        /* how many teams ran the block */
  int limit;      /* omp_get_thread_limit() inside team 0's parallel region (-2: its members differ) */
  int threads;    /* that region's size (4 threads asked for) */
};

static struct league run_league(int num_teams, int thread_limit) {
  struct league l = {-1, 0, -1, -1};
  int lo = __INT_MAX__, hi = -1; /* omp_get_thread_limit() over every member of team 0's region */
  /* a clause value of 0 would be invalid: the two forms are separate constructs */
#define BODY                                                   \
  {                                                            \
    int t = omp_get_team_num(), nt = omp_get_num_teams();      \
    __atomic_add_fetch(&l.ran, 1, __ATOMIC_RELAXED);           \
    _Pragma("omp parallel num_threads(4)")                     \
    {                                                          \
      if (t == 0) {                                            \
        int mine = omp_get_thread_limit();                     \
        _Pragma("omp critical(teams_icv_limits)")              \
        {                                                      \
          if (mine < lo) lo = mine;                            \
          if (mine > hi) hi = mine;                            \
        }                                                      \
      }                                                        \
      _Pragma("omp single")                                    \
      if (t == 0) {                                            \
        l.teams = nt;                                          \
        l.limit = omp_get_thread_limit();                      \
        l.threads = omp_get_num_threads();                     \
      }                                                        \
    }                                                          \
  }
  if (num_teams > 0 && thread_limit > 0) {
#pragma omp teams num_teams(num_teams) thread_limit(thread_limit)
    BODY
  } else if (num_teams > 0) {
#pragma omp teams num_teams(num_teams)
    BODY
  } else {
#pragma omp teams
    BODY
  }
#undef BODY
  if (lo != hi) l.limit = -2; /* a member saw another limit than the one that recorded it */
  return l;
}

int main(int argc, char **argv) {
  const int from_env = argc == 4 && !strcmp(argv[1], "env");
  const int env_teams = from_env ? atoi(argv[2]) : 0, env_limit = from_env ? atoi(argv[3]) : 0;
  const int no_limit = omp_get_thread_limit();
  CHECK(omp_get_max_teams() == env_teams, "omp_get_max_teams() = %d at start, want %d", omp_get_max_teams(), env_teams);
  CHECK(omp_get_teams_thread_limit() == env_limit, "omp_get_teams_thread_limit() = %d at start, want %d",
        omp_get_teams_thread_limit(), env_limit);

  struct league l = run_league(0, 0);
  if (env_teams > 0)
    CHECK(l.teams == env_teams && l.ran == env_teams, "OMP_NUM_TEAMS=%d: a teams construct had %d teams (%d ran)",
          env_teams, l.teams, l.ran);
  else
    CHECK(l.teams >= 1 && l.ran == l.teams, "a teams construct had %d teams, %d ran", l.teams, l.ran);
  if (env_limit > 0)
    CHECK(l.limit == env_limit && l.threads <= env_limit, "OMP_TEAMS_THREAD_LIMIT=%d: limit %d, a region of %d",
          env_limit, l.limit, l.threads);
  else
    CHECK(l.limit == no_limit, "no teams thread limit: omp_get_thread_limit() %d inside, %d outside", l.limit,
          no_limit);

  omp_set_num_teams(5);
  omp_set_teams_thread_limit(2);
  CHECK(omp_get_max_teams() == 5 && omp_get_teams_thread_limit() == 2, "set 5 and 2, read %d and %d",
        omp_get_max_teams(), omp_get_teams_thread_limit());
  l = run_league(0, 0);
  CHECK(l.teams == 5 && l.ran == 5, "omp_set_num_teams(5): %d teams, %d ran", l.teams, l.ran);
  CHECK(l.limit == 2 && l.threads >= 1 && l.threads <= 2, "omp_set_teams_thread_limit(2): limit %d, a region of %d",
        l.limit, l.threads);
  CHECK(omp_get_thread_limit() == no_limit, "after the teams region the thread limit is %d, was %d",
        omp_get_thread_limit(), no_limit);

  /* the clauses win over the ICVs */
  l = run_league(2, 3);
  CHECK(l.teams >= 1 && l.teams <= 2 && l.ran == l.teams, "num_teams(2): %d teams, %d ran", l.teams, l.ran);
  CHECK(l.limit == 3 && l.threads >= 1 && l.threads <= 3, "thread_limit(3): limit %d, a region of %d", l.limit,
        l.threads);
  l = run_league(4, 0);
  CHECK(l.limit == 2, "num_teams(4) without thread_limit: limit %d, want teams-thread-limit-var 2", l.limit);

  /* negative values are ignored, 0 is taken */
  omp_set_num_teams(-1);
  omp_set_teams_thread_limit(-3);
  CHECK(omp_get_max_teams() == 5 && omp_get_teams_thread_limit() == 2, "negative values changed the ICVs to %d, %d",
        omp_get_max_teams(), omp_get_teams_thread_limit());
  omp_set_num_teams(0);
  omp_set_teams_thread_limit(0);
  CHECK(omp_get_max_teams() == 0 && omp_get_teams_thread_limit() == 0, "0 not taken: %d, %d", omp_get_max_teams(),
        omp_get_teams_thread_limit());
  l = run_league(0, 0);
  CHECK(l.teams >= 1 && l.ran == l.teams && l.limit == no_limit, "after resetting: %d teams, limit %d", l.teams,
        l.limit);
  PASS();
}
