/* OMPT: a tool inside the program records the dependence edges between tasks (task_dependence)
 * and the events of detachable tasks, and the program checks them as OpenMP 5.1 (chapter 4 and
 * omp_fulfill_event) requires:
 *   - task_dependence(src, sink) names two created tasks, src created first, whose depend clauses
 *     conflict; with more than one thread, where the first task is held running until the others
 *     exist, the edges of out(x) -> in(x), in(x) -> inout(x) are exactly
 *     T1->T2, T1->T3, T2->T4, T3->T4 (the readers since the last write, not the write again);
 *   - a detachable task whose event is fulfilled inside its body: task_schedule(early_fulfill,
 *     next NULL) from the fulfil, then (complete) at the body's end;
 *   - one whose event is fulfilled after its body ended (by a thread of the program's, once the
 *     tool has seen the body end): (detach) at the body's end, then (late_fulfill, next NULL) from
 *     the fulfil, nothing after;
 *   - the device callbacks are never called: the host is no target device (Plait accepts them,
 *     set always; libomp 16 without its offload library refuses them, set never).
 * Built by clang (libomp is the reference) and by gcc (Plait only: libgomp has no OMPT).
 * Prints "PASS ompt_deps" (exit 0) or "FAIL ompt_deps: <what>" (exit 1). */
#define TEST_NAME "ompt_deps"
#include <pthread.h>
#include <sched.h>

#include "ompt_test.h"

#define MAXEV 1024
enum { EV_CREATE = 1, EV_EDGE, EV_SCHED };
struct event {
  int ready, kind, status;
  uint64_t a, b;
};
static struct event events[MAXEV];
static int nevents;
static int device_calls;

static void add(int kind, uint64_t a, uint64_t b, int status) {
  int i = __atomic_fetch_add(&nevents, 1, __ATOMIC_RELAXED);
  if (i >= MAXEV) CHECK(0, "more than %d events", MAXEV);
  events[i] = (struct event){0, kind, status, a, b};
  __atomic_store_n(&events[i].ready, 1, __ATOMIC_RELEASE);
}

static uint64_t late_task; /* the task whose fulfil must come late: its id, once created */
static int late_detached;  /* the tool saw its body end (status detach) */

static void on_task_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task, int flags, int deps,
                           const void *ra) {
  (void)enc, (void)frame, (void)flags, (void)deps, (void)ra;
  task->value = new_id();
  add(EV_CREATE, task->value, 0, 0);
}
static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
  add(EV_SCHED, val(prior), val(next), (int)status);
  if (status == ompt_task_detach && val(prior) == __atomic_load_n(&late_task, __ATOMIC_ACQUIRE))
    __atomic_store_n(&late_detached, 1, __ATOMIC_RELEASE);
}
static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) { add(EV_EDGE, val(src), val(sink), 0); }
static void on_device(void) { __atomic_fetch_add(&device_calls, 1, __ATOMIC_RELAXED); }

static void tool_callbacks(void) {
  SET(ompt_callback_task_create, on_task_create);
  SET(ompt_callback_task_schedule, on_task_schedule);
  SET(ompt_callback_task_dependence, on_task_dependence);
  /* the device callbacks: Plait accepts them (always: no target device exists, so none is due);
   * libomp 16 without its offload library refuses them (never) */
  const ompt_callbacks_t device_events[] = {ompt_callback_device_initialize, ompt_callback_device_finalize,
                                            ompt_callback_device_load, ompt_callback_device_unload};
  for (int i = 0; i < 4; ++i) {
    const int r = ot_set(device_events[i], (ompt_callback_t)on_device);
    CHECK(r == ompt_set_always || (!plait_runtime && r == ompt_set_never),
          "ompt_set_callback(device event %d) answered %d", (int)device_events[i], r);
  }
}

/* The late fulfiller: a thread of the program's, fulfils once the tool saw the body end. */
static omp_event_handle_t late_event;
static int late_published;
static void *late_fulfiller(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&late_published, __ATOMIC_ACQUIRE)) sched_yield();
  while (!__atomic_load_n(&late_detached, __ATOMIC_ACQUIRE)) sched_yield();
  omp_fulfill_event(late_event);
  return NULL;
}

static int index_of(int kind, uint64_t a, uint64_t b, int status, int from) {
  int nev = __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
  for (int i = from; i < nev; ++i)
    if (events[i].kind == kind && events[i].a == a && (b == (uint64_t)-1 || events[i].b == b) &&
        (status < 0 || events[i].status == status))
      return i;
  return -1;
}

/* A detachable task's statuses: `first`, then `second`, and no other status but switch; the
 * fulfil's (early_fulfill or late_fulfill, the first or the second) with no next task. */
static void check_detached(const char *name, uint64_t task, int first, int second, int fulfil_first) {
  const int a = index_of(EV_SCHED, task, (uint64_t)-1, first, 0);
  const int b = index_of(EV_SCHED, task, (uint64_t)-1, second, 0);
  CHECK(task != 0 && a >= 0 && b > a, "%s fulfil: status %d at event %d, status %d at %d", name, first, a, second, b);
  CHECK(events[fulfil_first ? a : b].b == 0, "%s fulfil: the fulfil's status told with a next task", name);
  const int nev = __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
  for (int i = 0; i < nev; ++i)
    CHECK(events[i].kind != EV_SCHED || events[i].a != task || events[i].status == first ||
              events[i].status == second || events[i].status == ompt_task_switch,
          "%s fulfil: status %d too", name, events[i].status);
}

int main(void) {
  int x = 0, release = 0, team = 0, held = 0;
  uint64_t t[4] = {0, 0, 0, 0}, early = 0, late = 0;
  pthread_t fulfiller;
  CHECK(pthread_create(&fulfiller, NULL, late_fulfiller, NULL) == 0, "pthread_create failed");
#pragma omp parallel
#pragma omp single
  {
    team = omp_get_num_threads();
    /* T1 out(x) is held running until T2..T4 exist (with one thread it may run at once: not held) */
#pragma omp task depend(out : x) shared(x, release, held, t)
    {
      t[0] = current_task();
      if (omp_get_num_threads() > 1) {
        int spins = 0;
        while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE) && ++spins < 2000000) sched_yield();
        held = __atomic_load_n(&release, __ATOMIC_ACQUIRE);
      }
      x = 1;
    }
#pragma omp task depend(in : x) shared(x, t)
    {
      t[1] = current_task();
      CHECK(x == 1, "T2 ran before T1");
    }
#pragma omp task depend(in : x) shared(x, t)
    {
      t[2] = current_task();
      CHECK(x == 1, "T3 ran before T1");
    }
#pragma omp task depend(inout : x) shared(x, t)
    {
      t[3] = current_task();
      x = 2;
    }
    __atomic_store_n(&release, 1, __ATOMIC_RELEASE);
#pragma omp taskwait
    CHECK(x == 2, "x is %d after the dependent tasks, not 2", x);

    /* detach, fulfilled inside the body: early */
    omp_event_handle_t ev;
#pragma omp task detach(ev) shared(early)
    {
      early = current_task();
      omp_fulfill_event(ev);
    }
#pragma omp taskwait
    /* detach, fulfilled by another thread after the body ended: late */
    omp_event_handle_t ev2;
#pragma omp task detach(ev2) shared(late)
    {
      late = current_task();
      __atomic_store_n(&late_task, late, __ATOMIC_RELEASE);
    }
    late_event = ev2;
    __atomic_store_n(&late_published, 1, __ATOMIC_RELEASE);
#pragma omp taskwait
  }
  CHECK(pthread_join(fulfiller, NULL) == 0, "pthread_join failed");
  const int nev = __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
  for (int i = 0; i < nev; ++i) CHECK(__atomic_load_n(&events[i].ready, __ATOMIC_ACQUIRE), "event %d not written", i);

  /* edges: between created tasks, in creation order, among T1..T4 as their clauses say */
  int edges = 0, seen = 0;
  for (int i = 0; i < nev; ++i) {
    if (events[i].kind != EV_EDGE) continue;
    ++edges;
    const int cs = index_of(EV_CREATE, events[i].a, (uint64_t)-1, -1, 0);
    const int ck = index_of(EV_CREATE, events[i].b, (uint64_t)-1, -1, 0);
    CHECK(cs >= 0 && ck >= 0 && cs < ck, "an edge %llu -> %llu between tasks not created in that order",
          (unsigned long long)events[i].a, (unsigned long long)events[i].b);
    int s = -1, k = -1;
    for (int j = 0; j < 4; ++j) {
      if (t[j] == events[i].a) s = j;
      if (t[j] == events[i].b) k = j;
    }
    CHECK(s >= 0 && k >= 0, "an edge outside T1..T4");
    const int allowed = (s == 0 && (k == 1 || k == 2)) || ((s == 1 || s == 2) && k == 3);
    CHECK(allowed, "an edge T%d -> T%d, which their clauses do not order directly", s + 1, k + 1);
    seen |= 1 << (s * 4 + k);
  }
  if (team > 1 && held) {
    const int want = (1 << 1) | (1 << 2) | (1 << 7) | (1 << 11);
    CHECK(seen == want && edges == 4, "with T1 held: %d edges (set %#x), expected T1->T2, T1->T3, T2->T4, T3->T4",
          edges, seen);
  } else {
    NOTE("%d threads, T1 %s: %d edges (only checked for order)", team, held ? "held" : "not held", edges);
  }

  /* early: early_fulfill from the body's fulfil, then complete at its end; late: detach at the
   * body's end, then late_fulfill */
  check_detached("early", early, ompt_task_early_fulfill, ompt_task_complete, 1);
  check_detached("late", late, ompt_task_detach, ompt_task_late_fulfill, 0);
  CHECK(device_calls == 0, "%d device callbacks on the host", device_calls);
  PASS();
}
