/* OMP_PROC_BIND with OMP_PLACES: every member of a first-level team is on the place the standard's
 * rules give it (OpenMP 5.1, 2.6.2), and its CPU mask is that place's CPUs. T threads, P places,
 * the primary on place 0 (the initial thread is bound to the first place):
 *   primary  every member on the primary's place;
 *   close    T <= P: member i on place i; T > P: P runs of consecutive members, floor(T/P) or
 *            ceil(T/P) long, the first on place 0, the next runs on the next places;
 *   spread   T <= P: the places cut into T runs of consecutive places, floor(P/T) or ceil(P/T)
 *            long; member i on the first place of run i; T > P: as close.
 * `strict` (the harness passes it for Plait): for T > P the runs must be consecutive. libgomp 12
 * deals the T mod P members left over round-robin from place 0 (7 threads on 3 places: 0 0 1 1 2 2
 * 0), which breaks the runs: a NOTE there. */
#define _GNU_SOURCE
#define TEST_NAME "proc_bind_places"
#include "omp_test.h"
#include <omp.h>
#include <sched.h>

#define MAXT 64

int main(int argc, char **argv) {
  const int strict = argc > 1 && !strcmp(argv[1], "strict");
  const int P = omp_get_num_places();
  const omp_proc_bind_t bind = omp_get_proc_bind();
  CHECK(P >= 1, "OMP_PLACES=%s but omp_get_num_places() = %d", getenv("OMP_PLACES"), P);
  CHECK(bind != omp_proc_bind_false, "OMP_PROC_BIND=%s but omp_get_proc_bind() is false", getenv("OMP_PROC_BIND"));
  int place[MAXT], mask_ok[MAXT], T = 0;
  #pragma omp parallel shared(place, mask_ok, T)
  {
    const int i = omp_get_thread_num();
    #pragma omp single
    T = omp_get_num_threads();
    if (i < MAXT) {
      place[i] = omp_get_place_num();
      /* the thread's mask is its place's CPUs */
      int ok = place[i] >= 0 && place[i] < P;
      if (ok) {
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(0, sizeof set, &set);
        int n = omp_get_place_num_procs(place[i]), ids[256];
        ok = n >= 1 && n <= 256 && CPU_COUNT(&set) == n;
        if (ok) {
          omp_get_place_proc_ids(place[i], ids);
          for (int k = 0; k < n; ++k) ok = ok && CPU_ISSET(ids[k], &set);
        }
      }
      mask_ok[i] = ok;
    }
  }
  CHECK(T >= 1 && T <= MAXT, "a team of %d", T);
  for (int i = 0; i < T; ++i)
    CHECK(mask_ok[i], "member %d: place %d, and its CPU mask is not that place's CPUs", i, place[i]);
  CHECK(place[0] == 0, "the primary is on place %d, not on the first", place[0]);
  if (bind == omp_proc_bind_primary) {
    for (int i = 0; i < T; ++i) CHECK(place[i] == 0, "primary: member %d on place %d", i, place[i]);
  } else if (T <= P && bind == omp_proc_bind_spread) {
    for (int i = 1; i < T; ++i) {
      int gap = place[i] - place[i - 1];
      CHECK(gap == P / T || gap == (P + T - 1) / T, "spread, %d threads on %d places: member %d on place %d after %d",
            T, P, i, place[i], place[i - 1]);
    }
  } else if (T <= P) {
    for (int i = 0; i < T; ++i) CHECK(place[i] == i, "close, %d threads on %d places: member %d on place %d", T, P, i, place[i]);
  } else {
    /* T > P: runs of consecutive members */
    int runs_ok = 1, p = 0, len = 0;
    for (int i = 0; i < T && runs_ok; ++i) {
      if (place[i] == p) {
        ++len;
      } else {
        runs_ok = place[i] == p + 1 && (len == T / P || len == (T + P - 1) / P);
        p = place[i];
        len = 1;
      }
    }
    runs_ok = runs_ok && p == P - 1 && (len == T / P || len == (T + P - 1) / P);
    if (strict) {
      CHECK(runs_ok, "%d threads on %d places: not %d runs of consecutive members (member %d on place %d)", T, P, P,
            T - 1, place[T - 1]);
    } else if (!runs_ok) {
      NOTE("%d threads on %d places: the members are not in runs of consecutive members", T, P);
    }
  }
  PASS();
}
