/* taskgroup: the end of a taskgroup waits for all tasks created in it and all their descendants
 * (grandchildren that nobody waited for), unlike taskwait; nested taskgroups; a taskgroup inside a
 * task; a task created before the taskgroup is not part of it (a detached sibling fulfilled only
 * after the taskgroup ends: a taskgroup that waited for it would never end). */
#define TEST_NAME "taskgroup"
#include "omp_test.h"
#include <omp.h>

static int leaves;

static void spray(int depth) {
  if (depth == 0) {
    ot_spin_work(100);
    AT_INC(&leaves);
    return;
  }
  for (int i = 0; i < 3; ++i) {
    #pragma omp task
    spray(depth - 1);
  }
  /* no taskwait: the descendants are left to the enclosing taskgroup */
}

/* A taskgroup of n tasks, each leaving a child task that nobody waits for: how many children had
 * run when the taskgroup ended (n, as its end waits for every descendant). */
static int children_done_in_taskgroup(int n) {
  int done = 0;
  #pragma omp taskgroup
  {
    for (int i = 0; i < n; ++i) {
      #pragma omp task shared(done)
      {
        #pragma omp task shared(done)
        AT_INC(&done);
      }
    }
  }
  return AT_LOAD(&done);
}

int main(void) {
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int r = 0; r < 20; ++r) {
      AT_STORE(&leaves, 0);
      #pragma omp taskgroup
      {
        #pragma omp task
        spray(4);
        spray(2);
      }
      if (AT_LOAD(&leaves) != 81 + 9) AT_INC(&bad);
    }

    /* nested: the inner end waits for the inner tasks only, the outer end for everything */
    int outer_done = 0;
    #pragma omp taskgroup
    {
      #pragma omp task shared(outer_done)
      {
        ot_spin_work(1000);
        AT_INC(&outer_done);
      }
      if (children_done_in_taskgroup(10) != 10) AT_INC(&bad);
    }
    if (AT_LOAD(&outer_done) != 1) AT_INC(&bad);

    /* in a task */
    #pragma omp task shared(bad)
    {
      if (children_done_in_taskgroup(5) != 5) AT_INC(&bad);
    }
    #pragma omp taskwait
  }
  CHECK(bad == 0, "%d taskgroup ends returned before all descendants were done", bad);

  /* a task created before the taskgroup is not part of it: T is detached and fulfilled only after
   * the taskgroup ends, so a taskgroup that waited for T would never end */
  int t_ran = 0, group_ran = 0, after = -1;
  #pragma omp parallel
  #pragma omp single
  {
    omp_event_handle_t ev;
    #pragma omp task detach(ev) shared(t_ran)
    AT_INC(&t_ran);
    #pragma omp taskgroup
    {
      #pragma omp task shared(group_ran)
      AT_INC(&group_ran);
    }
    after = AT_LOAD(&group_ran);
    omp_fulfill_event(ev);
    #pragma omp taskwait
    if (AT_LOAD(&t_ran) != 1) AT_INC(&bad);
  }
  CHECK(after == 1 && bad == 0, "taskgroup with an earlier detached sibling: group task ran %d, sibling %d", after,
        t_ran);
  PASS();
}
