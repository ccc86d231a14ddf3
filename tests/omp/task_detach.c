/* detach (OpenMP 5.0): a task with detach(ev) completes only when its body has finished and
 * omp_fulfill_event(ev) has been called, in either order. Dependent tasks wait for completion (a
 * successor of a detached task never starts before the fulfil, checked with a flag set just before
 * it), taskwait and taskgroup wait for it, and the fulfil may come from the generating task, from
 * another task, from the detached task's own body, or from another thread — also for a dependent
 * task, whose successor's release then comes from a thread outside the team. */
#define TEST_NAME "task_detach"
#include "omp_test.h"
#include <omp.h>
#include <pthread.h>
#include <sched.h>

/* The foreign fulfiller: fulfils foreign_events[0..31], each once a task has published it there. */
static omp_event_handle_t foreign_events[32];
static int foreign_fulfilled;
static void *fulfiller(void *arg) {
  (void)arg;
  for (int i = 0; i < 32; ++i) {
    omp_event_handle_t e;
    while ((e = __atomic_load_n(&foreign_events[i], __ATOMIC_ACQUIRE)) == 0) sched_yield();
    omp_fulfill_event(e);
    AT_INC(&foreign_fulfilled);
  }
  return NULL;
}
#include <sched.h>

/* The foreign fulfiller of a dependent detached task: waits for dep_event, lets the team run on for
 * a while, marks the fulfil and makes it. */
static omp_event_handle_t dep_event;
static int dep_fulfilled;
static void *dep_fulfiller(void *arg) {
  (void)arg;
  omp_event_handle_t e;
  while ((e = __atomic_load_n(&dep_event, __ATOMIC_ACQUIRE)) == 0) sched_yield();
  for (int i = 0; i < 200; ++i) sched_yield();
  AT_STORE(&dep_fulfilled, 1);
  omp_fulfill_event(e);
  return NULL;
}

int main(void) {
  int bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int r = 0; r < 50; ++r) {
      int x = 0, fulfilled = 0, body_done = 0, succ_ok = -1;
      omp_event_handle_t ev;
      /* detached writer of x */
      #pragma omp task detach(ev) depend(out: x) shared(x, body_done)
      {
        x = r + 1;
        AT_STORE(&body_done, 1);
      }
      /* its successor: must see the fulfil */
      #pragma omp task depend(in: x) shared(x, fulfilled, body_done, succ_ok)
      succ_ok = AT_LOAD(&fulfilled) == 1 && AT_LOAD(&body_done) == 1 && x == r + 1;
      /* a task that fulfils the event after an unrelated dependence chain */
      int z = 0;
      #pragma omp task depend(out: z) shared(z)
      {
        ot_spin_work(300);
        z = 1;
      }
      #pragma omp task depend(in: z) shared(fulfilled) firstprivate(ev)
      {
        AT_STORE(&fulfilled, 1);
        omp_fulfill_event(ev);
      }
      #pragma omp taskwait
      if (succ_ok != 1) AT_INC(&bad);
    }

    /* fulfilled by the generating task before the task even ran (the body may still be pending) */
    for (int r = 0; r < 50; ++r) {
      int done = 0;
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(done)
      AT_INC(&done);
      omp_fulfill_event(ev);
      #pragma omp taskwait
      if (AT_LOAD(&done) != 1) AT_INC(&bad);
    }

    /* fulfilled from its own body */
    int self_done = 0;
    for (int r = 0; r < 50; ++r) {
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(self_done)
      {
        AT_INC(&self_done);
        omp_fulfill_event(ev);
      }
    }
    #pragma omp taskwait
    if (self_done != 50) AT_INC(&bad);

    /* a taskgroup waits for a detached task; it is fulfilled by a task inside the group */
    int g_done = 0, g_fulfilled = 0, g_after = -1;
    #pragma omp taskgroup
    {
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(g_done)
      AT_INC(&g_done);
      #pragma omp task firstprivate(ev) shared(g_fulfilled)
      {
        ot_spin_work(1000);
        AT_STORE(&g_fulfilled, 1);
        omp_fulfill_event(ev);
      }
    }
    g_after = AT_LOAD(&g_fulfilled) && AT_LOAD(&g_done);
    if (g_after != 1) AT_INC(&bad);
  }
  CHECK(bad == 0, "%d detached tasks were treated as complete before the body and the fulfil", bad);

  /* events fulfilled by other threads of the team: thread 0 creates the tasks and publishes their
   * events one by one, every thread fulfils its share as they appear (no barrier in between: a
   * barrier would wait for the detached tasks), and the region's end waits for all of them */
  int n_done = 0, ready = 0;
  omp_event_handle_t evs[64];
  #pragma omp parallel
  {
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    if (me == 0) {
      for (int i = 0; i < 64; ++i) {
        omp_event_handle_t e;
        #pragma omp task detach(e) shared(n_done)
        AT_INC(&n_done);
        evs[i] = e;
        AT_STORE(&ready, i + 1);
      }
    }
    for (int i = me; i < 64; i += n) {
      while (AT_LOAD(&ready) <= i) sched_yield();
      omp_fulfill_event(evs[i]);
    }
  }
  CHECK(n_done == 64, "%d of 64 detached tasks ran by the end of the region", n_done);

  /* events fulfilled by a thread that is in no team (a plain pthread, as an I/O or MPI completion
   * thread would be): each detached task is the only child of a task that ends at once, so the
   * fulfil completes the child and, with it, its parent's subtree; repeated over several regions.
   * No barrier waits while the fulfils come (the loop is nowait; each thread runs its tasks at its
   * taskwait, then waits for the fulfils): libgomp 12 misses the wake-up of a barrier whose last
   * detached task a thread outside the team fulfils, and hangs. */
  for (int round = 0; round < 20; ++round) {
    int ran = 0;
    for (int i = 0; i < 32; ++i) foreign_events[i] = 0;
    AT_STORE(&foreign_fulfilled, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, fulfiller, NULL) == 0, "pthread_create failed");
    #pragma omp parallel shared(ran)
    {
      #pragma omp for nowait
      for (int i = 0; i < 32; ++i) {
        #pragma omp task shared(ran) firstprivate(i)
        {
          omp_event_handle_t e;
          #pragma omp task detach(e) shared(ran)
          AT_INC(&ran);
          __atomic_store_n(&foreign_events[i], e, __ATOMIC_RELEASE);  /* the fulfiller may take it */
        }
      }
      #pragma omp taskwait
      while (AT_LOAD(&foreign_fulfilled) < 32) sched_yield();
    }
    pthread_join(th, NULL);
    CHECK(ran == 32, "round %d: %d of 32 detached tasks ran before the region ended", round, ran);
  }
  /* A dependent detached task fulfilled by a thread outside the team: its successor starts only
   * after the fulfil, and the release that starts it comes from that thread (a runtime must bring
   * it to the team's threads). The team waits in a taskwait, not a barrier (see above). */
  for (int round = 0; round < 20; ++round) {
    int x = 0, y = -1;
    dep_event = 0;
    AT_STORE(&dep_fulfilled, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, dep_fulfiller, NULL) == 0, "pthread_create failed");
    #pragma omp parallel shared(x, y)
    #pragma omp single
    {
      omp_event_handle_t e;
      #pragma omp task depend(out: x) detach(e) shared(x)
      x = 1;
      __atomic_store_n(&dep_event, e, __ATOMIC_RELEASE);
      #pragma omp task depend(in: x) shared(x, y)
      y = AT_LOAD(&dep_fulfilled) == 1 && x == 1;
      #pragma omp taskwait
    }
    pthread_join(th, NULL);
    CHECK(y == 1, "round %d: the successor of a task fulfilled outside the team ran %s", round,
          y == 0 ? "before the fulfil" : "never");
  }
  PASS();
}
