/* sections: each section runs exactly once per encounter, whatever the team size (more sections
 * than threads and fewer); the implicit barrier at the end (all sections' writes are visible after
 * it) and nowait; lastprivate takes the value from the lexically last section; the combined
 * parallel sections form; many encounters in a row. */
#define TEST_NAME "sections"
#include "omp_test.h"
#include <omp.h>

#define ROUNDS 30

int main(void) {
  int runs[ROUNDS][5];
  memset(runs, 0, sizeof runs);
  int bad_barrier = 0, wrong_z = 0, nowait_runs[3] = {0, 0, 0};
  #pragma omp parallel
  {
    for (int r = 0; r < ROUNDS; ++r) {
      #pragma omp sections
      {
        #pragma omp section
        AT_INC(&runs[r][0]);
        #pragma omp section
        AT_INC(&runs[r][1]);
        #pragma omp section
        { ot_spin_work(50); AT_INC(&runs[r][2]); }
        #pragma omp section
        AT_INC(&runs[r][3]);
        #pragma omp section
        AT_INC(&runs[r][4]);
      }
      for (int s = 0; s < 5; ++s)
        if (AT_LOAD(&runs[r][s]) != 1) AT_INC(&bad_barrier);
    }
    for (int r = 0; r < ROUNDS; ++r) {
      #pragma omp sections nowait
      {
        #pragma omp section
        AT_INC(&nowait_runs[0]);
        #pragma omp section
        AT_INC(&nowait_runs[1]);
        #pragma omp section
        AT_INC(&nowait_runs[2]);
      }
    }
  }
  for (int r = 0; r < ROUNDS; ++r)
    for (int s = 0; s < 5; ++s) CHECK(runs[r][s] == 1, "round %d: section %d ran %d times", r, s, runs[r][s]);
  CHECK(bad_barrier == 0, "%d times a thread left sections before every section was done", bad_barrier);
  for (int s = 0; s < 3; ++s)
    CHECK(nowait_runs[s] == ROUNDS, "sections nowait: section %d ran %d times, want %d", s, nowait_runs[s], ROUNDS);

  /* lastprivate: the value assigned by the lexically last section, whoever ran it */
  for (int r = 0; r < 30; ++r) {
    int x = -1;
    #pragma omp parallel sections lastprivate(x)
    {
      #pragma omp section
      x = 10 + r;
      #pragma omp section
      { ot_spin_work(20); x = 20 + r; }
      #pragma omp section
      x = 30 + r;
    }
    CHECK(x == 30 + r, "parallel sections lastprivate: x = %d, want %d", x, 30 + r);
  }
  /* sections inside a region, lastprivate of a shared variable */
  int z = -5;
  #pragma omp parallel shared(z)
  {
    #pragma omp sections lastprivate(z)
    {
      #pragma omp section
      { ot_spin_work(100); z = 1; }
      #pragma omp section
      z = 2;
    }
    /* the barrier at the end of sections: the last section's value is stored */
    if (z != 2) AT_INC(&wrong_z);
  }
  CHECK(z == 2 && wrong_z == 0, "sections lastprivate in a region: z = %d after, %d threads saw another value", z,
        wrong_z);

  /* a team bigger than the number of sections */
  int one[2] = {0, 0};
  #pragma omp parallel sections num_threads(6)
  {
    #pragma omp section
    AT_INC(&one[0]);
    #pragma omp section
    AT_INC(&one[1]);
  }
  CHECK(one[0] == 1 && one[1] == 1, "2 sections in a team of 6 ran %d and %d times", one[0], one[1]);
  PASS();
}
