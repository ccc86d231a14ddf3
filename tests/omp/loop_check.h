/* Iteration bookkeeping for the worksharing-loop programs: which logical iterations ran, how many
 * times, on which thread, and whether each thread saw its iterations in increasing order. */
#ifndef PLAIT_OMP_LOOP_CHECK_H
#define PLAIT_OMP_LOOP_CHECK_H

#include <omp.h>

#define LC_MAXN 6000
#define LC_MAXT 64

typedef struct {
  const char *what;
  int n;                   /* logical iterations expected */
  int nthreads;            /* team size seen inside */
  int seen[LC_MAXN];
  int owner[LC_MAXN];
  int last[LC_MAXT];       /* last logical iteration per thread */
  int backwards;           /* a thread saw a smaller iteration after a larger one */
  int out_of_range;
  int left;                /* threads that called lc_leave() after the loop */
} loop_check;

static loop_check LC;

static inline void lc_begin(const char *what, int n) {
  memset(&LC, 0, sizeof LC);
  LC.what = what;
  LC.n = n;
  for (int t = 0; t < LC_MAXT; ++t) LC.last[t] = -1;
}

/* Called once per executed iteration with its logical number k (0-based). */
static inline void lc_hit(int k) {
  int t = omp_get_thread_num();
  if (k < 0 || k >= LC.n || t < 0 || t >= LC_MAXT) {
    AT_INC(&LC.out_of_range);
    return;
  }
  int nt = omp_get_num_threads();
  if (AT_LOAD(&LC.nthreads) != nt) AT_STORE(&LC.nthreads, nt);
  AT_INC(&LC.seen[k]);
  LC.owner[k] = t;
  if (k <= LC.last[t]) AT_INC(&LC.backwards);
  LC.last[t] = k;
}

/* Called by every thread after the loop, inside the region. Besides counting, it keeps gcc from
 * combining `parallel { for }` into one GOMP_parallel_loop_* call, so that the GOMP_loop_*_start
 * entry points are the ones exercised. */
static inline void lc_leave(void) {
  int nt = omp_get_num_threads();
  if (AT_LOAD(&LC.nthreads) != nt) AT_STORE(&LC.nthreads, nt);
  AT_INC(&LC.left);
}

/* Every logical iteration exactly once (and, where lc_leave() was used, every thread left). */
static inline void lc_check_cover(void) {
  CHECK(LC.out_of_range == 0, "%s: %d iterations outside the iteration space", LC.what, LC.out_of_range);
  CHECK(LC.left == 0 || LC.left == LC.nthreads, "%s: %d of %d threads came out of the loop", LC.what, LC.left,
        LC.nthreads);
  for (int k = 0; k < LC.n; ++k)
    CHECK(LC.seen[k] == 1, "%s: logical iteration %d of %d ran %d times", LC.what, k, LC.n, LC.seen[k]);
}

/* Each thread executed its iterations in increasing logical order. */
static inline void lc_check_monotonic(void) {
  CHECK(LC.backwards == 0, "%s: monotonic schedule, but a thread went backwards %d times", LC.what, LC.backwards);
}

/* schedule(static, c): chunk j goes to thread j % nthreads, exactly. */
static inline void lc_check_static_chunk(int c) {
  for (int k = 0; k < LC.n; ++k) {
    int want = (k / c) % LC.nthreads;
    CHECK(LC.owner[k] == want, "%s: static chunk %d, iteration %d ran on thread %d, want %d (team of %d)", LC.what,
          c, k, LC.owner[k], want, LC.nthreads);
  }
}

/* schedule(static) without chunk: at most one chunk per thread, so each thread's iterations are
 * one contiguous block. */
static inline void lc_check_static_blocks(void) {
  int starts[LC_MAXT];
  for (int t = 0; t < LC_MAXT; ++t) starts[t] = 0;
  for (int k = 0; k < LC.n; ++k) {
    if (k == 0 || LC.owner[k] != LC.owner[k - 1]) {
      int t = LC.owner[k];
      CHECK(++starts[t] == 1, "%s: static schedule gave thread %d more than one chunk (again at %d)", LC.what, t, k);
    }
  }
}

/* Runs of consecutive iterations on one thread are unions of whole chunks. dynamic, c: every run
 * starts at a multiple of c and all but the last have a length that is a multiple of c. guided, c:
 * every chunk but the last has at least c iterations, so every run but the last does. */
static inline void lc_check_runs(int c, int aligned) {
  int start = 0;
  for (int k = 1; k <= LC.n; ++k) {
    if (k == LC.n || LC.owner[k] != LC.owner[k - 1]) {
      int len = k - start;
      if (aligned) {
        CHECK(start % c == 0, "%s: chunk size %d, but a run of one thread starts at %d", LC.what, c, start);
        CHECK(k == LC.n || len % c == 0, "%s: chunk size %d, but a run [%d,%d) of one thread has length %d", LC.what,
              c, start, k, len);
      } else {
        CHECK(k == LC.n || len >= c, "%s: minimum chunk %d, but a run [%d,%d) of one thread has length %d", LC.what,
              c, start, k, len);
      }
      start = k;
    }
  }
}

/* One case of a worksharing loop run by a team: lc_begin(WHAT, N); a parallel region in which LOOP,
 * a for statement that reports its iterations with lc_hit, runs under the loop construct PRAGMA (a
 * string: "omp for schedule(...)") and each thread calls lc_leave() after it; lc_check_cover(). */
#define LC_TEAM_LOOP(WHAT, N, PRAGMA, LOOP) \
  do {                                      \
    lc_begin((WHAT), (N));                  \
    _Pragma("omp parallel")                 \
    {                                       \
      _Pragma(PRAGMA)                       \
      LOOP;                                 \
      lc_leave();                           \
    }                                       \
    lc_check_cover();                       \
  } while (0)

/* A dynamic schedule with each chunk size ch of the array CHUNKS: PRAGMA (a string naming ch, as
 * "omp for schedule(dynamic, ch)") over [0, N) in a team, every EVERY-th iteration slow
 * (ot_spin_work(WORK)) so that threads take chunks out of turn; every iteration once, each thread's
 * runs made of whole chunks of ch aligned to ch. */
#define LC_DYNAMIC_CHUNKS(WHAT, N, PRAGMA, CHUNKS, EVERY, WORK)               \
  do {                                                                      \
    for (unsigned lc_c_ = 0; lc_c_ < sizeof(CHUNKS) / sizeof(CHUNKS)[0]; ++lc_c_) { \
      int ch = (CHUNKS)[lc_c_];                                             \
      LC_TEAM_LOOP(WHAT, N, PRAGMA, for (int i = 0; i < (N); ++i) {         \
        if (i % (EVERY) == 0) ot_spin_work(WORK);                           \
        lc_hit(i);                                                          \
      });                                                                   \
      lc_check_runs(ch, 1);                                                 \
    }                                                                       \
  } while (0)

#endif
