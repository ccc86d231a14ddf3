/* atomic: update, read, write, capture and compare forms on several types, counted exactly under
 * contention. long double and __int128 have no lock-free 16-byte operations on x86-64 without
 * -mcx16, so gcc lowers every atomic on them to GOMP_atomic_start()/GOMP_atomic_end() (one global
 * lock): a runtime that makes that pair a no-op loses updates and tears values here. */
#define TEST_NAME "atomic"
#include "omp_test.h"
#include <omp.h>

__extension__ typedef __int128 i128;

#define N 4000 /* updates per kind, shared by the team */

static unsigned char seen_int[N], seen_ll[N], seen_ld[N], seen_i128[N];

int main(void) {
  int ci = 0;
  long long cll = 0;
  unsigned short us = 0;
  float fl = 0;
  double db = 0, prod = 1.0;
  long double ld = 0, ldprod = 1.0L, ldmin = 1e30L;
  i128 big = 0, bigsum = 0;
  int bits = 0, xo = 0, mn = 1 << 30, mx = -1;
  long long llmax = -1;
  int bad = 0;

  #pragma omp parallel
  {
    /* capture: every old value is seen once, so no update was lost or doubled */
    #pragma omp for schedule(dynamic, 7)
    for (int i = 0; i < N; ++i) {
      int v;
      long long vll;
      long double vld;
      i128 vb;
      #pragma omp atomic capture
      v = ci++;
      #pragma omp atomic capture
      { vll = cll; cll += 1; }
      #pragma omp atomic capture
      { ld = ld + 1.0L; vld = ld; }
      #pragma omp atomic capture seq_cst
      vb = big++;
      if (v < 0 || v >= N || vll < 0 || vll >= N || vld < 1 || vld > N || vb < 0 || vb >= N) {
        AT_INC(&bad);
      } else {
        AT_INC(&seen_int[v]);
        AT_INC(&seen_ll[vll]);
        AT_INC(&seen_ld[(int)vld - 1]);
        AT_INC(&seen_i128[(int)vb]);
      }
    }

    /* updates of every operator */
    #pragma omp for
    for (int i = 0; i < N; ++i) {
      #pragma omp atomic
      us += 3;
      #pragma omp atomic update
      fl = fl + 1.0f;
      #pragma omp atomic relaxed
      db += 2.0;
      #pragma omp atomic
      bits |= 1 << (i % 31);
      #pragma omp atomic
      xo ^= i;
      #pragma omp atomic
      bigsum += (i128)i << 64;
      /* powers of two: exact in any order */
      if (i < 64) {
        #pragma omp atomic
        prod *= 2.0;
        #pragma omp atomic
        ldprod *= 4.0L;
      } else if (i < 128) {
        #pragma omp atomic
        prod /= 2.0;
        #pragma omp atomic
        ldprod = ldprod / 4.0L;
      }
      /* compare forms (OpenMP 5.1) */
      #pragma omp atomic compare
      if (i < mn) { mn = i; }
      #pragma omp atomic compare
      mx = i > mx ? i : mx;
      #pragma omp atomic compare
      if (llmax < i) { llmax = i; }
      long double li = (long double)(i + 5);
      #pragma omp atomic compare
      if (li < ldmin) { ldmin = li; }
    }
  }
  CHECK(bad == 0, "%d captured values were out of range", bad);
  for (int i = 0; i < N; ++i) {
    CHECK(seen_int[i] == 1, "int capture: old value %d seen %d times", i, seen_int[i]);
    CHECK(seen_ll[i] == 1, "long long capture: old value %d seen %d times", i, seen_ll[i]);
    CHECK(seen_ld[i] == 1, "long double capture (GOMP_atomic_start): new value %d seen %d times", i + 1, seen_ld[i]);
    CHECK(seen_i128[i] == 1, "__int128 capture (GOMP_atomic_start): old value %d seen %d times", i, seen_i128[i]);
  }
  CHECK(ci == N && cll == N && ld == (long double)N && big == N, "final counters int %d ll %lld ld %Lg i128 %lld",
        ci, cll, ld, (long long)big);
  CHECK(us == (unsigned short)(3 * N), "unsigned short += : %u", (unsigned)us);
  CHECK(fl == (float)N && db == 2.0 * N, "float %g double %g", (double)fl, db);
  CHECK(bits == 0x7fffffff, "|= gave %#x", bits);
  int want_xo = 0;
  for (int i = 0; i < N; ++i) want_xo ^= i;
  CHECK(xo == want_xo, "^= gave %d, want %d", xo, want_xo);
  CHECK(bigsum == ((i128)N * (N - 1) / 2) << 64, "__int128 sum (GOMP_atomic_start) wrong: high part %lld",
        (long long)(bigsum >> 64));
  CHECK(prod == 1.0 && ldprod == 1.0L, "power-of-two products: double %g long double %Lg (want 1)", prod, ldprod);
  CHECK(mn == 0 && mx == N - 1 && llmax == N - 1 && ldmin == 5.0L, "compare: min %d max %d llmax %lld ldmin %Lg",
        mn, mx, llmax, ldmin);

  /* read and write: a long double written atomically is never seen torn by an atomic read */
  const long double A = 1.0L / 3.0L, B = -7.25e300L;
  long double cell = A;
  int torn = 0, reads = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int k = 0; k < 2000; ++k) {
      if ((me + k) % 2) {
        #pragma omp atomic write
        cell = (k % 3) ? A : B;
      } else {
        long double r;
        #pragma omp atomic read
        r = cell;
        AT_INC(&reads);
        if (r != A && r != B) AT_INC(&torn);
      }
    }
  }
  CHECK(torn == 0, "%d of %d atomic reads of a long double saw a torn value", torn, reads);

  /* capture with compare: the old value of a compare-and-swap */
  int slot = 0, winners = 0;
  #pragma omp parallel
  {
    int old;
    #pragma omp atomic compare capture
    { old = slot; if (slot == 0) { slot = omp_get_thread_num() + 1; } }
    if (old == 0) AT_INC(&winners);
  }
  CHECK(winners == 1 && slot >= 1, "compare-and-swap from 0: %d winners, slot %d", winners, slot);
  PASS();
}
