/* taskwait depend(...) (OpenMP 5.0, GOMP_taskwait_depend): the generating task waits only for the
 * sibling tasks the dependences name. After `taskwait depend(in: x)` the earlier writers of x are
 * done; it does not wait for earlier readers of x, nor for tasks on other variables: checked with
 * detached tasks that are fulfilled only after the taskwait (a taskwait that waited for them would
 * never return). Also depend(out:) waits for earlier readers, and array elements. */
#define TEST_NAME "taskwait_depend"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int r = 0; r < 50; ++r) {
      int x = 0, y = 0;
      int wrote_x = 0, read_x = 0;
      omp_event_handle_t ev_reader, ev_other;
      /* a writer of x */
      #pragma omp task depend(out: x) shared(x, wrote_x)
      {
        ot_spin_work(300);
        x = r + 1;
        AT_STORE(&wrote_x, 1);
      }
      /* a reader of x that cannot complete until fulfilled below */
      #pragma omp task depend(in: x) detach(ev_reader) shared(x, read_x)
      AT_STORE(&read_x, x);
      /* a task on another variable, also held open */
      #pragma omp task depend(out: y) detach(ev_other) shared(y)
      y = 1;
      #pragma omp taskwait depend(in: x)
      if (AT_LOAD(&wrote_x) != 1 || x != r + 1) AT_INC(&bad);
      omp_fulfill_event(ev_reader);
      omp_fulfill_event(ev_other);
      /* depend(out: x): waits for the earlier reader too */
      #pragma omp taskwait depend(out: x)
      if (AT_LOAD(&read_x) != r + 1) AT_INC(&bad);
      #pragma omp taskwait
    }

    /* elements of an array */
    int a[8] = {0};
    for (int k = 0; k < 8; ++k) {
      #pragma omp task depend(out: a[k]) shared(a)
      {
        ot_spin_work(100 * k);
        AT_STORE(&a[k], k + 1);
      }
    }
    #pragma omp taskwait depend(in: a[3]) depend(in: a[6])
    if (AT_LOAD(&a[3]) != 4 || AT_LOAD(&a[6]) != 7) AT_INC(&bad);
    #pragma omp taskwait
  }
  CHECK(bad == 0, "%d taskwait depend returned before a named predecessor completed", bad);
  PASS();
}
