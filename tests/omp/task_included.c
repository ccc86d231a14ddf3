/* Undeferred (if(0)) and included (final) tasks run at once on their creator's thread, each with
 * its own task context, and may still make tasks of every kind:
 *   1. an if(0) task's deferred children outlive it: its creator goes on at once, a barrier waits
 *      for them;
 *   2. final tasks make included tasks, which run in creation order, see omp_in_final(), and a
 *      taskwait in them waits for nothing;
 *   3. children with a detach clause in a final task (included: each fulfilled by its own body);
 *   4. a firstprivate VLA (gcc's copy function) in an if(0) task is the task's own copy;
 *   5. taskgroups and dependences inside an if(0) task with deferred children;
 *   6. a fib cut off with final(depth >= cutoff) mergeable and with if(depth < cutoff) is right. */
#define TEST_NAME "task_included"
#include "omp_test.h"
#include <omp.h>

static long fib_final(int n, int d, int cut) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a) final(d >= cut) mergeable
  a = fib_final(n - 1, d + 1, cut);
  #pragma omp task shared(b) final(d >= cut) mergeable
  b = fib_final(n - 2, d + 1, cut);
  #pragma omp taskwait
  return a + b;
}

static long fib_if(int n, int d, int cut) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a) if(d < cut)
  a = fib_if(n - 1, d + 1, cut);
  b = fib_if(n - 2, d + 1, cut);
  #pragma omp taskwait
  return a + b;
}

int main(int argc, char **argv) {
  (void)argv;
  int grandchildren = 0, early = 0, order_bad = 0, not_final = 0, detached = 0, vla_bad = 0, seq = 0;
  int dep_bad = 0, group_bad = 0;
  #pragma omp parallel shared(grandchildren, early, order_bad, not_final, detached, vla_bad, seq, dep_bad, group_bad)
  #pragma omp single
  {
    /* 1 */
    int done_parent = 0;
    #pragma omp task if(0) shared(grandchildren, done_parent)
    {
      for (int k = 0; k < 100; ++k) {
        #pragma omp task shared(grandchildren)
        {
          ot_spin_work(50);
          AT_INC(&grandchildren);
        }
      }
      AT_STORE(&done_parent, 1);
    }
    if (!AT_LOAD(&done_parent)) AT_INC(&early); /* the if(0) task ran to its end before this */
    #pragma omp taskwait

    /* 2 */
    #pragma omp task final(1) shared(order_bad, not_final, seq)
    {
      if (!omp_in_final()) AT_INC(&not_final);
      for (int k = 0; k < 50; ++k) {
        #pragma omp task shared(order_bad, not_final, seq) firstprivate(k)
        {
          if (!omp_in_final()) AT_INC(&not_final);
          if (seq != k) AT_INC(&order_bad); /* included: runs now, in creation order */
          seq = k + 1;
          #pragma omp taskwait
        }
      }
    }
    #pragma omp taskwait

    /* 3 */
    #pragma omp task final(1) shared(detached)
    {
      /* included, so its creator waits for its completion: its own body fulfils the event */
      for (int k = 0; k < 2; ++k) {
        omp_event_handle_t ev;
        #pragma omp task detach(ev) shared(detached)
        {
          AT_INC(&detached);
          omp_fulfill_event(ev);
        }
      }
      #pragma omp taskwait
    }
    #pragma omp taskwait

    /* 4 */
    int n = argc + 15;
    int vla[n];
    for (int i = 0; i < n; ++i) vla[i] = i;
    #pragma omp task if(0) firstprivate(vla) shared(vla_bad)
    {
      for (int i = 0; i < n; ++i) {
        if (vla[i] != i) AT_INC(&vla_bad);
        vla[i] = -1;
      }
    }
    for (int i = 0; i < n; ++i)
      if (vla[i] != i) AT_INC(&vla_bad);

    /* 5 */
    #pragma omp task if(0) shared(dep_bad, group_bad)
    {
      int x = 0, in_group = 0;
      #pragma omp taskgroup
      {
        for (int k = 0; k < 20; ++k) {
          #pragma omp task depend(inout: x) shared(x, dep_bad, in_group)
          {
            if (x != k) AT_INC(&dep_bad);
            x = k + 1;
            AT_INC(&in_group);
          }
        }
      }
      if (in_group != 20 || x != 20) AT_INC(&group_bad);
    }
  }
  CHECK(early == 0, "an if(0) task's creator went on before the task's end");
  CHECK(grandchildren == 100, "%d of the 100 deferred children of an if(0) task ran", grandchildren);
  CHECK(not_final == 0, "%d final or included tasks did not see omp_in_final()", not_final);
  CHECK(order_bad == 0 && seq == 50, "included tasks out of creation order (%d), seq %d", order_bad, seq);
  CHECK(detached == 2, "%d of 2 detached tasks in a final task ran", detached);
  CHECK(vla_bad == 0, "a firstprivate VLA of an if(0) task: %d wrong elements", vla_bad);
  CHECK(dep_bad == 0 && group_bad == 0, "dependences (%d) or a taskgroup (%d) in an if(0) task", dep_bad, group_bad);

  /* 6 */
  long f1 = 0, f2 = 0;
  #pragma omp parallel shared(f1, f2)
  #pragma omp single
  {
    f1 = fib_final(24, 0, 5);
    f2 = fib_if(24, 0, 5);
  }
  CHECK(f1 == 46368 && f2 == 46368, "fib(24) with final cut-off %ld, with if cut-off %ld", f1, f2);
  PASS();
}
