/* depend on array sections and elements. The libgomp ABI passes each dependence as one address
 * (the section's first element), so sections that start at the same element conflict and sections
 * of one array that start elsewhere are separate. Checked: a writer of a[0:N] then readers of
 * a[0:N]; disjoint blocks of one array are not ordered with each other (a detached writer of block
 * 0 is fulfilled by a reader of block 1); rows of a 2-D array; element-wise chains a[i] with a
 * wavefront of dependences a[i-1] -> a[i]; and depend(iterator(...)) over an index list. */
#define TEST_NAME "task_depend_sections"
#include "omp_test.h"
#include <omp.h>

#define N 64
#define B 16

int main(void) {
  int a[N];
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    /* the whole array as one section */
    for (int r = 0; r < 30; ++r) {
      #pragma omp task depend(out: a[0:N]) shared(a)
      {
        ot_spin_work(200);
        for (int i = 0; i < N; ++i) a[i] = r * N + i;
      }
      for (int k = 0; k < 4; ++k) {
        #pragma omp task depend(in: a[0:N]) shared(a, bad) firstprivate(r)
        {
          for (int i = 0; i < N; ++i)
            if (a[i] != r * N + i) {
              AT_INC(&bad);
              break;
            }
        }
      }
    }
    #pragma omp taskwait

    /* disjoint blocks are independent */
    omp_event_handle_t ev;
    int w0 = 0, r1 = 0;
    #pragma omp task depend(out: a[0:B]) detach(ev) shared(a, w0)
    {
      a[0] = -1;
      w0 = 1;
    }
    #pragma omp task depend(in: a[B:B]) shared(r1) firstprivate(ev)
    {
      r1 = 1;
      omp_fulfill_event(ev);
    }
    #pragma omp task depend(in: a[0:B]) shared(a, bad, w0, r1)
    if (a[0] != -1 || w0 != 1 || r1 != 1) AT_INC(&bad);
    #pragma omp taskwait
  }
  CHECK(bad == 0, "whole-array and block sections: %d readers saw the wrong data", bad);

  /* rows of a 2-D array: each row its own chain */
  enum { R = 8, C = 32 };
  static int m[R][C];
  memset(m, 0, sizeof m);
  int row_bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int step = 0; step < 20; ++step)
      for (int i = 0; i < R; ++i) {
        #pragma omp task depend(inout: m[i][0:C]) firstprivate(i, step) shared(m, row_bad)
        {
          for (int j = 0; j < C; ++j) {
            if (m[i][j] != step) row_bad = 1;
            m[i][j] = step + 1;
          }
        }
      }
  }
  CHECK(row_bad == 0, "row sections: a row was updated out of order");

  /* element-wise wavefront: v[i] depends on v[i-1] of the same sweep and on v[i] of the last */
  static long v[N];
  memset(v, 0, sizeof v);
  #pragma omp parallel
  #pragma omp single
  {
    for (int sweep = 0; sweep < 10; ++sweep)
      for (int i = 0; i < N; ++i) {
        if (i == 0) {
          #pragma omp task depend(inout: v[0]) shared(v)
          v[0] += 1;
        } else {
          #pragma omp task depend(in: v[i - 1]) depend(inout: v[i]) firstprivate(i) shared(v)
          v[i] += v[i - 1];
        }
      }
  }
  /* the same sweeps, sequentially */
  long w[N];
  memset(w, 0, sizeof w);
  for (int sweep = 0; sweep < 10; ++sweep)
    for (int i = 0; i < N; ++i) w[i] += i == 0 ? 1 : w[i - 1];
  for (int i = 0; i < N; ++i) CHECK(v[i] == w[i], "wavefront: v[%d] = %ld, want %ld", i, v[i], w[i]);

  /* depend(iterator(...)): a task that writes the elements of an index list, readers of each */
  int idx[4] = {3, 17, 40, 63};
  int e[N];
  memset(e, 0, sizeof e);
  int it_bad = 0, n = 4;
  (void)n; /* used only in a depend clause */
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp task depend(iterator(k = 0 : n), out: e[idx[k]]) shared(e, idx)
    {
      ot_spin_work(500);
      for (int k = 0; k < 4; ++k) e[idx[k]] = k + 1;
    }
    for (int k = 0; k < 4; ++k) {
      #pragma omp task depend(in: e[idx[k]]) firstprivate(k) shared(e, idx, it_bad)
      if (e[idx[k]] != k + 1) AT_INC(&it_bad);
    }
  }
  CHECK(it_bad == 0, "depend(iterator): %d readers ran before the writer", it_bad);
  PASS();
}
