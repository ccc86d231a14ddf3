/* Loops with unsigned long long iteration variables (GOMP_loop_ull_*, GOMP_loop_ull_ordered_*, and
 * the combined forms; the bounds are read at run time or lie above LLONG_MAX, so gcc cannot narrow
 * the loops to signed long): ranges above 2^32 and next to ULLONG_MAX, counts that need 64 bits,
 * upward and downward loops (the ull entry points take an "up" flag), steps of 2^33, every schedule
 * kind and modifier, ordered. Each logical iteration exactly once, static chunks round robin,
 * dynamic chunks aligned, guided chunks at least c, monotonic kinds in increasing order per thread. */
#define TEST_NAME "for_ull"
#include "omp_test.h"
#include "loop_check.h"
#include <limits.h>

#define N 3000ULL

typedef unsigned long long ull;

static volatile ull base_v = 0x123456789ULL; /* above 2^32, read at run time */

/* The ranges most cases run: N iterations upward from base (above 2^32) and downward from top (next
 * to ULLONG_MAX), each iteration reported with its logical number. */
#define UP_FROM_BASE for (ull u = base; u < base + N; ++u) lc_hit((int)(u - base))
#define DOWN_FROM_TOP for (ull u = top; u > top - N; --u) lc_hit((int)(top - u))

/* A loop with the ordered clause under the loop construct PRAGMA (a string: "omp for ordered ..."),
 * downward from top over N iterations, logging each u at order_log[pos++] in its ordered part. */
#define ULL_ORDERED_DOWN(PRAGMA)           \
  do {                                     \
    _Pragma(PRAGMA)                        \
    for (ull u = top; u > top - N; --u) {  \
      _Pragma("omp ordered")               \
      order_log[pos++] = u;                \
    }                                      \
  } while (0)

int main(void) {
  const ull base = base_v;
  const ull top = ULLONG_MAX - 10; /* the last iteration sits next to the maximum */

  LC_TEAM_LOOP("ull static", (int)N, "omp for schedule(static)", UP_FROM_BASE);
  lc_check_static_blocks();

  LC_TEAM_LOOP("ull static,7 near ULLONG_MAX", (int)N, "omp for schedule(static, 7)",
               for (ull u = top - N + 1; u <= top; ++u) lc_hit((int)(u - (top - N + 1))));
  lc_check_static_chunk(7);

  /* downward: up == false in the ull entry points */
  LC_TEAM_LOOP("ull dynamic,5 downward", (int)N, "omp for schedule(dynamic, 5)", DOWN_FROM_TOP);
  lc_check_runs(5, 1);

  LC_TEAM_LOOP("ull monotonic:dynamic,4", (int)N, "omp for schedule(monotonic: dynamic, 4)", UP_FROM_BASE);
  lc_check_runs(4, 1);
  lc_check_monotonic();

  /* a step of 2^33: a 64-bit distance with few iterations */
  const ull step = 1ULL << 33;
  LC_TEAM_LOOP("ull guided,3 step 2^33", (int)N, "omp for schedule(guided, 3)",
               for (ull u = base; u < base + N * step; u += step) lc_hit((int)((u - base) / step)));
  lc_check_runs(3, 0);

  LC_TEAM_LOOP("ull monotonic:guided downward", (int)N, "omp for schedule(monotonic: guided)", DOWN_FROM_TOP);
  lc_check_monotonic();

  lc_begin("parallel for ull dynamic downward step 3", (int)N);
  #pragma omp parallel for schedule(dynamic)
  for (ull u = base + 3 * N; u > base; u -= 3) lc_hit((int)((base + 3 * N - u) / 3));
  lc_check_cover();

  lc_begin("parallel for ull static,4", (int)N);
  #pragma omp parallel for schedule(static, 4)
  for (ull u = base; u < base + N; ++u) lc_hit((int)(u - base));
  lc_check_cover();
  lc_check_static_chunk(4);

  lc_begin("parallel for ull guided", (int)N);
  #pragma omp parallel for schedule(guided)
  for (ull u = top - N; u < top; ++u) lc_hit((int)(u - (top - N)));
  lc_check_cover();

  /* runtime, with and without modifiers */
  omp_set_schedule(omp_sched_static, 9);
  LC_TEAM_LOOP("ull runtime static,9", (int)N, "omp for schedule(runtime)", UP_FROM_BASE);
  lc_check_static_chunk(9);
  omp_set_schedule(omp_sched_dynamic, 6);
  LC_TEAM_LOOP("ull monotonic:runtime dynamic,6", (int)N, "omp for schedule(monotonic: runtime)", UP_FROM_BASE);
  lc_check_runs(6, 1);
  lc_check_monotonic();
  LC_TEAM_LOOP("ull nonmonotonic:runtime dynamic,6", (int)N, "omp for schedule(nonmonotonic: runtime)", DOWN_FROM_TOP);
  lc_check_runs(6, 1);

  LC_TEAM_LOOP("ull nonmonotonic:dynamic,6", (int)N, "omp for schedule(nonmonotonic: dynamic, 6)", UP_FROM_BASE);
  lc_check_runs(6, 1);

  /* ordered over ull: the ordered parts run in iteration order, under several schedules */
  static ull order_log[N];
  for (int kind = 0; kind < 4; ++kind) {
    int pos = 0;
    omp_set_schedule(omp_sched_guided, 2);
    #pragma omp parallel
    {
      switch (kind) {
        case 0: ULL_ORDERED_DOWN("omp for ordered schedule(dynamic, 2)"); break;
        case 1: ULL_ORDERED_DOWN("omp for ordered schedule(static)"); break;
        case 2: ULL_ORDERED_DOWN("omp for ordered schedule(guided)"); break;
        default: ULL_ORDERED_DOWN("omp for ordered schedule(runtime)"); break;
      }
    }
    CHECK(pos == (int)N, "ull ordered (form %d): %d ordered parts ran, want %llu", kind, pos, N);
    for (int k = 0; k < (int)N; ++k)
      CHECK(order_log[k] == top - (ull)k, "ull ordered (form %d): position %d holds %llu, want %llu", kind, k,
            order_log[k], top - (ull)k);
  }

  /* an empty ull range, and ranges whose bound is ULLONG_MAX itself */
  int runs = 0;
  ull lo = top, hi = top;
  #pragma omp parallel for schedule(dynamic)
  for (ull u = lo; u < hi; ++u) AT_INC(&runs);
  CHECK(runs == 0, "empty ull loop ran %d iterations", runs);
  lc_begin("ull up to ULLONG_MAX", 15);
  #pragma omp parallel for schedule(static, 1)
  for (ull u = ULLONG_MAX - 15; u < ULLONG_MAX; ++u) lc_hit((int)(u - (ULLONG_MAX - 15)));
  lc_check_cover();
  lc_check_static_chunk(1);
  lc_begin("ull down from ULLONG_MAX", 15);
  #pragma omp parallel for schedule(dynamic, 2)
  for (ull u = ULLONG_MAX; u > ULLONG_MAX - 15; --u) lc_hit((int)(ULLONG_MAX - u));
  lc_check_cover();
  PASS();
}
