/* lastprivate on worksharing loops: the original variable gets the value of the sequentially last
 * iteration, whichever thread ran it and whatever the schedule (static, chunked, dynamic, guided,
 * ull, steps); firstprivate and lastprivate on one variable; lastprivate of an array; and
 * lastprivate(conditional:) (OpenMP 5.0), where the value comes from the last iteration that
 * actually assigned it (gcc passes a buffer through GOMP_loop_start for that). */
#define TEST_NAME "lastprivate"
#include "omp_test.h"
#include <omp.h>

#define N 3001

int main(void) {
  for (int round = 0; round < 8; ++round) {
    int a = -1, b = -1, c = -1, d = -1;
    int i_last = -1;
    #pragma omp parallel
    {
      #pragma omp for lastprivate(a) schedule(static)
      for (int i = 0; i < N; ++i) a = i * 2;
      #pragma omp for lastprivate(b) schedule(dynamic, 7)
      for (int i = 0; i < N; ++i) b = i + round;
      #pragma omp for lastprivate(c) schedule(guided)
      for (int i = N; i > 0; i -= 3) c = i;
      #pragma omp for lastprivate(d, i_last) schedule(static, 2)
      for (int i = 0; i < N; ++i) {
        d = -i;
        i_last = i;
      }
    }
    CHECK(a == 2 * (N - 1), "static lastprivate: %d", a);
    CHECK(b == N - 1 + round, "dynamic lastprivate: %d", b);
    CHECK(c == 1 + (N - 1) % 3, "guided downward lastprivate: %d, want %d", c, 1 + (N - 1) % 3);
    CHECK(d == -(N - 1) && i_last == N - 1, "static,2 lastprivate: %d %d", d, i_last);
  }

  /* the loop variable itself, and an ull loop */
  int iv = -1;
  unsigned long long uv = 0;
  #pragma omp parallel for lastprivate(iv) schedule(dynamic)
  for (iv = 0; iv < N; ++iv) {
  }
  CHECK(iv == N, "lastprivate loop variable: %d, want %d", iv, N);
  #pragma omp parallel for lastprivate(uv) schedule(static, 5)
  for (uv = 1ULL << 40; uv < (1ULL << 40) + 100; uv += 3) {
  }
  CHECK(uv == (1ULL << 40) + 102, "lastprivate ull loop variable: %llu", uv);

  /* firstprivate + lastprivate: each copy starts at the original, the last iteration's copy wins */
  int fl = 1000, bad = 0, team = 0;
  #pragma omp parallel for firstprivate(fl) lastprivate(fl) schedule(static, 1)
  for (int i = 0; i < 64; ++i) {
    if (fl < 1000) AT_INC(&bad);
    fl += i;
    if (i == 0) team = omp_get_num_threads();
  }
  CHECK(bad == 0, "firstprivate copies did not start from the original");
  /* static,1: the thread that ran iteration 63 ran 63 % team, 63 % team + team, ..., 63 */
  int want_fl = 1000;
  for (int i = 63 % team; i < 64; i += team) want_fl += i;
  CHECK(fl == want_fl, "firstprivate+lastprivate: %d, want %d (team of %d)", fl, want_fl, team);

  /* an array */
  int arr[4] = {0, 0, 0, 0};
  #pragma omp parallel for lastprivate(arr) schedule(dynamic, 3)
  for (int i = 0; i < N; ++i)
    for (int k = 0; k < 4; ++k) arr[k] = i * 4 + k;
  for (int k = 0; k < 4; ++k) CHECK(arr[k] == (N - 1) * 4 + k, "lastprivate array: arr[%d] = %d", k, arr[k]);

  /* conditional: only some iterations assign; the last of those wins */
  for (int round = 0; round < 6; ++round) {
    int cv = -1;
    int stride = 7 + round;
    #pragma omp parallel for lastprivate(conditional : cv) schedule(dynamic, 5)
    for (int i = 0; i < N; ++i)
      if (i % stride == 0 && i < N - 500) cv = i;
    int want = ((N - 501) / stride) * stride;
    CHECK(cv == want, "lastprivate(conditional:) stride %d: %d, want %d", stride, cv, want);
    int cw = -1;
    #pragma omp parallel
    {
      #pragma omp for lastprivate(conditional : cw) schedule(static, 4)
      for (int i = 0; i < N; ++i)
        if (i % stride == 1) cw = i * 10;
    }
    want = (((N - 2) / stride) * stride + 1) * 10;
    CHECK(cw == want, "lastprivate(conditional:) in a region, stride %d: %d, want %d", stride, cw, want);
  }
  PASS();
}
