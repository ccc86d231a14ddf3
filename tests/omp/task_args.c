/* Task argument blocks: gcc passes GOMP_task the size and alignment of the block of captured
 * values (arg_size, arg_align) and copies them in. Large blocks (an 8 KiB array firstprivate,
 * many scalars of mixed sizes), over-aligned captures (64, 256 and 4096-byte alignment: the copy
 * inside the task must be that aligned), captures of a struct with padding, and the same for
 * if(0) (undeferred: the block may live on the stack) and for tasks created from tasks. */
#define TEST_NAME "task_args"
#include "omp_test.h"
#include <omp.h>
#include <stdint.h>

#define BIG 2048

typedef struct {
  _Alignas(64) double d[3];
} al64;

typedef struct {
  _Alignas(256) int v[5];
} al256;

typedef struct {
  _Alignas(4096) unsigned char page[100];
} al4096;

typedef struct {
  char c;
  long long l;
  short s;
  double d;
} padded;

static int bad;

static void check_block(int tag, const int *big, al64 a, al256 b, const al4096 *pg, padded p, char c1, long long l1,
                        float f1, short s1) {
  for (int k = 0; k < BIG; ++k)
    if (big[k] != k * 7 + tag) {
      AT_INC(&bad);
      break;
    }
  if (a.d[0] != tag || a.d[2] != tag * 2.0) AT_INC(&bad);
  if (b.v[0] != tag || b.v[4] != tag + 4) AT_INC(&bad);
  if (pg->page[0] != (unsigned char)tag || pg->page[99] != 99) AT_INC(&bad);
  if (p.c != 'p' || p.l != tag * 1000000007LL || p.s != (short)tag || p.d != 0.25) AT_INC(&bad);
  if (c1 != 'x' || l1 != -tag || f1 != 1.5f || s1 != 3) AT_INC(&bad);
}

int main(void) {
  int misaligned = 0, ran = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int tag = 0; tag < 100; ++tag) {
      int big[BIG];
      for (int k = 0; k < BIG; ++k) big[k] = k * 7 + tag;
      al64 a = {{tag, 0, tag * 2.0}};
      al256 b = {{tag, tag + 1, tag + 2, tag + 3, tag + 4}};
      static al4096 pg;
      pg.page[0] = (unsigned char)tag;
      pg.page[99] = 99;
      al4096 pgc = pg;
      padded p = {'p', tag * 1000000007LL, (short)tag, 0.25};
      char c1 = 'x';
      long long l1 = -tag;
      float f1 = 1.5f;
      short s1 = 3;
      #pragma omp task firstprivate(big, a, b, pgc, p, c1, l1, f1, s1, tag)
      {
        if ((uintptr_t)&a % 64 || (uintptr_t)&b % 256 || (uintptr_t)&pgc % 4096) AT_INC(&misaligned);
        check_block(tag, big, a, b, &pgc, p, c1, l1, f1, s1);
        AT_INC(&ran);
        /* a task created from this task, capturing the same block again */
        #pragma omp task firstprivate(big, a, b, pgc, p, c1, l1, f1, s1, tag)
        {
          if ((uintptr_t)&a % 64 || (uintptr_t)&b % 256 || (uintptr_t)&pgc % 4096) AT_INC(&misaligned);
          check_block(tag, big, a, b, &pgc, p, c1, l1, f1, s1);
          AT_INC(&ran);
        }
      }
      /* undeferred, same block */
      #pragma omp task if(0) firstprivate(big, a, b, pgc, p, c1, l1, f1, s1, tag)
      {
        if ((uintptr_t)&a % 64 || (uintptr_t)&b % 256 || (uintptr_t)&pgc % 4096) AT_INC(&misaligned);
        check_block(tag, big, a, b, &pgc, p, c1, l1, f1, s1);
        AT_INC(&ran);
      }
      /* the originals change after creation: the copies must not */
      for (int k = 0; k < BIG; ++k) big[k] = -1;
      a.d[0] = b.v[0] = -1;
      p.c = 'q';
      (void)big;
    }
  }
  CHECK(ran == 300, "%d of 300 tasks ran", ran);
  CHECK(misaligned == 0, "%d tasks got an over-aligned capture at a misaligned address", misaligned);
  CHECK(bad == 0, "%d tasks saw a wrong value in their argument block", bad);
  PASS();
}
