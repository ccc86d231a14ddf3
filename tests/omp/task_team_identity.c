/* Whoever runs an explicit task is a thread of the task's team: inside every task, the team's size,
 * a thread number of that team, the nesting level and omp_in_parallel are those of the region — also
 * when the task is taken by a thread that has not started (or reached) its own implicit task yet.
 * Every thread queues its tasks (each with a child) at once, and the test repeats that over many
 * short regions back to back, so that threads that are still between two regions (or have not read
 * their implicit task yet) find tasks waiting. */
#define TEST_NAME "task_team_identity"
#include "omp_test.h"
#include <omp.h>

static int wrong;     /* tasks that saw another team's (or no team's) identity */
static int ran;       /* tasks run */
static int seen_num;  /* bit i: some task ran as thread i */

static void check_identity(int n) {
  const int num = omp_get_thread_num();
  if (omp_get_num_threads() != n || num < 0 || num >= n || !(omp_in_parallel() || n == 1) ||
      omp_get_level() != 1 || omp_get_team_size(1) != n || omp_get_ancestor_thread_num(1) != num)
    AT_INC(&wrong);
  if (num >= 0 && num < 31) __atomic_fetch_or(&seen_num, 1 << num, __ATOMIC_RELAXED);
  AT_INC(&ran);
}

int main(void) {
  const int regions = 1000, per_region = 16;
  int threads = 0;
  for (int k = 0; k < regions; ++k) {
    #pragma omp parallel
    {
      const int size = omp_get_num_threads();
      if (omp_get_thread_num() == 0) threads = size;
      for (int i = 0; i < per_region; ++i) {
        #pragma omp task firstprivate(size)
        {
          check_identity(size);
          #pragma omp task firstprivate(size)
          check_identity(size);
        }
      }
    }
  }
  const int total = regions * per_region * 2 * threads;
  CHECK(AT_LOAD(&ran) == total, "%d of %d tasks ran", AT_LOAD(&ran), total);
  CHECK(AT_LOAD(&wrong) == 0, "%d of %d tasks saw a thread number, team size or level that is not their team's",
        AT_LOAD(&wrong), total);
  CHECK(AT_LOAD(&seen_num) != 0 && AT_LOAD(&seen_num) < (1 << threads), "tasks ran as threads 0x%x of a team of %d",
        AT_LOAD(&seen_num), threads);
  PASS();
}
