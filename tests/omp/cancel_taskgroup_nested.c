/* cancel taskgroup reaches every task made inside the cancelled region (OMP_CANCELLATION=true from
 * the harness). The standard lets a runtime discard the tasks of a cancelled taskgroup's set that
 * have not started; libgomp discards them at any depth, and so does Plait:
 *   1. a worksharing loop with reduction(task, ...) inside a cancelled taskgroup: the loop's own
 *      body runs (the loop is not cancelled), the in_reduction tasks it makes are discarded;
 *   2. tasks made inside a nested taskgroup of a cancelled one may be discarded (the standard allows
 *      both: they belong to the cancelled taskgroup's set; Plait discards them, libgomp 12 runs
 *      them: a NOTE says which);
 *   3. `cancel taskgroup` in an in_reduction task of such a loop cancels the enclosing taskgroup
 *      region (the loop's own group for its reductions is no taskgroup region): the creating
 *      thread's later tasks in it are discarded;
 *   4. a later taskgroup is not cancelled. */
#define TEST_NAME "cancel_taskgroup_nested"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  CHECK(omp_get_cancellation() == 1, "omp_get_cancellation() = %d (the harness sets OMP_CANCELLATION=true)",
        omp_get_cancellation());
  int ran_reduction_tasks = 0, ran_nested = 0, ran_after = 0, not_seen = 0, later = 0, members = 0;
  int a = 0;
  /* 1 and 2: every member's own taskgroup is cancelled by a task before the loop */
  #pragma omp parallel shared(a, ran_reduction_tasks, ran_nested, members)
  #pragma omp taskgroup
  {
    #pragma omp single
    members = omp_get_num_threads();
    #pragma omp task
    {
      #pragma omp cancel taskgroup
    }
    #pragma omp taskwait
    #pragma omp for reduction(task, +: a)
    for (int i = 0; i < 64; ++i) {
      a++;
      #pragma omp task in_reduction(+: a) shared(ran_reduction_tasks)
      {
        a += 0;
        AT_INC(&ran_reduction_tasks);
      }
    }
    #pragma omp taskgroup
    {
      for (int k = 0; k < 8; ++k) {
        #pragma omp task shared(ran_nested)
        AT_INC(&ran_nested);
      }
    }
  }
  CHECK(a == 64, "the loop's reduction is %d, want 64 (the loop itself is not cancelled)", a);
  CHECK(ran_reduction_tasks == 0, "%d in_reduction tasks of a cancelled taskgroup ran", ran_reduction_tasks);
  CHECK(ran_nested == 0 || ran_nested == 8 * members, "%d of %d tasks of a taskgroup nested in a cancelled one ran",
        ran_nested, 8 * members);
  if (ran_nested != 0) NOTE("tasks of a taskgroup nested in a cancelled one ran (allowed)");

  /* 3: an in_reduction task cancels; the thread that made it then finds its taskgroup cancelled */
  a = 0;
  #pragma omp parallel shared(a, ran_after, not_seen)
  #pragma omp taskgroup
  {
    int made = 0;
    #pragma omp for reduction(task, +: a)
    for (int i = 0; i < 64; ++i) {
      a++;
      made = 1;
      #pragma omp task in_reduction(+: a)
      {
        a += 0;
        #pragma omp cancel taskgroup
      }
    }
    /* the loop's end waits for its tasks: every member that made one has its taskgroup cancelled */
    if (made) {
      #pragma omp task shared(ran_after, not_seen)
      {
        AT_INC(&ran_after);
        #pragma omp cancellation point taskgroup
        AT_INC(&not_seen); /* reached only if the cancellation point did not leave the task */
      }
    }
  }
  CHECK(a == 64, "the second loop's reduction is %d, want 64", a);
  CHECK(not_seen == 0, "%d tasks passed a cancellation point of a taskgroup cancelled by an in_reduction task",
        not_seen);
  CHECK(ran_after == 0, "%d tasks made in a taskgroup cancelled by an in_reduction task ran", ran_after);

  /* 4: a later taskgroup runs everything */
  #pragma omp parallel shared(later)
  #pragma omp single
  #pragma omp taskgroup
  {
    for (int k = 0; k < 32; ++k) {
      #pragma omp task shared(later)
      AT_INC(&later);
    }
  }
  CHECK(later == 32, "a later taskgroup ran %d of 32 tasks", later);
  PASS();
}
