/* Shared by every program of the OpenMP conformance suite (C and C++).
 *
 * A program defines TEST_NAME before including this header, checks its own answer and ends with
 * PASS() (prints "PASS <name>", exit status 0). CHECK(cond, fmt, ...) reports the first violated
 * check as one line "FAIL <name>: <what>" and ends the process with status 1, from any thread or
 * task: the first reporter wins, a second one that fails at the same time waits for the exit. */
#ifndef PLAIT_OMP_TEST_H
#define PLAIT_OMP_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TEST_NAME
#error "define TEST_NAME before including omp_test.h"
#endif

#if defined(__GNUC__)
#define OT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OT_PRINTF(a, b)
#endif

static inline void ot_fail(const char *fmt, ...) OT_PRINTF(1, 2);
static inline void ot_fail(const char *fmt, ...) {
  static int reporting;
  if (__atomic_exchange_n(&reporting, 1, __ATOMIC_ACQ_REL)) {
    for (;;) pause(); /* another thread is printing the verdict and exits */
  }
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  printf("FAIL %s: %s\n", TEST_NAME, line);
  fflush(stdout);
  _Exit(1);
}

#define CHECK(cond, ...)  \
  do {                    \
    if (!(cond)) {        \
      ot_fail(__VA_ARGS__); \
    }                     \
  } while (0)

#define PASS()                       \
  do {                               \
    printf("PASS %s\n", TEST_NAME);  \
    fflush(stdout);                  \
    return 0;                        \
  } while (0)

/* Observations worth recording (which of two allowed behaviours a runtime chose): on stderr, so
 * that stdout stays the one verdict line. */
#define NOTE(...)                           \
  do {                                      \
    fprintf(stderr, "note %s: ", TEST_NAME); \
    fprintf(stderr, __VA_ARGS__);           \
    fputc('\n', stderr);                    \
  } while (0)

/* Sequentially consistent atomics on plain variables: the suite counts with these inside regions. */
#define AT_INC(p) __atomic_add_fetch((p), 1, __ATOMIC_SEQ_CST)
#define AT_DEC(p) __atomic_sub_fetch((p), 1, __ATOMIC_SEQ_CST)
#define AT_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define AT_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define AT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Raise *maxp to v (for "most at once" counts). */
#define AT_MAX(maxp, v)                                                                    \
  do {                                                                                     \
    int ot_v_ = (v);                                                                       \
    int ot_old_ = __atomic_load_n((maxp), __ATOMIC_SEQ_CST);                               \
    while (ot_old_ < ot_v_ &&                                                              \
           !__atomic_compare_exchange_n((maxp), &ot_old_, ot_v_, 0, __ATOMIC_SEQ_CST,     \
                                        __ATOMIC_SEQ_CST)) {                               \
    }                                                                                      \
  } while (0)

/* Some work the compiler cannot remove, so that a region lasts long enough for others to run. */
static inline void ot_spin_work(int n) {
  volatile int sink = 0;
  for (int i = 0; i < n; ++i) sink = sink + i;
  (void)sink;
}

#endif
