/* OMPT: a tool inside the program (ompt_start_tool) records the callbacks of a parallel region with
 * tasks, nested tasks, an undeferred task, dependent tasks, taskwait, taskgroup and an explicit barrier, and the
 * program checks the sequence as the standard requires it (OpenMP 5.1, chapter 4):
 *   - thread_begin(initial) and the initial task's implicit_task begin come first;
 *   - one parallel_begin and one parallel_end with the same parallel data; one implicit_task begin
 *     and end per member, with distinct indices below the team size, in that parallel region;
 *   - every explicit task is created once (task_create, explicit flag; undeferred for if(0)), by the
 *     task that encounters it (its encountering data is the creator's), and then scheduled in once
 *     (task_schedule switch, next = its data) and out once (complete, prior = its data), on one
 *     thread, in that order; a child's creator is its parent task;
 *   - the taskwait, taskgroup and barrier regions come as sync_region begin/end pairs with their
 *     sync_region_wait pairs nested inside, told to the task that waits;
 *   - two dependent tasks: a dependences callback each, after its creation, with the variables and
 *     kinds of their depend clauses;
 *   - ompt_get_task_info(0) inside a task answers that task's data, ompt_get_parallel_info(0)
 *     the region and its size; ompt_get_thread_data is the thread_begin's data.
 * Built by clang (libomp is the reference) and by gcc (libgomp has no OMPT: only Plait runs it).
 * Prints "PASS ompt_tasks" (exit 0) or "FAIL ompt_tasks: <what>" (exit 1). */
#define TEST_NAME "ompt_tasks"
#include "ompt_test.h"

#define NTASKS 40
#define MAXEV 8192

enum { EV_THREAD_BEGIN = 1, EV_PAR_BEGIN, EV_PAR_END, EV_IMPL_BEGIN, EV_IMPL_END, EV_CREATE, EV_SWITCH, EV_COMPLETE,
       EV_SYNC_BEGIN, EV_SYNC_END, EV_WAIT_BEGIN, EV_WAIT_END, EV_DEPS };

struct event {
  int ready;       /* set (release) once the event is written: a scan skips events being written */
  int kind;
  int thread;      /* the thread's tool id (its thread data) */
  uint64_t a, b;   /* kind-specific: ids of tasks or regions */
  int flags, extra;
};

static struct event events[MAXEV];
static int nevents;
static int implicit_ends;       /* of the first region, counted after the event is written: see main */
static uint64_t first_region;   /* that region's parallel data */
#define MAXID 65536
static uint64_t region_of[MAXID]; /* an implicit task's region, by its id */

static void add(int kind, uint64_t a, uint64_t b, int flags, int extra) {
  int i = __atomic_fetch_add(&nevents, 1, __ATOMIC_RELAXED);
  if (i >= MAXEV) CHECK(0, "more than %d events", MAXEV);
  events[i] = (struct event){0, kind, my_thread(), a, b, flags, extra};
  __atomic_store_n(&events[i].ready, 1, __ATOMIC_RELEASE);
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data) {
  ot_thread_begin(type, data);
  add(EV_THREAD_BEGIN, (uint64_t)type, 0, 0, 0);
}
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par, unsigned requested,
                              int flags, const void *ra) {
  (void)frame, (void)ra;
  par->value = new_id();
  if (first_region == 0) first_region = par->value; /* (the initial thread, before any member runs) */
  add(EV_PAR_BEGIN, par->value, val(task), flags, (int)requested);
}
static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra) {
  (void)ra;
  add(EV_PAR_END, val(par), val(task), flags, 0);
}
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task, unsigned n, unsigned index,
                             int flags) {
  if (ep == ompt_scope_begin) {
    task->value = new_id();
    if (task->value < MAXID) __atomic_store_n(&region_of[task->value], val(par), __ATOMIC_RELAXED);
    add(EV_IMPL_BEGIN, task->value, val(par), flags, (int)(n * 1000 + index));
  } else {
    add(EV_IMPL_END, val(task), 0, flags, (int)index);
    const uint64_t id = val(task);
    if (id < MAXID && first_region != 0 && __atomic_load_n(&region_of[id], __ATOMIC_RELAXED) == first_region)
      __atomic_fetch_add(&implicit_ends, 1, __ATOMIC_RELEASE);
  }
}
static void on_task_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task, int flags, int deps,
                           const void *ra) {
  (void)frame, (void)ra, (void)deps;
  task->value = new_id();
  add(EV_CREATE, task->value, val(enc), flags, 0);
}
static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
  if (status == ompt_task_switch)
    add(EV_SWITCH, val(next), val(prior), 0, 0);
  else if (status == ompt_task_complete)
    add(EV_COMPLETE, val(prior), val(next), 0, 0);
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
                           const void *ra) {
  (void)ra;
  add(ep == ompt_scope_begin ? EV_SYNC_BEGIN : EV_SYNC_END, val(task), val(par), (int)kind, 0);
}
static void on_sync_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
                         const void *ra) {
  (void)ra;
  add(ep == ompt_scope_begin ? EV_WAIT_BEGIN : EV_WAIT_END, val(task), val(par), (int)kind, 0);
}

static int dx, dy; /* the dependent tasks' variables */
static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps) {
  /* a: the task; b: 1 if every variable is dx or dy; flags: how many; extra: the kinds, one digit each */
  int kinds = 0, ours = 1;
  for (int i = 0; i < ndeps; ++i) {
    kinds = kinds * 10 + (int)deps[i].dependence_type;
    if (deps[i].variable.ptr != (void *)&dx && deps[i].variable.ptr != (void *)&dy) ours = 0;
  }
  add(EV_DEPS, val(task), (uint64_t)ours, ndeps, kinds);
}

static void tool_callbacks(void) {
  SET(ompt_callback_thread_begin, on_thread_begin);
  SET(ompt_callback_parallel_begin, on_parallel_begin);
  SET(ompt_callback_parallel_end, on_parallel_end);
  SET(ompt_callback_implicit_task, on_implicit_task);
  SET(ompt_callback_task_create, on_task_create);
  SET(ompt_callback_task_schedule, on_task_schedule);
  SET(ompt_callback_sync_region, on_sync_region);
  SET(ompt_callback_sync_region_wait, on_sync_wait);
  SET(ompt_callback_dependences, on_dependences);
}

static uint64_t seen_in_task[NTASKS + 2];
static uint64_t seen_child[NTASKS];

int main(void) {
  const int n = omp_get_max_threads() < 4 ? omp_get_max_threads() : 4;
  int ran = 0;
  uint64_t single_task = 0;
  int team = 0;
  CHECK(nevents >= 1 && events[0].kind == EV_THREAD_BEGIN && events[0].a == ompt_thread_initial,
        "the first event is not thread_begin(initial)");
#pragma omp parallel num_threads(n)
  {
    ompt_data_t *pd = NULL;
    int size = 0;
    CHECK(get_parallel_info(0, &pd, &size) == 2 && size == omp_get_num_threads(),
          "ompt_get_parallel_info(0): size %d, the team has %d", size, omp_get_num_threads());
#pragma omp single
    {
      single_task = current_task();
      team = omp_get_num_threads();
      for (int i = 0; i < NTASKS; ++i) {
#pragma omp task firstprivate(i) shared(ran)
        {
          seen_in_task[i] = current_task();
          if (i % 4 == 0) {
#pragma omp task firstprivate(i)
            seen_child[i] = current_task();
#pragma omp taskwait
          }
          __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        }
      }
#pragma omp taskwait
#pragma omp task if (0) shared(ran)
      {
        seen_in_task[NTASKS] = current_task();
        __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
      }
#pragma omp taskgroup
      {
#pragma omp task shared(ran)
        {
          seen_in_task[NTASKS + 1] = current_task();
          __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        }
      }
#pragma omp task depend(out : dx) shared(dx)
      dx = 1;
#pragma omp task depend(in : dx) depend(inout : dy) shared(dx, dy)
      dy = dx + 1;
#pragma omp taskwait
    }
#pragma omp barrier
  }
  CHECK(ran == NTASKS + 2, "%d tasks ran, not %d", ran, NTASKS + 2);
  /* A worker's implicit task may end (and its callbacks run) after the primary has left the
   * region: libomp tells it when the worker starts its next region. A second region wakes the
   * workers; then wait until every member's end of the first is recorded (up to 10 s). Each member
   * records its barrier's events before its end. Events of the second region may still be being
   * written: the scans below skip events not ready and look at the first region only. */
#pragma omp parallel num_threads(n)
  {
  }
  for (int waited = 0; __atomic_load_n(&implicit_ends, __ATOMIC_ACQUIRE) < team; ++waited) {
    CHECK(waited < 10000, "%d of %d implicit tasks ended after 10 s", implicit_ends, team);
    usleep(1000);
  }
  int nev = __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
  for (int i = 0; i < nev; ++i)
    if (!__atomic_load_n(&events[i].ready, __ATOMIC_ACQUIRE)) events[i].kind = 0; /* being written: not ours */

  /* The parallel region. */
  int pb = -1, pe = -1;
  for (int i = 0; i < nev; ++i) {
    if (events[i].kind == EV_PAR_BEGIN && events[i].a == first_region) {
      CHECK(pb < 0, "two parallel_begin");
      pb = i;
    }
    if (events[i].kind == EV_PAR_END && events[i].a == first_region) {
      CHECK(pe < 0, "two parallel_end");
      pe = i;
    }
  }
  CHECK(pb >= 0 && pe > pb, "no parallel_begin/parallel_end pair");
  const uint64_t par = events[pb].a;
  CHECK(events[pe].a == par, "parallel_end's data is not parallel_begin's");
  CHECK(events[pb].extra == n, "parallel_begin asked for %d threads, not %d", events[pb].extra, n);
  CHECK(events[pb].b == events[pe].b && events[pb].b != 0, "parallel_begin/end: the encountering task differs or is unknown");

  /* Implicit tasks: one begin and one end per member, inside the region. */
  int begins = 0, ends = 0, index_seen = 0;
  uint64_t implicit_of_single = 0;
  for (int i = 0; i < nev; ++i) {
    const struct event *e = &events[i];
    if (e->kind == EV_IMPL_BEGIN && e->b == par) {
      ++begins;
      const int size = e->extra / 1000, index = e->extra % 1000;
      CHECK(size == team && index < team && !(index_seen & (1 << index)), "implicit task %d of %d (twice, or out of range)",
            index, size);
      CHECK((e->flags & ompt_task_implicit) != 0, "an implicit task without the implicit flag");
      index_seen |= 1 << index;
      if (e->a == single_task) implicit_of_single = e->a;
    }
    if (e->kind == EV_IMPL_END) {
      for (int j = 0; j < i; ++j)
        if (events[j].kind == EV_IMPL_BEGIN && events[j].a == e->a && events[j].b == par) ++ends;
    }
  }
  CHECK(begins == team && ends == team, "%d implicit task begins and %d ends for a team of %d", begins, ends, team);
  CHECK(implicit_of_single != 0, "ompt_get_task_info(0) in single is not a member's implicit task");

  /* Explicit tasks: created once, scheduled in and out once each, in order, on one thread. */
  int created = 0;
  for (int i = 0; i < nev; ++i) {
    const struct event *c = &events[i];
    if (c->kind != EV_CREATE) continue;
    ++created;
    CHECK((c->flags & ompt_task_explicit) != 0, "task_create without the explicit flag");
    int sw = -1, co = -1, nsw = 0, nco = 0;
    for (int j = 0; j < nev; ++j) {
      if (events[j].kind == EV_SWITCH && events[j].a == c->a) sw = j, ++nsw;
      if (events[j].kind == EV_COMPLETE && events[j].a == c->a) co = j, ++nco;
    }
    CHECK(nsw == 1 && nco == 1, "task %llu: %d switches in, %d completions", (unsigned long long)c->a, nsw, nco);
    CHECK(i < sw && sw < co, "task %llu: created, started and completed out of order", (unsigned long long)c->a);
    CHECK(events[sw].thread == events[co].thread, "task %llu started and completed on two threads", (unsigned long long)c->a);
  }
  CHECK(created == NTASKS + NTASKS / 4 + 4, "%d task_create, expected %d", created, NTASKS + NTASKS / 4 + 4);
  /* dependences: the two dependent tasks, after their creation; out is told as out or inout (gcc's
   * and clang's calls into the runtime merge the two) */
  CHECK(dy == 2, "the dependent tasks computed %d, not 2", dy);
  int ndeps = 0;
  for (int i = 0; i < nev; ++i) {
    const struct event *e = &events[i];
    if (e->kind != EV_DEPS) continue;
    ++ndeps;
    CHECK(e->b == 1, "a dependence on a variable that is neither dx nor dy");
    int made = 0;
    for (int j = 0; j < i; ++j)
      if (events[j].kind == EV_CREATE && events[j].a == e->a) made = 1;
    CHECK(made, "dependences told before (or without) the task's creation");
    if (e->flags == 1) CHECK(e->extra == 2 || e->extra == 3, "depend(out: dx) told as kind %d", e->extra);
    else CHECK(e->flags == 2 && (e->extra == 13 || e->extra == 31), "depend(in: dx) depend(inout: dy) told as %d kinds %d",
               e->flags, e->extra);
  }
  CHECK(ndeps == 2, "%d dependences callbacks, expected 2", ndeps);
  for (int i = 0; i < NTASKS + 2; ++i) {
    int found = 0;
    for (int j = 0; j < nev; ++j)
      if (events[j].kind == EV_CREATE && events[j].a == seen_in_task[i]) {
        found = 1;
        CHECK(events[j].b == single_task, "task %d: created by %llu, not by the single's task %llu", i,
              (unsigned long long)events[j].b, (unsigned long long)single_task);
        /* (a runtime may run any task of a team of one undeferred, and say so: libomp does) */
        CHECK(i != NTASKS || (events[j].flags & ompt_task_undeferred) != 0, "the if(0) task is not undeferred");
      }
    CHECK(found, "ompt_get_task_info(0) in task %d answered no created task", i);
  }
  for (int i = 0; i < NTASKS; i += 4) {
    int found = 0;
    for (int j = 0; j < nev; ++j)
      if (events[j].kind == EV_CREATE && events[j].a == seen_child[i]) {
        found = 1;
        CHECK(events[j].b == seen_in_task[i], "the child of task %d was created by another task", i);
      }
    CHECK(found, "ompt_get_task_info(0) in the child of task %d answered no created task", i);
  }

  /* Sync regions: balanced per thread, the wait inside the region, kinds seen. */
  int kinds = 0;
  for (int i = 0; i < nev; ++i) {
    const struct event *e = &events[i];
    if (e->kind != EV_SYNC_BEGIN || e->b != par) continue;
    int wb = -1, we = -1, end = -1;
    for (int j = i + 1; j < nev && end < 0; ++j) {
      const struct event *f = &events[j];
      if (f->thread != e->thread || f->flags != e->flags || f->a != e->a) continue;
      if (f->kind == EV_WAIT_BEGIN && wb < 0) wb = j;
      else if (f->kind == EV_WAIT_END && wb >= 0 && we < 0) we = j;
      else if (f->kind == EV_SYNC_END) end = j;
    }
    CHECK(end > 0 && wb > i && we > wb && end > we, "sync region of kind %d: no begin, wait, wait end, end in order",
          e->flags);
    if (e->flags == ompt_sync_region_taskwait) kinds |= 1;
    if (e->flags == ompt_sync_region_taskgroup) kinds |= 2;
    if (e->flags == ompt_sync_region_barrier_explicit) kinds |= 4;
    if (e->flags == ompt_sync_region_taskwait && e->a == single_task) kinds |= 8;
  }
  CHECK(kinds == 15, "sync regions seen: taskwait %d, taskgroup %d, explicit barrier %d, single's taskwait %d",
        kinds & 1, (kinds >> 1) & 1, (kinds >> 2) & 1, (kinds >> 3) & 1);
  PASS();
}
