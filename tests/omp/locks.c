/* Lock routines: omp_init_lock / omp_set_lock / omp_unset_lock / omp_test_lock / omp_destroy_lock
 * and the nestable ones (not the _with_hint initialisers: gcc 12's omp.h declares them but its
 * libgomp does not export them, so the reference cannot link them). Contention counted exactly (a plain
 * read-modify-write under the lock, an "inside" count never above one); omp_test_lock fails while
 * another thread holds the lock and succeeds once it is free (phases separated by barriers, no
 * timing); a nested lock counts its depth through omp_test_nest_lock's return value and is free only
 * after as many unsets; locks used from tasks; a lock destroyed and initialised again. */
#define TEST_NAME "locks"
#include "omp_test.h"
#include <omp.h>

#define ITERS 3000

/* A try at a lock that another thread holds, with TEST (omp_test_lock or omp_test_nest_lock): the
 * failure it must be counts in *fails; a success is wrong, counts in *wrong and is undone by UNSET. */
#define TRY_HELD_LOCK(TEST, UNSET, lock, wrong, fails) \
  do {                                                 \
    if (TEST(lock)) {                                  \
      AT_INC(wrong);                                   \
      UNSET(lock);                                     \
    } else {                                           \
      AT_INC(fails);                                   \
    }                                                  \
  } while (0)

int main(void) {
  omp_lock_t lk;
  omp_init_lock(&lk);
  long plain = 0;
  int inside = 0, most = 0, n = 0, test_wins = 0;
  #pragma omp parallel
  {
    #pragma omp single
    n = omp_get_num_threads();
    for (int i = 0; i < ITERS; ++i) {
      omp_set_lock(&lk);
      AT_MAX(&most, AT_INC(&inside));
      long v = plain;
      if (i % 64 == 0) ot_spin_work(20);
      plain = v + 1;
      AT_DEC(&inside);
      omp_unset_lock(&lk);
    }
    /* acquiring by omp_test_lock in a loop: every success is exclusive */
    for (int i = 0; i < 500; ++i) {
      while (!omp_test_lock(&lk)) {
      }
      AT_MAX(&most, AT_INC(&inside));
      long v = plain;
      plain = v + 1;
      AT_INC(&test_wins);
      AT_DEC(&inside);
      omp_unset_lock(&lk);
    }
  }
  CHECK(most == 1, "up to %d threads held one lock at once", most);
  CHECK(plain == (long)n * (ITERS + 500), "counter under the lock %ld, want %ld", plain, (long)n * (ITERS + 500));
  CHECK(test_wins == n * 500, "omp_test_lock successes %d, want %d", test_wins, n * 500);

  /* test while held by another thread: phases by barriers */
  int held_fail = 0, free_ok = 0, wrong = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    if (me == 0) omp_set_lock(&lk);
    #pragma omp barrier
    if (me != 0) TRY_HELD_LOCK(omp_test_lock, omp_unset_lock, &lk, &wrong, &held_fail);
    #pragma omp barrier
    if (me == 0) omp_unset_lock(&lk);
    #pragma omp barrier
    #pragma omp single
    {
      if (omp_test_lock(&lk)) {
        AT_INC(&free_ok);
        omp_unset_lock(&lk);
      }
    }
  }
  CHECK(wrong == 0, "omp_test_lock succeeded %d times while another thread held the lock", wrong);
  CHECK(held_fail == n - 1 && free_ok == 1, "omp_test_lock: %d failures on a held lock (want %d), free lock %d",
        held_fail, n - 1, free_ok);
  omp_destroy_lock(&lk);

  /* destroyed and initialised again */
  omp_init_lock(&lk);
  plain = 0;
  #pragma omp parallel
  for (int i = 0; i < 500; ++i) {
    omp_set_lock(&lk);
    plain += 1;
    omp_unset_lock(&lk);
  }
  CHECK(plain == 500L * n, "re-initialised lock: %ld, want %ld", plain, 500L * n);
  omp_destroy_lock(&lk);

  /* nestable locks */
  omp_nest_lock_t nl;
  omp_init_nest_lock(&nl);
  int depth_bad = 0, other_fail = 0, other_wrong = 0;
  long nplain = 0;
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int i = 0; i < 300; ++i) {
      omp_set_nest_lock(&nl);
      omp_set_nest_lock(&nl);
      if (omp_test_nest_lock(&nl) != 3) AT_INC(&depth_bad);
      long v = nplain;
      nplain = v + 1;
      omp_unset_nest_lock(&nl);
      omp_unset_nest_lock(&nl);
      omp_unset_nest_lock(&nl);
    }
    #pragma omp barrier
    if (me == 0) {
      omp_set_nest_lock(&nl);
      omp_set_nest_lock(&nl);
    }
    #pragma omp barrier
    if (me != 0) TRY_HELD_LOCK(omp_test_nest_lock, omp_unset_nest_lock, &nl, &other_wrong, &other_fail);
    #pragma omp barrier
    if (me == 0) omp_unset_nest_lock(&nl); /* still held once */
    #pragma omp barrier
    if (me != 0 && omp_test_nest_lock(&nl)) {
      AT_INC(&other_wrong);
      omp_unset_nest_lock(&nl);
    }
    #pragma omp barrier
    if (me == 0) omp_unset_nest_lock(&nl); /* free now */
    #pragma omp barrier
    #pragma omp single
    {
      int d = omp_test_nest_lock(&nl);
      if (d != 1) AT_INC(&depth_bad);
      if (d) omp_unset_nest_lock(&nl);
    }
  }
  CHECK(depth_bad == 0, "omp_test_nest_lock returned a wrong nesting count %d times", depth_bad);
  CHECK(nplain == 300L * n, "counter under the nested lock %ld, want %ld", nplain, 300L * n);
  CHECK(other_wrong == 0 && other_fail == n - 1, "nested lock held by another thread: %d wrong successes, %d failures "
        "(want %d)", other_wrong, other_fail, n - 1);
  omp_destroy_nest_lock(&nl);
  omp_init_nest_lock(&nl);
  CHECK(omp_test_nest_lock(&nl) == 1 && omp_test_nest_lock(&nl) == 2, "fresh nested lock depth counts");
  omp_unset_nest_lock(&nl);
  omp_unset_nest_lock(&nl);
  omp_destroy_nest_lock(&nl);

  /* locks in tasks: a lock is owned by a task; each task sets and unsets it itself */
  omp_init_lock(&lk);
  long tplain = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int k = 0; k < 500; ++k) {
      #pragma omp task shared(tplain, lk)
      {
        omp_set_lock(&lk);
        long v = tplain;
        tplain = v + 1;
        omp_unset_lock(&lk);
      }
    }
  }
  omp_destroy_lock(&lk);
  CHECK(tplain == 500, "lock in tasks: %ld, want 500", tplain);
  PASS();
}
