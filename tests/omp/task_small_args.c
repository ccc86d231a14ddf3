/* Small argument blocks, every size: a task whose only capture is a firstprivate struct of N
 * bytes gets an argument block of exactly N bytes (arg_size N, arg_align 1), for N = 1..40 —
 * both sides of each size a runtime may treat differently (a record class that holds 16 bytes
 * of arguments, a fast path for blocks of up to 32). Every byte of the task's copy is checked.
 * The tasks come from a single producer (taskwait after each size), from every thread at once,
 * and as grandchildren: a task creates children and returns without waiting, so that its
 * parent's taskwait (and the barrier) must cover tasks that are not its own children. */
#define TEST_NAME "task_small_args"
#include "omp_test.h"
#include <omp.h>

#define REPS 64

static int bad, done;

/* The pattern: byte 0 is a seed, byte i is seed + 7i + n (mod 256). */
static void fill(unsigned char *c, int n, int seed) {
  c[0] = (unsigned char)seed;
  for (int i = 1; i < n; ++i) c[i] = (unsigned char)(seed + 7 * i + n);
}
static void check(const unsigned char *c, int n) {
  for (int i = 1; i < n; ++i)
    if (c[i] != (unsigned char)(c[0] + 7 * i + n)) {
      AT_INC(&bad);
      return;
    }
  AT_INC(&done);
}

/* One function per size N: spawn `reps` tasks capturing a block of N bytes; `nest`: each task
 * spawns one more (a grandchild of the caller) and returns without waiting for it. */
#define SIZES(X)                                                                                       \
  X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) \
  X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34)    \
  X(35) X(36) X(37) X(38) X(39) X(40)
#define NSIZES 40

#define DEFINE(N)                                                     \
  typedef struct {                                                    \
    unsigned char c[N];                                               \
  } blk##N;                                                           \
  static void spawn##N(int reps, int nest) {                          \
    for (int r = 0; r < reps; ++r) {                                  \
      blk##N v;                                                       \
      fill(v.c, N, r * 13 + N);                                       \
      if (nest) {                                                     \
        _Pragma("omp task firstprivate(v)") {                         \
          check(v.c, N);                                              \
          blk##N w;                                                   \
          fill(w.c, N, v.c[0] + 1);                                   \
          _Pragma("omp task firstprivate(w)") check(w.c, N);          \
        }                                                             \
      } else {                                                        \
        _Pragma("omp task firstprivate(v)") check(v.c, N);            \
      }                                                               \
    }                                                                 \
  }
SIZES(DEFINE)

typedef void (*spawn_fn)(int, int);
#define ENTRY(N) spawn##N,
static const spawn_fn spawners[NSIZES] = {SIZES(ENTRY)};

int main(void) {
  /* a single producer, every size in turn, taskwait after each */
  #pragma omp parallel
  #pragma omp single
  for (int k = 0; k < NSIZES; ++k) {
    spawners[k](REPS, 0);
    #pragma omp taskwait
    CHECK(AT_LOAD(&done) == (k + 1) * REPS, "size %d: %d of %d tasks done after taskwait", k + 1,
          AT_LOAD(&done) - k * REPS, REPS);
  }
  CHECK(AT_LOAD(&bad) == 0, "%d task(s) saw a wrong copy of their arguments (single producer)", AT_LOAD(&bad));

  /* every thread spawns every size; children spawn grandchildren and do not wait for them: the
   * producer's taskwait waits only for its children, the barrier for all */
  done = 0;
  int nthreads = 1;
  #pragma omp parallel
  {
    #pragma omp single
    nthreads = omp_get_num_threads();
    for (int k = 0; k < NSIZES; ++k) spawners[k](REPS / 4, 1);
    #pragma omp taskwait
  }
  CHECK(AT_LOAD(&done) == nthreads * NSIZES * (REPS / 4) * 2, "%d of %d nested tasks done after the region",
        AT_LOAD(&done), nthreads * NSIZES * (REPS / 4) * 2);
  CHECK(AT_LOAD(&bad) == 0, "%d task(s) saw a wrong copy of their arguments (nested)", AT_LOAD(&bad));
  PASS();
}
