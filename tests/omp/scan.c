/* scan (inscan reductions) and lastprivate(conditional:), the constructs gcc lowers with the team
 * memory of the 5.0 worksharing entry points (GOMP_loop_start / GOMP_sections2_start with `mem`):
 * inclusive and exclusive prefix sums on a combined and an orphaned-style loop, an inclusive
 * running maximum, and the sequentially last assignment of a conditional lastprivate in sections
 * and in a dynamic loop. Every element is checked against a serial computation. */
#define TEST_NAME "scan"
#include "omp_test.h"
#include <omp.h>

/* gcc 12 warns about its own lowering of the conditional lastprivate in sections (the private
 * copy of `last` in the outlined function) */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define N 5000

static int a[N];
static long incl[N], excl[N], runmax[N];

int main(void) {
  unsigned x = 12345;
  for (int i = 0; i < N; ++i) {
    x = x * 1103515245u + 12345u;
    a[i] = (int)((x >> 16) % 1000) - 300;
  }

  for (int round = 0; round < 3; ++round) {
    long s = 0;
    #pragma omp parallel for reduction(inscan, + : s)
    for (int i = 0; i < N; ++i) {
      s += a[i];
      #pragma omp scan inclusive(s)
      incl[i] = s;
    }
    long want = 0;
    for (int i = 0; i < N; ++i) {
      want += a[i];
      CHECK(incl[i] == want, "inclusive scan, round %d: element %d is %ld, want %ld", round, i, incl[i], want);
    }
    CHECK(s == want, "inclusive scan: the reduction's final value %ld, want %ld", s, want);

    long e = 0;
    #pragma omp parallel
    {
      #pragma omp for reduction(inscan, + : e)
      for (int i = 0; i < N; ++i) {
        excl[i] = e;
        #pragma omp scan exclusive(e)
        e += a[i];
      }
    }
    want = 0;
    for (int i = 0; i < N; ++i) {
      CHECK(excl[i] == want, "exclusive scan, round %d: element %d is %ld, want %ld", round, i, excl[i], want);
      want += a[i];
    }
    CHECK(e == want, "exclusive scan: the reduction's final value %ld, want %ld", e, want);

    long m = -1000000;
    #pragma omp parallel for reduction(inscan, max : m)
    for (int i = 0; i < N; ++i) {
      if (a[i] > m) m = a[i];
      #pragma omp scan inclusive(m)
      runmax[i] = m;
    }
    long wm = -1000000;
    for (int i = 0; i < N; ++i) {
      if (a[i] > wm) wm = a[i];
      CHECK(runmax[i] == wm, "running maximum: element %d is %ld, want %ld", i, runmax[i], wm);
    }
  }

  /* lastprivate(conditional:): the value of the sequentially last assignment */
  int last = -1;
  #pragma omp parallel
  {
    #pragma omp sections lastprivate(conditional : last)
    {
      #pragma omp section
      last = 10;
      #pragma omp section
      {
        ot_spin_work(50);
        if (a[0] > 10000) last = 20; /* never */
      }
      #pragma omp section
      last = 30;
      #pragma omp section
      ot_spin_work(5);
    }
  }
  CHECK(last == 30, "sections lastprivate(conditional): %d, want 30", last);

  int lastpos = -1, want_pos = -1;
  for (int i = 0; i < N; ++i)
    if (a[i] > 650) want_pos = i;
  #pragma omp parallel for lastprivate(conditional : lastpos) schedule(dynamic, 13)
  for (int i = 0; i < N; ++i)
    if (a[i] > 650) lastpos = i;
  CHECK(lastpos == want_pos, "for lastprivate(conditional): %d, want %d", lastpos, want_pos);
  PASS();
}
