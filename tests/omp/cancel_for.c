/* cancel for (OMP_CANCELLATION=true from the harness). Guaranteed: the iteration that cancels stops
 * right after its cancel; the cancelling thread runs no further iterations of the loop (checked under
 * schedule(static): a first static loop of the same shape tells which iterations are the
 * canceller's); the loop's end (GOMP_loop_end_cancel) lets everybody out; the region goes on
 * normally after the loop (the next loop runs fully). Which iterations other threads ran before
 * they saw the cancellation is unspecified: only "at most once" is checked for them. */
#define TEST_NAME "cancel_for"
#include "omp_test.h"
#include <omp.h>

#define N 4000

static int hits[N], assign[N];

int main(void) {
  CHECK(omp_get_cancellation() == 1, "omp_get_cancellation() = %d (the harness sets OMP_CANCELLATION=true)",
        omp_get_cancellation());
  for (int round = 0; round < 10; ++round) {
    memset(hits, 0, sizeof hits);
    const int K = 1 + round * 397; /* the iteration that cancels */
    int canceller = -1, after = 0, twice = 0, next_loop = 0;
    #pragma omp parallel
    {
      /* the same static assignment as the cancelled loop below */
      #pragma omp for schedule(static)
      for (int i = 0; i < N; ++i) assign[i] = omp_get_thread_num();
      #pragma omp for schedule(static)
      for (int i = 0; i < N; ++i) {
        #pragma omp cancellation point for
        if (AT_INC(&hits[i]) != 1) AT_INC(&twice);
        if (i == K) {
          canceller = omp_get_thread_num();
          #pragma omp cancel for
          AT_INC(&after);
        }
      }
      /* the region continues: a full loop */
      #pragma omp for schedule(dynamic, 16)
      for (int i = 0; i < N; ++i) AT_INC(&next_loop);
    }
    CHECK(after == 0, "round %d: code after cancel for ran", round);
    CHECK(twice == 0, "round %d: an iteration ran twice", round);
    CHECK(hits[K] == 1 && canceller == assign[K], "round %d: the cancelling iteration ran %d times on thread %d "
          "(static owner %d)", round, hits[K], canceller, assign[K]);
    for (int i = K + 1; i < N; ++i)
      CHECK(!(assign[i] == canceller && hits[i]), "round %d: the cancelling thread %d went on to iteration %d",
            round, canceller, i);
    CHECK(next_loop == N, "round %d: the loop after the cancelled one ran %d of %d iterations", round, next_loop, N);
  }

  /* dynamic schedule (gcc rejects cancel for in a combined parallel for, whose loop is nowait) */
  int ran = 0, after = 0, twice = 0;
  memset(hits, 0, sizeof hits);
  #pragma omp parallel
  {
    #pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < N; ++i) {
      #pragma omp cancellation point for
      if (AT_INC(&hits[i]) != 1) AT_INC(&twice);
      AT_INC(&ran);
      if (i == 100) {
        #pragma omp cancel for
        AT_INC(&after);
      }
    }
  }
  CHECK(after == 0 && twice == 0 && hits[100] == 1, "dynamic cancelled loop: after %d, twice %d", after, twice);
  CHECK(ran >= 1 && ran <= N, "dynamic cancelled loop ran %d iterations", ran);
  PASS();
}
