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
#include <omp-tools.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "omp_test.h"

#define MAXEV 1024
enum { EV_CREATE = 1, EV_EDGE, EV_SCHED };
struct event {
  int ready, kind, status;
  uint64_t a, b;
};
static struct event events[MAXEV];
static int nevents;
static uint64_t next_id = 1;
static int device_calls;
static int plait_runtime; /* the runtime's name starts with "Plait" */
static ompt_get_task_info_t get_task_info;

static void add(int kind, uint64_t a, uint64_t b, int status) {
  int i = __atomic_fetch_add(&nevents, 1, __ATOMIC_RELAXED);
  if (i >= MAXEV) CHECK(0, "more than %d events", MAXEV);
  events[i] = (struct event){0, kind, status, a, b};
  __atomic_store_n(&events[i].ready, 1, __ATOMIC_RELEASE);
}
static uint64_t val(ompt_data_t *d) { return d == NULL ? 0 : d->value; }

static uint64_t late_task; /* the task whose fulfil must come late: its id, once created */
static int late_detached;  /* the tool saw its body end (status detach) */

static void on_task_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task, int flags, int deps,
                           const void *ra) {
  (void)enc, (void)frame, (void)flags, (void)deps, (void)ra;
  task->value = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  add(EV_CREATE, task->value, 0, 0);
}
static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
  add(EV_SCHED, val(prior), val(next), (int)status);
  if (status == ompt_task_detach && val(prior) == __atomic_load_n(&late_task, __ATOMIC_ACQUIRE))
    __atomic_store_n(&late_detached, 1, __ATOMIC_RELEASE);
}
static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) { add(EV_EDGE, val(src), val(sink), 0); }
static void on_device(void) { __atomic_fetch_add(&device_calls, 1, __ATOMIC_RELAXED); }

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool) {
  (void)device, (void)tool;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
  if (set == NULL || get_task_info == NULL) return 0;
#define SET(e, f) CHECK(set(e, (ompt_callback_t)(f)) == ompt_set_always, "ompt_set_callback(" #e ") is not always")
  SET(ompt_callback_task_create, on_task_create);
  SET(ompt_callback_task_schedule, on_task_schedule);
  SET(ompt_callback_task_dependence, on_task_dependence);
  /* the device callbacks: Plait accepts them (always: no target device exists, so none is due);
   * libomp 16 without its offload library refuses them (never) */
  const ompt_callbacks_t device_events[] = {ompt_callback_device_initialize, ompt_callback_device_finalize,
                                            ompt_callback_device_load, ompt_callback_device_unload};
  for (int i = 0; i < 4; ++i) {
    const int r = set(device_events[i], (ompt_callback_t)on_device);
    CHECK(r == ompt_set_always || (!plait_runtime && r == ompt_set_never),
          "ompt_set_callback(device event %d) answered %d", (int)device_events[i], r);
  }
  return 1;
}
static void finalize(ompt_data_t *tool) { (void)tool; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
  (void)version;
  plait_runtime = runtime != NULL && strncmp(runtime, "Plait", 5) == 0;
  static ompt_start_tool_result_t r = {&initialize, &finalize, {0}};
  return &r;
}

static uint64_t current_task(void) {
  ompt_data_t *d = NULL;
  int flags = 0;
  CHECK(get_task_info(0, &flags, &d, NULL, NULL, NULL) == 2, "ompt_get_task_info(0) found no task");
  return val(d);
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

  /* early fulfil: early_fulfill (next NULL) from the body, then complete at its end */
  const int e_sw = index_of(EV_SCHED, early, (uint64_t)-1, ompt_task_early_fulfill, 0);
  const int e_co = index_of(EV_SCHED, early, (uint64_t)-1, ompt_task_complete, 0);
  CHECK(early != 0 && e_sw >= 0 && e_co > e_sw, "early fulfil: early_fulfill at %d, complete at %d", e_sw, e_co);
  CHECK(events[e_sw].b == 0, "early_fulfill told with a next task");
  CHECK(index_of(EV_SCHED, early, (uint64_t)-1, ompt_task_detach, 0) < 0 &&
            index_of(EV_SCHED, early, (uint64_t)-1, ompt_task_late_fulfill, 0) < 0,
        "early fulfil: a detach or late_fulfill status too");
  /* late fulfil: detach at the body's end, then late_fulfill (next NULL), nothing after */
  const int l_de = index_of(EV_SCHED, late, (uint64_t)-1, ompt_task_detach, 0);
  const int l_la = index_of(EV_SCHED, late, (uint64_t)-1, ompt_task_late_fulfill, 0);
  CHECK(late != 0 && l_de >= 0 && l_la > l_de, "late fulfil: detach at %d, late_fulfill at %d", l_de, l_la);
  CHECK(events[l_la].b == 0, "late_fulfill told with a next task");
  CHECK(index_of(EV_SCHED, late, (uint64_t)-1, ompt_task_complete, 0) < 0 &&
            index_of(EV_SCHED, late, (uint64_t)-1, ompt_task_early_fulfill, 0) < 0,
        "late fulfil: a complete or early_fulfill status too");
  CHECK(device_calls == 0, "%d device callbacks on the host", device_calls);
  PASS();
}
