/* teams on the host (OpenMP 5.0, GOMP_teams_reg): a league of teams whose initial threads each run
 * the block once, omp_get_team_num()/omp_get_num_teams() consistent (num_teams(k) gives 1..k teams),
 * distribute over the teams covering every iteration once, and a parallel region inside a team. */
#define TEST_NAME "teams_host"
#include "omp_test.h"
#include <omp.h>

#define N 1000

int main(void) {
  int seen[16], nteams = -1, bad = 0;
  memset(seen, 0, sizeof seen);
  #pragma omp teams num_teams(4)
  {
    int t = omp_get_team_num(), nt = omp_get_num_teams();
    if (t < 0 || t >= nt || nt > 16)
      AT_INC(&bad);
    else
      AT_INC(&seen[t]);
    if (t == 0) nteams = nt;
  }
  CHECK(bad == 0, "teams: bad team numbers");
  CHECK(nteams >= 1 && nteams <= 4, "num_teams(4) gave %d teams", nteams);
  for (int t = 0; t < nteams; ++t) CHECK(seen[t] == 1, "team %d ran the block %d times", t, seen[t]);

  int hits[N];
  memset(hits, 0, sizeof hits);
  #pragma omp teams distribute num_teams(3)
  for (int i = 0; i < N; ++i) AT_INC(&hits[i]);
  for (int i = 0; i < N; ++i) CHECK(hits[i] == 1, "teams distribute: iteration %d ran %d times", i, hits[i]);

  memset(hits, 0, sizeof hits);
  #pragma omp teams distribute parallel for num_teams(2)
  for (int i = 0; i < N; ++i) AT_INC(&hits[i]);
  for (int i = 0; i < N; ++i) CHECK(hits[i] == 1, "teams distribute parallel for: %d ran %d times", i, hits[i]);
  PASS();
}
