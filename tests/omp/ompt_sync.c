/* OMPT: a tool inside the program checks the callbacks of mutual exclusion, nested regions, masked
 * and cancellation (OpenMP 5.1, chapter 4):
 *   - locks: lock_init/lock_destroy; each omp_set_lock a mutex_acquire then mutex_acquired on the
 *     same thread and lock, each omp_unset_lock a mutex_released; omp_test_lock as test_lock (libomp
 *     16 says lock: both are accepted); a
 *     nestable lock taken again by its owner a nest_lock begin, released but kept a nest_lock end;
 *   - critical and ordered: acquire, acquired and released per entry, with their kinds;
 *   - nested regions: an inner region's parallel_begin names the outer member's implicit task as its
 *     encountering task, and ompt_get_parallel_info(1) inside answers the outer region;
 *   - masked (clang's builds: gcc inlines the construct, so no runtime sees it): a begin/end pair on
 *     the thread that runs it;
 *   - cancel (with the argument "cancel" and OMP_CANCELLATION=true): one cancel of the parallel
 *     region, activated, by the thread that cancels; other members may detect it.
 * Built by clang it runs on libomp (the reference) and on Plait; by gcc, linked with libplait-omp.
 * Prints "PASS ompt_sync" (exit 0) or "FAIL ompt_sync: <what>" (exit 1). */
#define TEST_NAME "ompt_sync"
#include "ompt_test.h"

#define MAXEV 16384
#define ITER 20

enum { EV_LOCK_INIT = 1, EV_LOCK_DESTROY, EV_ACQUIRE, EV_ACQUIRED, EV_RELEASED, EV_NEST_BEGIN, EV_NEST_END, EV_PAR_BEGIN,
       EV_IMPL_BEGIN, EV_MASKED_BEGIN, EV_MASKED_END, EV_CANCEL };

struct event {
  int ready;
  int kind;
  int thread;
  uint64_t a, b;
  int flags;
};

static struct event events[MAXEV];
static int nevents;

static void add(int kind, uint64_t a, uint64_t b, int flags) {
  int i = __atomic_fetch_add(&nevents, 1, __ATOMIC_RELAXED);
  if (i >= MAXEV) CHECK(0, "more than %d events", MAXEV);
  events[i] = (struct event){0, kind, my_thread(), a, b, flags};
  __atomic_store_n(&events[i].ready, 1, __ATOMIC_RELEASE);
}
/* The mutex callbacks, one per event (a callback is not told which event it was registered for):
 * ompt_callback_mutex_acquire_t's form (lock_init, mutex_acquire) and ompt_callback_mutex_t's
 * (lock_destroy, mutex_acquired, mutex_released). */
#define ON_MUTEX_ACQUIRE(fn, ev)                                                                      \
  static void fn(ompt_mutex_t kind, unsigned hint, unsigned impl, ompt_wait_id_t id, const void *ra) { \
    (void)hint, (void)impl, (void)ra;                                                                 \
    add(ev, id, 0, (int)kind);                                                                        \
  }
#define ON_MUTEX(fn, ev)                                                   \
  static void fn(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) { \
    (void)ra;                                                              \
    add(ev, id, 0, (int)kind);                                             \
  }
ON_MUTEX_ACQUIRE(on_lock_init, EV_LOCK_INIT)
ON_MUTEX(on_lock_destroy, EV_LOCK_DESTROY)
ON_MUTEX_ACQUIRE(on_acquire, EV_ACQUIRE)
ON_MUTEX(on_acquired, EV_ACQUIRED)
ON_MUTEX(on_released, EV_RELEASED)
static void on_nest_lock(ompt_scope_endpoint_t ep, ompt_wait_id_t id, const void *ra) {
  (void)ra;
  add(ep == ompt_scope_begin ? EV_NEST_BEGIN : EV_NEST_END, id, 0, 0);
}
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par, unsigned requested,
                              int flags, const void *ra) {
  (void)frame, (void)ra, (void)requested, (void)flags;
  par->value = new_id();
  add(EV_PAR_BEGIN, par->value, val(task), 0);
}
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task, unsigned n, unsigned index,
                             int flags) {
  (void)n, (void)index;
  if (ep == ompt_scope_begin) {
    task->value = new_id();
    add(EV_IMPL_BEGIN, task->value, val(par), flags);
  }
}
static void on_masked(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task, const void *ra) {
  (void)ra;
  add(ep == ompt_scope_begin ? EV_MASKED_BEGIN : EV_MASKED_END, val(task), val(par), 0);
}
static void on_cancel(ompt_data_t *task, int flags, const void *ra) {
  (void)ra;
  add(EV_CANCEL, val(task), 0, flags);
}

static void tool_callbacks(void) {
  SET(ompt_callback_thread_begin, ot_thread_begin);
  SET(ompt_callback_lock_init, on_lock_init);
  SET(ompt_callback_lock_destroy, on_lock_destroy);
  SET(ompt_callback_mutex_acquire, on_acquire);
  SET(ompt_callback_mutex_acquired, on_acquired);
  SET(ompt_callback_mutex_released, on_released);
  SET(ompt_callback_nest_lock, on_nest_lock);
  SET(ompt_callback_parallel_begin, on_parallel_begin);
  SET(ompt_callback_implicit_task, on_implicit_task);
  SET(ompt_callback_masked, on_masked);
  SET(ompt_callback_cancel, on_cancel);
}

/* Events of one kind on one wait id, in order; returns how many. */
static int count(int kind, uint64_t id, int mkind) {
  int c = 0;
  for (int i = 0; i < nevents; ++i)
    if (events[i].kind == kind && events[i].a == id && (mkind == 0 || events[i].flags == mkind)) ++c;
  return c;
}

/* On each thread, every acquired of `id` follows an acquire of it and alternates with releases of
 * it (threads interleave in the log: a release is told after the mutex is free, so another
 * thread's acquired may be logged first); `expected` acquisitions in all. */
static void check_pairs(uint64_t id, int mkind, int expected, const char *what) {
  int n = 0;
  for (int th = 1; th <= thread_count; ++th) {
    int held = 0, asked = 0;
    for (int i = 0; i < nevents; ++i) {
      const struct event *e = &events[i];
      if (e->a != id || e->thread != th) continue;
      if (e->kind == EV_ACQUIRE) {
        CHECK(!held, "%s: thread %d asks for it while holding it", what, th);
        asked = 1;
      } else if (e->kind == EV_ACQUIRED) {
        CHECK(asked && !held, "%s: thread %d acquired it without asking, or twice", what, th);
        CHECK(e->flags == mkind, "%s: acquired with kind %d, not %d", what, e->flags, mkind);
        held = 1, asked = 0, ++n;
      } else if (e->kind == EV_RELEASED) {
        CHECK(held, "%s: thread %d released it without holding it", what, th);
        held = 0;
      }
    }
    CHECK(!held, "%s: thread %d still holds it at the end", what, th);
  }
  CHECK(n == expected, "%s: %d acquisitions, expected %d", what, n, expected);
}

int main(int argc, char **argv) {
  /* "cancel": also the cancellation part (run with OMP_CANCELLATION=true; libomp 16 hangs in it at
   * 3 threads and more, so its reference run leaves it out) */
  const int with_cancel = argc > 1 && strcmp(argv[1], "cancel") == 0;
  omp_lock_t lock;
  omp_nest_lock_t nest;
  int sum = 0, sum_crit = 0;
  const int n = omp_get_max_threads() < 4 ? omp_get_max_threads() : 4;
  int team = 0;

  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
#pragma omp parallel num_threads(n) shared(sum, sum_crit, team)
  {
#pragma omp single
    team = omp_get_num_threads();
    for (int i = 0; i < ITER; ++i) {
      omp_set_lock(&lock);
      ++sum;
      omp_unset_lock(&lock);
#pragma omp critical(ompt_sync_crit)
      ++sum_crit;
    }
#pragma omp barrier
#pragma omp master
    { /* (after the barrier: no member holds the lock, so the test below takes it) */
      omp_set_nest_lock(&nest);
      omp_set_nest_lock(&nest); /* the owner again: nest_lock begin */
      omp_unset_nest_lock(&nest); /* kept: nest_lock end */
      omp_unset_nest_lock(&nest);
      if (omp_test_lock(&lock)) omp_unset_lock(&lock);
    }
  }
  CHECK(sum == ITER * team && sum_crit == ITER * team, "sums %d and %d, expected %d", sum, sum_crit, ITER * team);
  /* ordered */
  int order = 0;
#pragma omp parallel for ordered schedule(dynamic) num_threads(n)
  for (int i = 0; i < 30; ++i) {
#pragma omp ordered
    order = order * 7 % 1000003 + i;
  }
  int ref = 0;
  for (int i = 0; i < 30; ++i) ref = ref * 7 % 1000003 + i;
  CHECK(order == ref, "ordered: %d, expected %d", order, ref);
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);

  /* nested regions */
  omp_set_max_active_levels(2);
  uint64_t outer_par = 0;
  int nested_ok = 1;
#pragma omp parallel num_threads(2) shared(outer_par, nested_ok)
  {
    ompt_data_t *pd = NULL;
    int size = 0;
    CHECK(get_parallel_info(0, &pd, &size) == 2, "no parallel info at level 0");
#pragma omp single
    outer_par = pd->value;
#pragma omp parallel num_threads(2)
    {
      ompt_data_t *inner = NULL, *outer = NULL;
      int isize = 0; /* (each inner member's own) */
      CHECK(get_parallel_info(0, &inner, &isize) == 2 && get_parallel_info(1, &outer, &isize) == 2,
            "no parallel info at levels 0 and 1 in a nested region");
      if (outer->value != outer_par || inner->value == outer_par) __atomic_store_n(&nested_ok, 0, __ATOMIC_RELAXED);
    }
  }
  CHECK(nested_ok, "ompt_get_parallel_info(1) in a nested region is not the outer region");

  /* cancellation (OMP_CANCELLATION=true) */
  const int cancelling = with_cancel && omp_get_cancellation();
  if (with_cancel) {
#pragma omp parallel num_threads(n)
    {
      if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
      }
#pragma omp cancellation point parallel
    }
  }

  const int nev = __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
  for (int i = 0; i < nev; ++i)
    if (!__atomic_load_n(&events[i].ready, __ATOMIC_ACQUIRE)) events[i].kind = 0;
  nevents = nev;

  const uint64_t lid = (uint64_t)(uintptr_t)&lock, nid = (uint64_t)(uintptr_t)&nest;
  CHECK(count(EV_LOCK_INIT, lid, ompt_mutex_lock) == 1 && count(EV_LOCK_DESTROY, lid, ompt_mutex_lock) == 1,
        "lock_init/lock_destroy of the lock: %d/%d", count(EV_LOCK_INIT, lid, 0), count(EV_LOCK_DESTROY, lid, 0));
  CHECK(count(EV_LOCK_INIT, nid, ompt_mutex_nest_lock) == 1 && count(EV_LOCK_DESTROY, nid, ompt_mutex_nest_lock) == 1,
        "lock_init/lock_destroy of the nestable lock");
  /* the lock: ITER per member, and the master's test (which succeeds: nobody holds it then) */
  /* omp_test_lock's acquire: the standard's kind is ompt_mutex_test_lock (Plait); libomp 16 says
   * ompt_mutex_lock: one acquire more than the omp_set_lock calls, of either kind */
  CHECK(count(EV_ACQUIRE, lid, ompt_mutex_test_lock) <= 1 &&
            count(EV_ACQUIRE, lid, ompt_mutex_test_lock) + count(EV_ACQUIRE, lid, ompt_mutex_lock) == ITER * team + 1,
        "%d test_lock and %d lock acquires, expected %d in all", count(EV_ACQUIRE, lid, ompt_mutex_test_lock),
        count(EV_ACQUIRE, lid, ompt_mutex_lock), ITER * team + 1);
  {
    /* set_lock and test_lock acquisitions both pair with releases */
    int acq = count(EV_ACQUIRED, lid, 0), rel = count(EV_RELEASED, lid, 0);
    CHECK(acq == ITER * team + 1 && rel == acq, "the lock: %d acquired, %d released, expected %d", acq, rel, ITER * team + 1);
  }
  CHECK(count(EV_ACQUIRED, nid, ompt_mutex_nest_lock) == 1 && count(EV_RELEASED, nid, ompt_mutex_nest_lock) == 1,
        "the nestable lock: %d acquired, %d released", count(EV_ACQUIRED, nid, 0), count(EV_RELEASED, nid, 0));
  CHECK(count(EV_NEST_BEGIN, nid, 0) == 1 && count(EV_NEST_END, nid, 0) == 1, "nest_lock begin/end: %d/%d",
        count(EV_NEST_BEGIN, nid, 0), count(EV_NEST_END, nid, 0));
  /* critical: one wait id, ITER * team acquisitions in pairs */
  uint64_t crit = 0;
  for (int i = 0; i < nevents && crit == 0; ++i)
    if (events[i].kind == EV_ACQUIRED && events[i].flags == ompt_mutex_critical) crit = events[i].a;
  CHECK(crit != 0, "no critical acquisition");
  check_pairs(crit, ompt_mutex_critical, ITER * team, "critical");
  uint64_t ord = 0;
  for (int i = 0; i < nevents && ord == 0; ++i)
    if (events[i].kind == EV_ACQUIRED && events[i].flags == ompt_mutex_ordered) ord = events[i].a;
  CHECK(ord != 0, "no ordered acquisition");
  check_pairs(ord, ompt_mutex_ordered, 30, "ordered");
  /* nested: the inner regions' encountering tasks are outer implicit tasks */
  int inner_begins = 0;
  for (int i = 0; i < nevents; ++i) {
    if (events[i].kind != EV_PAR_BEGIN || events[i].a == outer_par) continue;
    for (int j = 0; j < nevents; ++j)
      if (events[j].kind == EV_IMPL_BEGIN && events[j].a == events[i].b && events[j].b == outer_par) ++inner_begins;
  }
  CHECK(inner_begins == 2, "%d inner regions begun by a member of the outer one, expected 2", inner_begins);
#ifdef __clang__
  /* masked (master): one begin/end pair on one thread */
  int mb = -1, me = -1;
  for (int i = 0; i < nevents; ++i) {
    if (events[i].kind == EV_MASKED_BEGIN) {
      CHECK(mb < 0, "two masked begins");
      mb = i;
    }
    if (events[i].kind == EV_MASKED_END) {
      CHECK(me < 0, "two masked ends");
      me = i;
    }
  }
  CHECK(mb >= 0 && me > mb && events[mb].thread == events[me].thread, "no masked begin/end pair on one thread");
#endif
  /* cancel */
  int activated = 0, detected = 0;
  for (int i = 0; i < nevents; ++i) {
    if (events[i].kind != EV_CANCEL) continue;
    CHECK((events[i].flags & ompt_cancel_parallel) != 0, "a cancel of another construct (flags 0x%x)", events[i].flags);
    if (events[i].flags & ompt_cancel_activated) ++activated;
    if (events[i].flags & ompt_cancel_detected) ++detected;
  }
  if (cancelling) {
    CHECK(activated == 1 && detected <= team - 1, "cancel: %d activated, %d detected", activated, detected);
  } else {
    CHECK(activated == 0 && detected == 0, "cancel events without OMP_CANCELLATION");
  }
  PASS();
}
