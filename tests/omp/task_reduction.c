/* Reductions over tasks (OpenMP 5.0): taskloop reduction (GOMP_taskloop with a task reduction),
 * taskgroup task_reduction with in_reduction on its tasks (GOMP_taskgroup_reduction_register,
 * GOMP_task_reduction_remap), nested taskgroups reducing different variables, a user-declared
 * reduction, and the task modifier on parallel and for reductions (tasks created in the region
 * take part through in_reduction). Sums are of integers, so any combining order is exact. */
#define TEST_NAME "task_reduction"
#include "omp_test.h"
#include <omp.h>

#define N 2000

typedef struct {
  long lo, hi;
} range;

#pragma omp declare reduction(span : range : omp_out.lo = omp_in.lo < omp_out.lo ? omp_in.lo : omp_out.lo, \
                                             omp_out.hi = omp_in.hi > omp_out.hi ? omp_in.hi : omp_out.hi) \
    initializer(omp_priv = (range){1L << 40, -(1L << 40)})

static volatile unsigned long long ull_base = 0x8000000000000123ULL; /* above LLONG_MAX, read at run time */

int main(void) {
  long tl_sum = 0, tl_max = -1;
  long tg_sum = 0, tg_prod = 1, inner = 0;
  range sp = {1L << 40, -(1L << 40)};
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp taskloop reduction(+ : tl_sum) reduction(max : tl_max) grainsize(17)
    for (int i = 0; i < N; ++i) {
      tl_sum += i;
      if (i * 3 > tl_max) tl_max = i * 3;
    }

    #pragma omp taskgroup task_reduction(+ : tg_sum) task_reduction(* : tg_prod) task_reduction(span : sp)
    {
      for (int i = 0; i < N; ++i) {
        #pragma omp task in_reduction(+ : tg_sum) firstprivate(i)
        tg_sum += i;
      }
      for (int k = 0; k < 20; ++k) {
        #pragma omp task in_reduction(* : tg_prod) in_reduction(span : sp) firstprivate(k)
        {
          tg_prod *= (k % 2) ? 2 : 1;
          if (k - 100 < sp.lo) sp.lo = k - 100;
          if (k + 100 > sp.hi) sp.hi = k + 100;
        }
      }
      /* a nested taskgroup on another variable; its tasks also join the outer one */
      #pragma omp taskgroup task_reduction(+ : inner)
      {
        for (int k = 0; k < 50; ++k) {
          #pragma omp task in_reduction(+ : inner) in_reduction(+ : tg_sum)
          {
            inner += 2;
            tg_sum += 1;
          }
        }
      }
      if (inner != 100) ot_fail("nested taskgroup reduction: %ld before the outer one ended, want 100", inner);
      /* a taskloop taking part in the enclosing task reduction */
      #pragma omp taskloop in_reduction(+ : tg_sum) num_tasks(5)
      for (int i = 0; i < 100; ++i) tg_sum += 1000;
    }
  }
  CHECK(tl_sum == (long)N * (N - 1) / 2 && tl_max == 3L * (N - 1), "taskloop reduction: sum %ld max %ld", tl_sum,
        tl_max);
  long want = (long)N * (N - 1) / 2 + 50 + 100000;
  CHECK(tg_sum == want, "taskgroup task_reduction(+): %ld, want %ld", tg_sum, want);
  CHECK(tg_prod == 1L << 10, "taskgroup task_reduction(*): %ld, want %ld", tg_prod, 1L << 10);
  CHECK(sp.lo == -100 && sp.hi == 119, "user-declared task reduction: [%ld, %ld], want [-100, 119]", sp.lo, sp.hi);

  /* the task modifier: the implicit tasks and explicit tasks created in the region all contribute */
  long ps = 0;
  int nthreads = 0;
  #pragma omp parallel reduction(task, + : ps)
  {
    #pragma omp single
    nthreads = omp_get_num_threads();
    ps += 1;
    for (int k = 0; k < 10; ++k) {
      #pragma omp task in_reduction(+ : ps)
      ps += 10;
    }
  }
  CHECK(ps == 101L * nthreads, "parallel reduction(task, +): %ld, want %ld", ps, 101L * nthreads);

  long fs = 0;
  #pragma omp parallel
  {
    #pragma omp for reduction(task, + : fs) schedule(dynamic, 10)
    for (int i = 0; i < 200; ++i) {
      fs += 1;
      if (i % 20 == 0) {
        #pragma omp task in_reduction(+ : fs)
        fs += 1000;
      }
    }
  }
  CHECK(fs == 200 + 10 * 1000, "for reduction(task, +): %ld, want %d", fs, 200 + 10 * 1000);

  /* the task modifier on other worksharing forms: gcc passes the reduction through the 5.0 entry
   * points GOMP_loop_ull_start, GOMP_loop_ordered_start, GOMP_loop_doacross_start and
   * GOMP_sections2_start */
  long us = 0, os = 0, ds = 0, ss = 0;
  int order_bad = 0, last = -1;
  const unsigned long long ubase = ull_base;
  #pragma omp parallel
  {
    #pragma omp for reduction(task, + : us) schedule(dynamic, 7)
    for (unsigned long long u = ubase; u < ubase + 300; ++u) {
      us += 1;
      if (u % 50 == 0) {
        #pragma omp task in_reduction(+ : us)
        us += 100;
      }
    }
    #pragma omp for ordered reduction(task, + : os) schedule(dynamic, 3)
    for (int i = 0; i < 300; ++i) {
      #pragma omp ordered
      {
        if (i != last + 1) AT_INC(&order_bad);
        last = i;
      }
      os += 2;
      if (i % 100 == 0) {
        #pragma omp task in_reduction(+ : os)
        os += 1000;
      }
    }
    #pragma omp for ordered(1) reduction(task, + : ds)
    for (int i = 1; i < 300; ++i) {
      #pragma omp ordered depend(sink: i - 1)
      ds += 1;
      #pragma omp ordered depend(source)
    }
    #pragma omp sections reduction(task, + : ss)
    {
      #pragma omp section
      {
        ss += 1;
        #pragma omp task in_reduction(+ : ss)
        ss += 10;
      }
      #pragma omp section
      ss += 100;
    }
  }
  long uwant = 300;
  for (unsigned long long u = ubase; u < ubase + 300; ++u)
    if (u % 50 == 0) uwant += 100;
  CHECK(us == uwant, "ull for reduction(task, +): %ld, want %ld", us, uwant);
  CHECK(os == 600 + 3000 && order_bad == 0, "ordered for reduction(task, +): %ld (want 3600), %d out of order", os,
        order_bad);
  CHECK(ds == 299, "doacross for reduction(task, +): %ld, want 299", ds);
  CHECK(ss == 111, "sections reduction(task, +): %ld, want 111", ss);
  PASS();
}
