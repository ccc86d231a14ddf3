/* final: a final task and all its descendants are included tasks: omp_in_final() is true in them,
 * they run at once on the encountering thread (the generating task sees their effect right after
 * each construct, on the same thread), also for a whole subtree; final(0) and final(expr) are not
 * final; omp_in_final() is false outside. */
#define TEST_NAME "task_final"
#include "omp_test.h"
#include <omp.h>

static int bad_final, bad_inline, nodes;

static void tree(int depth) {
  AT_INC(&nodes);
  if (!omp_in_final()) AT_INC(&bad_final);
  if (depth == 0) return;
  int me = omp_get_thread_num();
  int done[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    #pragma omp task shared(done)
    {
      if (omp_get_thread_num() != me) AT_INC(&bad_inline);
      tree(depth - 1);
      done[k] = 1;
    }
    /* included: complete already, no taskwait needed */
    if (!done[k]) AT_INC(&bad_inline);
  }
}

int main(void) {
  CHECK(!omp_in_final(), "omp_in_final() true outside any task");
  int plain_final = -1, not_final = -1, expr_final[2] = {-1, -1};
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp task final(1) shared(plain_final)
    {
      plain_final = omp_in_final();
      tree(6);
    }
    #pragma omp task final(0) shared(not_final)
    not_final = omp_in_final();
    for (int k = 0; k < 2; ++k) {
      #pragma omp task final(k == 1) shared(expr_final)
      expr_final[k] = omp_in_final();
    }
    #pragma omp taskwait
  }
  CHECK(plain_final == 1, "omp_in_final() in a final(1) task: %d", plain_final);
  CHECK(not_final == 0, "omp_in_final() in a final(0) task: %d", not_final);
  CHECK(expr_final[0] == 0 && expr_final[1] == 1, "final(expr): %d %d", expr_final[0], expr_final[1]);
  CHECK(nodes == 127, "final subtree: %d nodes, want 127", nodes);
  CHECK(bad_final == 0, "%d descendants of a final task had omp_in_final() false", bad_final);
  CHECK(bad_inline == 0, "%d descendants of a final task were deferred or ran on another thread", bad_inline);
  PASS();
}
