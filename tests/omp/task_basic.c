/* task + taskwait: every created task runs exactly once; taskwait waits for the children of the
 * current task (their writes are visible after it); default data sharing (a variable local to the
 * generating task is firstprivate in the task: the value at creation; a shared one is shared);
 * tasks created by every thread of a team, by a single thread, and from an orphaned function;
 * the implicit barrier at the end of the region completes all tasks. */
#define TEST_NAME "task_basic"
#include "omp_test.h"
#include <omp.h>

#define NT 2000

static int ran[NT];
static int shared_counter;

static void spawn_from_function(int base) {
  for (int i = 0; i < 10; ++i) {
    #pragma omp task
    AT_INC(&ran[base + i]);
  }
  #pragma omp taskwait
  for (int i = 0; i < 10; ++i) CHECK(AT_LOAD(&ran[base + i]) == 1, "orphaned task %d not done after taskwait", i);
}

int main(void) {
  /* one producer, taskwait, values captured at creation */
  int captured_bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int i = 0; i < NT; ++i) {
      int v = i * 3; /* local: firstprivate in the task by default */
      #pragma omp task
      {
        if (v != i * 3) AT_INC(&captured_bad);
        AT_INC(&ran[i]);
        AT_INC(&shared_counter);
      }
      v = -1;
      (void)v;
    }
    #pragma omp taskwait
    for (int i = 0; i < NT; ++i) CHECK(AT_LOAD(&ran[i]) == 1, "task %d ran %d times before taskwait returned", i, ran[i]);
    CHECK(AT_LOAD(&shared_counter) == NT, "shared counter %d after taskwait, want %d", shared_counter, NT);
  }
  CHECK(captured_bad == 0, "%d tasks saw a firstprivate value other than the one at creation", captured_bad);

  /* every thread creates tasks; the end of the region completes them */
  memset(ran, 0, sizeof ran);
  int nthreads = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    #pragma omp single
    nthreads = n;
    for (int i = me; i < NT; i += n) {
      #pragma omp task firstprivate(i)
      AT_INC(&ran[i]);
    }
  }
  for (int i = 0; i < NT; ++i) CHECK(ran[i] == 1, "task %d ran %d times by the end of the region", i, ran[i]);
  CHECK(nthreads >= 1, "team of %d", nthreads);

  /* taskwait waits for children only, but a child that itself waits finishes its own children */
  int grand = 0, child = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int i = 0; i < 50; ++i) {
      #pragma omp task
      {
        for (int k = 0; k < 4; ++k) {
          #pragma omp task
          AT_INC(&grand);
        }
        #pragma omp taskwait
        AT_INC(&child);
      }
    }
    #pragma omp taskwait
    CHECK(AT_LOAD(&child) == 50 && AT_LOAD(&grand) == 200, "after taskwait: %d children, %d grandchildren", child,
          grand);
    memset(ran, 0, sizeof ran);
    spawn_from_function(0);
  }

  /* tasks outside any parallel region: the initial thread runs them */
  int outside = 0;
  for (int i = 0; i < 20; ++i) {
    #pragma omp task shared(outside)
    outside += 1;
  }
  #pragma omp taskwait
  CHECK(outside == 20, "tasks outside a region: %d ran", outside);

  /* the binding thread set: omp_get_num_threads inside a task is its team's */
  int team_in_task = -1;
  #pragma omp parallel num_threads(3)
  #pragma omp single
  {
    #pragma omp task shared(team_in_task)
    team_in_task = omp_get_num_threads();
  }
  CHECK(team_in_task == 3, "omp_get_num_threads() in a task of a team of 3: %d", team_in_task);
  PASS();
}
