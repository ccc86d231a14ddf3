/* collapse(n): the nested iteration spaces become one, distributed by the schedule. Every (i,j)
 * or (i,j,k) exactly once for rectangular spaces of several shapes, with static chunk (exact round
 * robin over the collapsed logical number), dynamic and guided, signed and unsigned long long
 * counters, a non-rectangular (triangular) space (gcc 12 allows no schedule clause there), and lastprivate of the last (i,j). */
#define TEST_NAME "for_collapse"
#include "omp_test.h"
#include "loop_check.h"

int main(void) {
  /* rectangular 2-D, static chunk: the collapsed number is i * NJ + j */
  enum { NI = 37, NJ = 53 };
  lc_begin("collapse(2) static,5", NI * NJ);
  #pragma omp parallel
  {
    #pragma omp for collapse(2) schedule(static, 5)
    for (int i = 0; i < NI; ++i)
      for (int j = 0; j < NJ; ++j) lc_hit(i * NJ + j);
  }
  lc_check_cover();
  lc_check_static_chunk(5);

  lc_begin("parallel for collapse(2) dynamic,3 with steps", 20 * 15);
  #pragma omp parallel for collapse(2) schedule(dynamic, 3)
  for (int i = 40; i > 0; i -= 2)
    for (int j = -30; j < 0; j += 2) lc_hit(((40 - i) / 2) * 15 + (j + 30) / 2);
  lc_check_cover();
  lc_check_runs(3, 1);

  /* 3-D, guided, one dimension of size 1 */
  enum { A = 11, B = 1, C = 97 };
  lc_begin("collapse(3) guided", A * B * C);
  #pragma omp parallel
  {
    #pragma omp for collapse(3) schedule(guided, 4)
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < B; ++j)
        for (int k = 0; k < C; ++k) lc_hit((i * B + j) * C + k);
  }
  lc_check_cover();
  lc_check_runs(4, 0);

  /* unsigned long long counters: the collapsed count is computed in 64 bits */
  const unsigned long long big = 1ULL << 40;
  lc_begin("collapse(2) ull static", 40 * 60);
  #pragma omp parallel for collapse(2) schedule(static)
  for (unsigned long long i = big; i < big + 40; ++i)
    for (unsigned long long j = big * 2; j > big * 2 - 60; --j) lc_hit((int)((i - big) * 60 + (big * 2 - j)));
  lc_check_cover();
  lc_check_static_blocks();

  /* an empty inner dimension: nothing runs */
  int runs = 0, nj = 0;
  #pragma omp parallel for collapse(2)
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < nj; ++j) AT_INC(&runs);
  CHECK(runs == 0, "collapse with an empty inner loop ran %d iterations", runs);

  /* non-rectangular: j runs from 0 to i (OpenMP 5.0) */
  enum { T = 70 };
  int tri[T][T];
  memset(tri, 0, sizeof tri);
  #pragma omp parallel for collapse(2)
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) AT_INC(&tri[i][j]);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      CHECK(tri[i][j] == (j <= i), "triangular collapse: (%d,%d) ran %d times", i, j, tri[i][j]);

  /* lastprivate with collapse: the values of the sequentially last iteration */
  int li = -1, lj = -1;
  #pragma omp parallel for collapse(2) lastprivate(li, lj) schedule(dynamic)
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 17; ++j) {
      li = i;
      lj = j;
    }
  CHECK(li == 12 && lj == 16, "collapse lastprivate: (%d,%d), want (12,16)", li, lj);
  PASS();
}
