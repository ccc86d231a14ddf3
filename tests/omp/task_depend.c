/* depend(in/out/inout) among sibling tasks. A fixed pseudo-random program of tasks with one to three
 * dependences on a few variables, each task made from one of several clause shapes with its
 * variables chosen at run time. Checked exactly: every reader sees the value of the last writer
 * created before it, every writer sees that value before overwriting it, and for every conflicting
 * pair (same variable, not both in) the earlier-created task ended before the later one started
 * (start/end stamps from one global clock). Also a long inout chain with plain increments, several
 * readers of one writer that are not ordered among themselves (proved with a detached reader that
 * another reader fulfils), and tasks with dependences created by every thread on private data. */
#define TEST_NAME "task_depend"
#include "omp_test.h"
#include <omp.h>

#define NV 6
#define NTASK 400

typedef struct {
  int nvars;
  int var[3];
  int writes[3];     /* 1 = out/inout, 0 = in */
  int want[3];       /* the value the task must find in each variable (id of the last writer, or -1) */
  int start, end;    /* clock stamps */
  int bad;
} task_rec;

static task_rec rec[NTASK];
static int vals[NV];
static int clock_;

static unsigned rng = 12345u;
static unsigned next_rand(void) {
  rng = rng * 1103515245u + 12345u;
  return (rng >> 16) & 0x7fffu;
}

static void body(int id) {
  task_rec *t = &rec[id];
  t->start = AT_INC(&clock_);
  for (int k = 0; k < t->nvars; ++k)
    if (AT_LOAD(&vals[t->var[k]]) != t->want[k]) t->bad = 1;
  ot_spin_work((int)(id % 7) * 40);
  for (int k = 0; k < t->nvars; ++k)
    if (t->writes[k]) AT_STORE(&vals[t->var[k]], id);
  t->end = AT_INC(&clock_);
}

int main(void) {
  /* plan: shapes and variables; the expected values follow from creation order */
  int last_writer[NV];
  for (int v = 0; v < NV; ++v) {
    last_writer[v] = -1;
    vals[v] = -1;
  }
  int shape[NTASK];
  for (int id = 0; id < NTASK; ++id) {
    task_rec *t = &rec[id];
    shape[id] = (int)(next_rand() % 6);
    static const int nv_of[6] = {1, 1, 1, 2, 3, 2};
    static const int w_of[6][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
    t->nvars = nv_of[shape[id]];
    for (int k = 0; k < t->nvars; ++k) {
      int v, again;
      do {
        v = (int)(next_rand() % NV);
        again = 0;
        for (int j = 0; j < k; ++j) again |= t->var[j] == v;
      } while (again);
      t->var[k] = v;
      t->writes[k] = w_of[shape[id]][k];
      t->want[k] = last_writer[v];
    }
    for (int k = 0; k < t->nvars; ++k)
      if (t->writes[k]) last_writer[t->var[k]] = id;
  }

  #pragma omp parallel
  #pragma omp single
  {
    for (int id = 0; id < NTASK; ++id) {
      task_rec *t = &rec[id];
      int *p = &vals[t->var[0]];
      int *q = t->nvars > 1 ? &vals[t->var[1]] : p;
      int *r = t->nvars > 2 ? &vals[t->var[2]] : p;
      (void)q; /* used only in depend clauses, which gcc does not count as uses */
      (void)r;
      switch (shape[id]) {
        case 0:
          #pragma omp task depend(out: p[0]) firstprivate(id)
          body(id);
          break;
        case 1:
          #pragma omp task depend(in: p[0]) firstprivate(id)
          body(id);
          break;
        case 2:
          #pragma omp task depend(inout: p[0]) firstprivate(id)
          body(id);
          break;
        case 3:
          #pragma omp task depend(in: p[0]) depend(out: q[0]) firstprivate(id)
          body(id);
          break;
        case 4:
          #pragma omp task depend(in: p[0], q[0]) depend(inout: r[0]) firstprivate(id)
          body(id);
          break;
        default:
          #pragma omp task depend(in: p[0]) depend(in: q[0]) firstprivate(id)
          body(id);
          break;
      }
    }
  }
  for (int id = 0; id < NTASK; ++id) {
    CHECK(rec[id].end > 0, "task %d never ran", id);
    CHECK(!rec[id].bad, "task %d (shape %d) saw a value other than its last writer's", id, shape[id]);
  }
  for (int b = 0; b < NTASK; ++b)
    for (int a = 0; a < b; ++a)
      for (int i = 0; i < rec[a].nvars; ++i)
        for (int j = 0; j < rec[b].nvars; ++j)
          if (rec[a].var[i] == rec[b].var[j] && (rec[a].writes[i] || rec[b].writes[j]))
            CHECK(rec[a].end < rec[b].start, "tasks %d and %d conflict on variable %d but overlapped or ran out of "
                  "order (stamps %d-%d, %d-%d)", a, b, rec[a].var[i], rec[a].start, rec[a].end, rec[b].start,
                  rec[b].end);

  /* a long inout chain: plain read-modify-write, exact only if serialised in order */
  long chain = 0;
  int chain_bad = 0;
  #pragma omp parallel
  #pragma omp single
  {
    for (int k = 0; k < 2000; ++k) {
      #pragma omp task depend(inout: chain) shared(chain, chain_bad) firstprivate(k)
      {
        if (chain != k) chain_bad = 1;
        chain = chain + 1;
      }
    }
  }
  CHECK(chain == 2000 && !chain_bad, "inout chain of 2000: %ld, out of order %d", chain, chain_bad);

  /* readers of one writer are not ordered among themselves: reader 1 is detached and only
   * reader 2 fulfils it, so a runtime that ordered reader 2 after reader 1 would never finish */
  int x = 0, r1 = -1, r2 = -1, after = -1;
  #pragma omp parallel
  #pragma omp single
  {
    omp_event_handle_t ev;
    #pragma omp task depend(out: x) shared(x)
    x = 42;
    #pragma omp task depend(in: x) detach(ev) shared(x, r1)
    r1 = x;
    #pragma omp task depend(in: x) shared(x, r2) firstprivate(ev)
    {
      r2 = x;
      omp_fulfill_event(ev);
    }
    #pragma omp task depend(out: x) shared(x, after, r1, r2)
    {
      after = r1 + r2;
      x = 0;
    }
    #pragma omp taskwait
  }
  CHECK(r1 == 42 && r2 == 42 && after == 84, "readers of one writer: %d %d, then the next writer saw %d", r1, r2,
        after);

  /* every thread: chains on its own private variable, interleaved with other threads' */
  int bad = 0;
  #pragma omp parallel
  {
    int mine = 0;
    for (int k = 0; k < 100; ++k) {
      #pragma omp task depend(inout: mine) shared(mine, bad) firstprivate(k)
      {
        if (mine != k) AT_INC(&bad);
        mine = k + 1;
      }
    }
    #pragma omp taskwait
    if (mine != 100) AT_INC(&bad);
  }
  CHECK(bad == 0, "per-thread chains: %d wrong", bad);
  PASS();
}
