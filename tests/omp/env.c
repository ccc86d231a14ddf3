/* Environment variables read back through the API. The harness sets the variables and passes what
 * they mean as arguments (KEY=VALUE), so that the program knows what to expect:
 *   nthreads=A[,B]       OMP_NUM_THREADS=A[,B]: omp_get_max_threads() is A outside, a region has A
 *                        threads, and inside it omp_get_max_threads() is B (the list's next level)
 *   dynamic=0|1          OMP_DYNAMIC=false|true: omp_get_dynamic(); a region still numbers its
 *                        threads 0..n-1 with 1 <= n <= the requested count
 *   max_active_levels=N  OMP_MAX_ACTIVE_LEVELS=N: omp_get_max_active_levels() (clamped to the
 *                        supported levels); with N = 1 a nested region is a team of one
 *   thread_limit=N       OMP_THREAD_LIMIT=N: omp_get_thread_limit(), and a region asking for more
 *                        threads gets at most N
 *   stacksize=BYTES      OMP_STACKSIZE: every thread of a team but the initial one has a stack of at
 *                        least BYTES (pthread_getattr_np) and can use most of it
 *   proc_bind=A[,B]      OMP_PROC_BIND=A[,B]: omp_get_proc_bind() is A outside and B inside */
#define _GNU_SOURCE
#define TEST_NAME "env"
#include "omp_test.h"
#include <omp.h>
#include <pthread.h>

static omp_proc_bind_t bind_of(const char *s) {
  if (!strcmp(s, "false")) return omp_proc_bind_false;
  if (!strcmp(s, "true")) return omp_proc_bind_true;
  if (!strcmp(s, "master") || !strcmp(s, "primary")) return omp_proc_bind_master;
  if (!strcmp(s, "close")) return omp_proc_bind_close;
  if (!strcmp(s, "spread")) return omp_proc_bind_spread;
  ot_fail("unknown proc_bind '%s' on the command line", s);
  return omp_proc_bind_false;
}

/* Uses about `bytes` of this thread's stack; returns a value that depends on all of it. */
static __attribute__((noinline)) long use_stack(size_t bytes) {
  volatile char buf[bytes];
  for (size_t i = 0; i < bytes; i += 4096) buf[i] = (char)(i >> 12);
  long s = 0;
  for (size_t i = 0; i < bytes; i += 4096) s += buf[i];
  return s;
}

static int team_numbers_ok(int request, int *size_out) {
  int seen[256], n = 0, bad = 0;
  memset(seen, 0, sizeof seen);
  #pragma omp parallel num_threads(request)
  {
    int me = omp_get_thread_num(), nt = omp_get_num_threads();
    if (me < 0 || me >= nt || nt > 256)
      AT_INC(&bad);
    else
      AT_INC(&seen[me]);
    #pragma omp single
    n = nt;
  }
  for (int i = 0; i < n; ++i)
    if (seen[i] != 1) ++bad;
  *size_out = n;
  return bad == 0 && n >= 1 && n <= request;
}

int main(int argc, char **argv) {
  CHECK(argc >= 2, "usage: env KEY=VALUE ...");
  for (int a = 1; a < argc; ++a) {
    char key[64];
    const char *eq = strchr(argv[a], '=');
    CHECK(eq != NULL && (size_t)(eq - argv[a]) < sizeof key, "bad argument '%s'", argv[a]);
    memcpy(key, argv[a], (size_t)(eq - argv[a]));
    key[eq - argv[a]] = 0;
    const char *val = eq + 1;

    if (!strcmp(key, "nthreads")) {
      int first = atoi(val);
      const char *comma = strchr(val, ',');
      int second = comma ? atoi(comma + 1) : -1;
      CHECK(omp_get_max_threads() == first, "OMP_NUM_THREADS=%s: omp_get_max_threads() = %d", getenv("OMP_NUM_THREADS"),
            omp_get_max_threads());
      int size = 0, inner_max = -1;
      #pragma omp parallel
      {
        #pragma omp single
        {
          size = omp_get_num_threads();
          inner_max = omp_get_max_threads();
        }
      }
      CHECK(size == first, "OMP_NUM_THREADS=%s: a region has %d threads", getenv("OMP_NUM_THREADS"), size);
      if (second > 0)
        CHECK(inner_max == second, "OMP_NUM_THREADS=%s: omp_get_max_threads() inside a region = %d, want %d",
              getenv("OMP_NUM_THREADS"), inner_max, second);
    } else if (!strcmp(key, "dynamic")) {
      int want = atoi(val);
      CHECK(omp_get_dynamic() == want, "OMP_DYNAMIC=%s: omp_get_dynamic() = %d", getenv("OMP_DYNAMIC"),
            omp_get_dynamic());
      int size;
      CHECK(team_numbers_ok(4, &size), "OMP_DYNAMIC=%s: a region asking for 4 threads had %d or misnumbered them",
            getenv("OMP_DYNAMIC"), size);
      if (!want) CHECK(size == 4, "OMP_DYNAMIC=false: a region asking for 4 threads had %d", size);
    } else if (!strcmp(key, "max_active_levels")) {
      int want = atoi(val), sup = omp_get_supported_active_levels();
      if (want > sup) want = sup;
      CHECK(omp_get_max_active_levels() == want, "OMP_MAX_ACTIVE_LEVELS=%s: omp_get_max_active_levels() = %d, want %d",
            getenv("OMP_MAX_ACTIVE_LEVELS"), omp_get_max_active_levels(), want);
      if (want == 1) {
        int inner = -1;
        #pragma omp parallel num_threads(2)
        #pragma omp parallel num_threads(2)
        #pragma omp single
        {
          /* both outer threads run an inner region: their singles write concurrently */
          AT_STORE(&inner, omp_get_num_threads());
        }
        CHECK(inner == 1, "OMP_MAX_ACTIVE_LEVELS=1: a nested region had %d threads", inner);
      }
    } else if (!strcmp(key, "thread_limit")) {
      int want = atoi(val);
      CHECK(omp_get_thread_limit() == want, "OMP_THREAD_LIMIT=%s: omp_get_thread_limit() = %d",
            getenv("OMP_THREAD_LIMIT"), omp_get_thread_limit());
      int size;
      CHECK(team_numbers_ok(8, &size) && size <= want, "OMP_THREAD_LIMIT=%s: a region asking for 8 had %d threads",
            getenv("OMP_THREAD_LIMIT"), size);
    } else if (!strcmp(key, "stacksize")) {
      size_t want = (size_t)strtoull(val, NULL, 10);
      int small = 0, checked = 0, attr_fail = 0;
      long used = 0;
      #pragma omp parallel num_threads(3)
      {
        if (omp_get_thread_num() != 0) {
          pthread_attr_t at;
          size_t sz = 0;
          if (pthread_getattr_np(pthread_self(), &at) == 0) {
            pthread_attr_getstacksize(&at, &sz);
            pthread_attr_destroy(&at);
            AT_INC(&checked);
            if (sz < want) AT_INC(&small);
          } else {
            AT_INC(&attr_fail);
          }
          if (omp_get_thread_num() == 1) used = use_stack(want - want / 4);
        }
      }
      CHECK(attr_fail == 0 && checked == 2, "pthread_getattr_np failed on %d team threads", attr_fail);
      CHECK(small == 0, "OMP_STACKSIZE=%s: %d team threads have a smaller stack", getenv("OMP_STACKSIZE"), small);
      (void)used;
    } else if (!strcmp(key, "proc_bind")) {
      char first[32];
      const char *comma = strchr(val, ',');
      size_t len = comma ? (size_t)(comma - val) : strlen(val);
      CHECK(len < sizeof first, "proc_bind value too long");
      memcpy(first, val, len);
      first[len] = 0;
      omp_proc_bind_t outer = bind_of(first);
      CHECK(omp_get_proc_bind() == outer, "OMP_PROC_BIND=%s: omp_get_proc_bind() = %d, want %d",
            getenv("OMP_PROC_BIND"), (int)omp_get_proc_bind(), (int)outer);
      if (comma) {
        omp_proc_bind_t inner = bind_of(comma + 1), got = omp_proc_bind_false;
        #pragma omp parallel num_threads(2)
        #pragma omp single
        got = omp_get_proc_bind();
        CHECK(got == inner, "OMP_PROC_BIND=%s: omp_get_proc_bind() inside a region = %d, want %d",
              getenv("OMP_PROC_BIND"), (int)got, (int)inner);
      }
    } else {
      ot_fail("unknown key '%s'", key);
    }
  }
  PASS();
}
