/* reductions: +, *, -, min, max, &, |, ^, &&, || on integer and floating types (values chosen so
 * that floating results are exact in any order), on parallel, for, sections and combined
 * constructs, arrays and array sections (OpenMP 4.5), a user-declared reduction on a struct with an
 * initializer, several reductions on one construct (gcc combines those through
 * GOMP_atomic_start/end), and reductions with nowait followed by a barrier. */
#define TEST_NAME "reduction"
#include "omp_test.h"
#include <omp.h>

#define N 4000

typedef struct {
  long sum;
  long count;
  int lo, hi;
} stats;

static void stats_merge(stats *out, const stats *in) {
  out->sum += in->sum;
  out->count += in->count;
  if (in->lo < out->lo) out->lo = in->lo;
  if (in->hi > out->hi) out->hi = in->hi;
}

#pragma omp declare reduction(merge : stats : stats_merge(&omp_out, &omp_in)) \
    initializer(omp_priv = (stats){0, 0, 1 << 30, -(1 << 30)})

int main(void) {
  int nthreads = 0;
  #pragma omp parallel
  #pragma omp single
  nthreads = omp_get_num_threads();

  long sum = 0, diff = 0;
  double dprod = 1.0;
  int mn = 1 << 30, mx = -(1 << 30);
  double dmn = 1e300, dmx = -1e300;
  unsigned band = ~0u, bor = 0, bxor = 0;
  int land = 1, lor = 0;
  #pragma omp parallel for reduction(+ : sum) reduction(- : diff) reduction(* : dprod) reduction(min : mn, dmn) \
    reduction(max : mx, dmx) reduction(& : band) reduction(| : bor) reduction(^ : bxor) reduction(&& : land)      \
    reduction(|| : lor) schedule(dynamic, 17)
  for (int i = 0; i < N; ++i) {
    sum += i;
    diff -= i;
    if (i % 400 == 0) dprod *= 2.0;
    if (i % 400 == 200) dprod *= 0.5;
    if (i == 1234) dprod *= 8.0;
    mn = i - 50 < mn ? i - 50 : mn;
    mx = i * 2 > mx ? i * 2 : mx;
    dmn = (double)i / 4 < dmn ? (double)i / 4 : dmn;
    dmx = (double)i / 4 > dmx ? (double)i / 4 : dmx;
    band &= (unsigned)(i == 77 ? 0xF0F0 : 0xFFFF);
    bor |= 1u << (i % 32);
    bxor ^= (unsigned)i;
    land = land && (i >= 0);
    lor = lor || (i == 3999);
  }
  unsigned want_xor = 0;
  for (int i = 0; i < N; ++i) want_xor ^= (unsigned)i;
  CHECK(sum == (long)N * (N - 1) / 2 && diff == -sum, "+ / -: %ld %ld", sum, diff);
  CHECK(dprod == 8.0, "*: %g, want 8", dprod);
  CHECK(mn == -50 && mx == 2 * (N - 1), "min/max int: %d %d", mn, mx);
  CHECK(dmn == 0.0 && dmx == (N - 1) / 4.0, "min/max double: %g %g", dmn, dmx);
  CHECK(band == 0xF0F0u && bor == 0xFFFFFFFFu && bxor == want_xor, "& | ^: %#x %#x %#x", band, bor, bxor);
  CHECK(land == 1 && lor == 1, "&& ||: %d %d", land, lor);

  /* on parallel: each implicit task contributes once */
  int members = 0;
  long prod = 1;
  #pragma omp parallel reduction(+ : members) reduction(* : prod)
  {
    members += 1;
    prod *= 2;
  }
  CHECK(members == nthreads && prod == 1L << nthreads, "parallel reduction: %d members, product %ld", members, prod);

  /* on a for inside a region, with nowait, repeated; and on sections */
  long acc = 0, secsum = 0;
  #pragma omp parallel
  {
    for (int r = 0; r < 10; ++r) {
      #pragma omp for reduction(+ : acc) schedule(guided) nowait
      for (int i = 0; i < N; ++i) acc += 1;
    }
    #pragma omp barrier
    #pragma omp sections reduction(+ : secsum)
    {
      #pragma omp section
      secsum += 1;
      #pragma omp section
      secsum += 10;
      #pragma omp section
      secsum += 100;
    }
  }
  CHECK(acc == 10L * N, "10 loops with reduction nowait: %ld, want %ld", acc, 10L * N);
  CHECK(secsum == 111, "sections reduction: %ld, want 111", secsum);

  /* arrays and array sections */
  long hist[8] = {0};
  long part[10] = {0};
  #pragma omp parallel for reduction(+ : hist) schedule(static, 3)
  for (int i = 0; i < N; ++i) hist[i % 8] += 1;
  #pragma omp parallel for reduction(+ : part[2:5])
  for (int i = 0; i < N; ++i) part[2 + i % 5] += i % 5;
  for (int k = 0; k < 8; ++k) CHECK(hist[k] == N / 8, "array reduction: hist[%d] = %ld", k, hist[k]);
  for (int k = 0; k < 10; ++k) {
    long want = (k >= 2 && k < 7) ? (long)(N / 5) * (k - 2) : 0;
    CHECK(part[k] == want, "array section reduction: part[%d] = %ld, want %ld", k, part[k], want);
  }

  /* user-declared reduction */
  stats st = {0, 0, 1 << 30, -(1 << 30)};
  #pragma omp parallel for reduction(merge : st) schedule(dynamic, 31)
  for (int i = 0; i < N; ++i) {
    st.sum += i;
    st.count += 1;
    if (i - 7 < st.lo) st.lo = i - 7;
    if (i + 7 > st.hi) st.hi = i + 7;
  }
  CHECK(st.sum == (long)N * (N - 1) / 2 && st.count == N && st.lo == -7 && st.hi == N + 6,
        "declare reduction(merge): sum %ld count %ld lo %d hi %d", st.sum, st.count, st.lo, st.hi);

  /* a reduction variable that is a long double (its combine needs GOMP_atomic_start/end) */
  long double lsum = 0;
  #pragma omp parallel for reduction(+ : lsum)
  for (int i = 0; i < N; ++i) lsum += 0.5L;
  CHECK(lsum == N / 2, "long double reduction: %Lg", lsum);
  PASS();
}
