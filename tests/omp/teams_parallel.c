/* The team numbers inside a teams region reach every thread of the parallel regions in it: each
 * member of a parallel region nested in a team (host teams, and target teams run on the host)
 * reports that team's omp_get_team_num() and the league's omp_get_num_teams(), also inside its
 * explicit tasks; and `distribute parallel for dist_schedule(static, c)` hands each team its own
 * chunks (SOLLVE's dist_schedule test). */
#define TEST_NAME "teams_parallel"
#include "omp_test.h"
#include <omp.h>

#define NTEAMS 3
#define N 96

int main(void) {
  int bad = 0, members[NTEAMS];
  memset(members, 0, sizeof members);
  #pragma omp teams num_teams(NTEAMS)
  {
    const int tn = omp_get_team_num(), nt = omp_get_num_teams();
    #pragma omp parallel num_threads(2) shared(bad, members)
    {
      if (omp_get_team_num() != tn || omp_get_num_teams() != nt) AT_INC(&bad);
      if (tn >= 0 && tn < NTEAMS) AT_INC(&members[tn]);
      #pragma omp single
      for (int k = 0; k < 4; ++k) {
        #pragma omp task shared(bad)
        if (omp_get_team_num() != tn || omp_get_num_teams() != nt) AT_INC(&bad);
      }
    }
    if (omp_get_team_num() != tn) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d threads or tasks of a parallel region in a team saw another team number or league size", bad);
  for (int i = 0; i < NTEAMS; ++i)
    CHECK(members[i] >= 1, "team %d ran its parallel region with %d threads", i, members[i]);

  /* target teams distribute parallel for with dist_schedule: the team of iteration i is i/4 mod teams */
  int team_of[N], nteams = 0;
  for (int i = 0; i < N; ++i) team_of[i] = -1;
  #pragma omp target teams num_teams(4) map(tofrom: team_of[0:N], nteams)
  {
    #pragma omp distribute parallel for dist_schedule(static, 4)
    for (int i = 0; i < N; ++i) team_of[i] = omp_get_team_num();
    if (omp_get_team_num() == 0) nteams = omp_get_num_teams();
  }
  CHECK(nteams >= 1 && nteams <= 4, "target teams num_teams(4): %d teams", nteams);
  for (int i = 0; i < N; ++i)
    CHECK(team_of[i] == (i / 4) % nteams, "iteration %d ran in team %d, dist_schedule(static, 4) says %d", i,
          team_of[i], (i / 4) % nteams);
  PASS();
}
