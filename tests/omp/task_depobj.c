/* depobj (OpenMP 5.0): omp_depend_t objects made with `depobj(o) depend(kind: x)`, used as
 * depend(depobj: o) (gcc then passes the depend array in the extended format, with entries that
 * point at {address, kind} pairs), changed with update(kind) and freed with destroy. Checked with
 * value sequences like plain dependences: an inout chain through a depobj, readers through an
 * update(in) object, a mix of depobj and ordinary clauses on one task, depobj objects in an array. */
#define TEST_NAME "task_depobj"
#include "omp_test.h"
#include <omp.h>

int main(void) {
  int x = 0, y = 0, bad = 0;
  int reads[20];
  #pragma omp parallel
  #pragma omp single
  {
    omp_depend_t ox, oy_in;
    #pragma omp depobj(ox) depend(inout: x)
    #pragma omp depobj(oy_in) depend(in: y)

    /* a chain through the depobj */
    for (int k = 0; k < 100; ++k) {
      #pragma omp task depend(depobj: ox) shared(x, bad) firstprivate(k)
      {
        if (x != k) AT_INC(&bad);
        ot_spin_work(k % 5 * 20);
        x = k + 1;
      }
    }
    /* an ordinary in on x after it */
    #pragma omp task depend(in: x) shared(x, bad)
    if (x != 100) AT_INC(&bad);

    /* writer of y by an ordinary clause, readers through the depobj, then a writer again */
    #pragma omp task depend(out: y) shared(y)
    {
      ot_spin_work(500);
      y = 7;
    }
    for (int k = 0; k < 20; ++k) {
      #pragma omp task depend(depobj: oy_in) shared(y, reads) firstprivate(k)
      reads[k] = y;
    }
    #pragma omp task depend(out: y) shared(y, reads, bad)
    {
      for (int k = 0; k < 20; ++k)
        if (reads[k] != 7) AT_INC(&bad);
      y = 8;
    }

    /* update: turn ox into an in dependence on x; readers after the chain */
    #pragma omp taskwait
    #pragma omp depobj(ox) update(in)
    int seen[5] = {0};
    for (int k = 0; k < 5; ++k) {
      #pragma omp task depend(depobj: ox) shared(x, seen) firstprivate(k)
      seen[k] = x;
    }
    /* a writer mixing a depobj (in on y) with an ordinary out on x: after the readers of x */
    #pragma omp task depend(depobj: oy_in) depend(out: x) shared(x, y, seen, bad)
    {
      for (int k = 0; k < 5; ++k)
        if (seen[k] != 100) AT_INC(&bad);
      if (y != 8) AT_INC(&bad);
      x = -1;
    }
    #pragma omp taskwait
    if (x != -1) AT_INC(&bad);
    #pragma omp depobj(ox) destroy
    #pragma omp depobj(oy_in) destroy

    /* an array of depobj objects, one per element of v */
    int v[4] = {0, 0, 0, 0};
    omp_depend_t ov[4];
    for (int i = 0; i < 4; ++i) {
      #pragma omp depobj(ov[i]) depend(inout: v[i])
    }
    for (int step = 0; step < 10; ++step)
      for (int i = 0; i < 4; ++i) {
        omp_depend_t *o = &ov[i];
        #pragma omp task depend(depobj: *o) shared(v, bad) firstprivate(i, step)
        {
          if (v[i] != step) AT_INC(&bad);
          v[i] = step + 1;
        }
      }
    #pragma omp taskwait
    for (int i = 0; i < 4; ++i) {
      if (v[i] != 10) AT_INC(&bad);
      #pragma omp depobj(ov[i]) destroy
    }
  }
  CHECK(bad == 0, "%d depobj-ordered tasks saw values out of order", bad);
  PASS();
}
