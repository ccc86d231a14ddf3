/* depend(mutexinoutset:) (OpenMP 5.0; gcc passes the depend array in the extended format with a
 * mutexinoutset count): members of one set never run at the same time (an "inside" count that never
 * exceeds one, and plain read-modify-writes counted exactly), they all run after the preceding out
 * task of the variable and after the preceding readers, and a following in or out task runs after
 * all of them. Sets on two variables are independent; a task in two sets excludes members of both. */
#define TEST_NAME "task_mutexinoutset"
#include "omp_test.h"
#include <omp.h>

#define M 40

static int clock_;

int main(void) {
  int x = 0, y = 0;
  (void)y; /* used only in depend clauses */
  long plain_x = 0, plain_y = 0;
  int inside_x = 0, inside_y = 0, most_x = 0, most_y = 0;
  int bad = 0, after_writer = 0, members_done = 0;
  int w_end = 0, r_end[4] = {0, 0, 0, 0}, m_start[M], m_end[M], f_start = 0, f_count = -1;
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp task depend(out: x) shared(x, w_end)
    {
      ot_spin_work(500);
      x = 1;
      w_end = AT_INC(&clock_);
    }
    for (int k = 0; k < 4; ++k) {
      #pragma omp task depend(in: x) firstprivate(k) shared(x, r_end, bad)
      {
        if (x != 1) AT_INC(&bad);
        ot_spin_work(100);
        r_end[k] = AT_INC(&clock_);
      }
    }
    for (int k = 0; k < M; ++k) {
      #pragma omp task depend(mutexinoutset: x) firstprivate(k) \
        shared(x, plain_x, inside_x, most_x, m_start, m_end, after_writer, members_done)
      {
        m_start[k] = AT_INC(&clock_);
        AT_MAX(&most_x, AT_INC(&inside_x));
        if (x == 1) AT_INC(&after_writer);
        long v = plain_x;
        ot_spin_work(50);
        plain_x = v + 1;
        AT_DEC(&inside_x);
        AT_INC(&members_done);
        m_end[k] = AT_INC(&clock_);
      }
      /* an independent set on y, interleaved */
      #pragma omp task depend(mutexinoutset: y) shared(plain_y, inside_y, most_y)
      {
        AT_MAX(&most_y, AT_INC(&inside_y));
        long v = plain_y;
        ot_spin_work(30);
        plain_y = v + 1;
        AT_DEC(&inside_y);
      }
    }
    /* a task in both sets */
    #pragma omp task depend(mutexinoutset: x, y) shared(plain_x, plain_y, inside_x, inside_y, most_x, most_y)
    {
      AT_MAX(&most_x, AT_INC(&inside_x));
      AT_MAX(&most_y, AT_INC(&inside_y));
      plain_x += 1000;
      plain_y += 1000;
      AT_DEC(&inside_x);
      AT_DEC(&inside_y);
    }
    #pragma omp task depend(in: x) shared(f_start, f_count, members_done)
    {
      f_start = AT_INC(&clock_);
      f_count = AT_LOAD(&members_done);
    }
    #pragma omp taskwait
  }
  CHECK(most_x == 1 && most_y == 1, "mutexinoutset: up to %d members of the x set and %d of the y set ran at once",
        most_x, most_y);
  CHECK(plain_x == M + 1000 && plain_y == M + 1000, "mutexinoutset counters %ld and %ld, want %d", plain_x, plain_y,
        M + 1000);
  CHECK(bad == 0 && after_writer == M, "%d members ran before the preceding out task", M - after_writer);
  for (int k = 0; k < M; ++k) {
    CHECK(m_start[k] > w_end, "member %d started before the out task ended", k);
    for (int j = 0; j < 4; ++j) CHECK(m_start[k] > r_end[j], "member %d started before reader %d ended", k, j);
    CHECK(m_end[k] < f_start, "the following in task started before member %d ended", k);
  }
  CHECK(f_count == M, "the following in task saw %d of %d members done", f_count, M);
  PASS();
}
