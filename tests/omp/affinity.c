/* Thread affinity display and pausing: omp_get/set_affinity_format, omp_capture_affinity (every
 * field, short and long names, widths and justification, truncation, the ICV when the format is
 * null or empty) checked against what the program computes itself, inside and outside a team;
 * omp_display_affinity's line on stderr; omp_pause_resource / omp_pause_resource_all (0 on the
 * host outside every region, -1 for another device or inside a region) with teams that still run
 * right after a pause.
 *
 * With the argument "display" (run with OMP_DISPLAY_AFFINITY=true and OMP_AFFINITY_FORMAT set to
 * "T%n/%N L%L"): the lines at region entry, on stderr: one per member at the first region, none
 * when a region of the same size follows, one per member when the size changes, and again after
 * a pause has ended the team threads. */
#define _GNU_SOURCE
#define TEST_NAME "affinity"
#include "omp_test.h"
#include <omp.h>
#include <pthread.h>
#include <sched.h>

static char captured[1 << 16];

/* Runs f with stderr going to a temporary file, and returns what it wrote. */
static const char *capture_stderr(void (*f)(void)) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  CHECK(tmp != NULL, "tmpfile failed");
  const int saved = dup(2);
  CHECK(saved >= 0 && dup2(fileno(tmp), 2) == 2, "redirecting stderr failed");
  f();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  const size_t n = fread(captured, 1, sizeof captured - 1, tmp);
  captured[n] = '\0';
  fclose(tmp);
  return captured;
}

static void cpus_of_thread(char *out, size_t size) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
  out[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    size_t len = strlen(out);
    if (e > c) snprintf(out + len, size - len, "%s%d-%d", len ? "," : "", c, e);
    else snprintf(out + len, size - len, "%s%d", len ? "," : "", c);
    c = e;
  }
}

/* What "%n/%N L%L a%a t%t T%T|%P|%i|%A|%H" expands to on the calling thread. */
static void expected_fields(char *out, size_t size) {
  char cpus[1024], host[256];
  cpus_of_thread(cpus, sizeof cpus);
  CHECK(gethostname(host, sizeof host) == 0, "gethostname failed");
  host[sizeof host - 1] = '\0';
  snprintf(out, size, "%d/%d L%d a%d t%d T%d|%ld|0x%lx|%s|%s", omp_get_thread_num(), omp_get_num_threads(),
           omp_get_level(), omp_get_ancestor_thread_num(omp_get_level() - 1), omp_get_team_num(),
           omp_get_num_teams(), (long)getpid(), (unsigned long)pthread_self(), cpus, host);
}

static const char *const all_short = "%n/%N L%L a%a t%t T%T|%P|%i|%A|%H";
static const char *const all_long =
    "%{thread_num}/%{num_threads} L%{nesting_level} a%{ancestor_tnum} t%{team_num} T%{num_teams}|"
    "%{process_id}|%{native_thread_id}|%{thread_affinity}|%{host}";

static void check_fields_here(int *bad) {
  char want[2048], got[2048];
  expected_fields(want, sizeof want);
  size_t n = omp_capture_affinity(got, sizeof got, all_short);
  if (n != strlen(want) || strcmp(got, want) != 0) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  n = omp_capture_affinity(got, sizeof got, all_long);
  if (n != strlen(want) || strcmp(got, want) != 0) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

static void display_two(void) {
  omp_display_affinity("first %n of %N");
  omp_display_affinity(NULL); /* the ICV, set to "icv L%L" below */
}

static int members_seen;

/* (Regions with a body: gcc drops an empty parallel region altogether.) */
static void regions_for_display(void) {
#pragma omp parallel num_threads(2)
  __atomic_fetch_add(&members_seen, 1, __ATOMIC_RELAXED);
#pragma omp parallel num_threads(2)
  __atomic_fetch_add(&members_seen, 1, __ATOMIC_RELAXED);
#pragma omp parallel num_threads(3)
  __atomic_fetch_add(&members_seen, 1, __ATOMIC_RELAXED);
  /* a pause ends the team threads: the next region's are new, and print again */
  CHECK(omp_pause_resource_all(omp_pause_hard) == 0, "a hard pause failed");
#pragma omp parallel num_threads(2)
  __atomic_fetch_add(&members_seen, 1, __ATOMIC_RELAXED);
}

static int count_lines(const char *s, const char *line) {
  int k = 0;
  const size_t len = strlen(line);
  for (const char *p = s; *p;) {
    const char *e = strchr(p, '\n');
    const size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == len && strncmp(p, line, len) == 0) ++k;
    p += l + (e ? 1 : 0);
  }
  return k;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "bad-format") == 0) {
    char b[64];
    omp_capture_affinity(b, sizeof b, "T%z");
    CHECK(0, "a malformed format was accepted: [%s]", b);
  }
  if (argc > 1 && strcmp(argv[1], "display") == 0) {
    const char *out = capture_stderr(regions_for_display);
    CHECK(members_seen == 9, "%d members ran the four regions (9 expected)", members_seen);
    CHECK(count_lines(out, "T0/2 L1") == 2 && count_lines(out, "T1/2 L1") == 2,
          "the first region and the one after the pause did not print one line per member: [%s]", out);
    CHECK(count_lines(out, "T0/3 L1") == 1 && count_lines(out, "T1/3 L1") == 1 && count_lines(out, "T2/3 L1") == 1,
          "a region of a new size did not print one line per member: [%s]", out);
    int lines = 0;
    for (const char *p = out; *p; ++p) lines += *p == '\n';
    CHECK(lines == 7, "%d lines at region entry (7 expected: 2, none for the same size, 3, 2 after the pause): [%s]",
          lines, out);
    PASS();
  }

  /* the ICV: libgomp's default, truncation, set and get */
  char buf[4096];
  const char *def = "level %L thread %i affinity %A";
  size_t n = omp_get_affinity_format(buf, sizeof buf);
  CHECK(n == strlen(def) && strcmp(buf, def) == 0, "default format [%s] (%zu)", buf, n);
  n = omp_get_affinity_format(buf, 4);
  CHECK(n == strlen(def) && strcmp(buf, "lev") == 0, "truncated format [%s] (%zu)", buf, n);
  CHECK(omp_get_affinity_format(NULL, 0) == strlen(def), "length with no buffer");

  /* every field, outside and inside teams */
  int bad = 0;
  check_fields_here(&bad);
  CHECK(bad == 0, "fields outside every region differ from the thread's own answers");
  for (int t = 1; t <= 3; ++t) {
#pragma omp parallel num_threads(t)
    {
      check_fields_here(&bad);
#pragma omp parallel num_threads(2)
      check_fields_here(&bad); /* nested (active or not) */
    }
  }
  CHECK(bad == 0, "%d field expansions inside teams differ from the threads' own answers", bad);

  /* widths and justification */
  n = omp_capture_affinity(buf, sizeof buf, "[%5n][%.5n][%0.5n][%3{thread_num}][%.3{num_threads}]");
  CHECK(strcmp(buf, "[0    ][    0][00000][0  ][  1]") == 0 && n == strlen(buf), "widths: [%s]", buf);
  n = omp_capture_affinity(buf, sizeof buf, "[%0.5a][%1n][%0.1n]100%%");
  CHECK(strcmp(buf, "[-0001][0][0]100%") == 0 && n == strlen(buf), "sign, small widths, %%%%: [%s]", buf);
  {
    char host[256], want[600];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(want, sizeof want, "[%*s]", 300, host);
    n = omp_capture_affinity(buf, sizeof buf, "[%0.300H]");
    CHECK(strcmp(buf, want) == 0, "a text field pads with spaces under 0.: [%.40s...]", buf);
    snprintf(want, sizeof want, "[0x%018lx]", (unsigned long)pthread_self());
    n = omp_capture_affinity(buf, sizeof buf, "[%0.20i]");
    CHECK(strcmp(buf, want) == 0, "%%0.20i: [%s], expected [%s]", buf, want);
  }

  /* truncation and sizes */
  n = omp_capture_affinity(buf, 3, "abcdef");
  CHECK(n == 6 && strcmp(buf, "ab") == 0, "truncated capture [%s] (%zu)", buf, n);
  CHECK(omp_capture_affinity(NULL, 0, "abcdef") == 6, "length with no buffer");
  buf[0] = 'x';
  CHECK(omp_capture_affinity(buf, 1, "abc") == 3 && buf[0] == '\0', "a one-byte buffer holds the terminator");

  /* a null or empty format takes the ICV */
  omp_set_affinity_format("icv L%L");
  n = omp_get_affinity_format(buf, sizeof buf);
  CHECK(strcmp(buf, "icv L%L") == 0 && n == 7, "format after set: [%s]", buf);
  n = omp_capture_affinity(buf, sizeof buf, NULL);
  CHECK(strcmp(buf, "icv L0") == 0 && n == 6, "capture with a null format: [%s]", buf);
  n = omp_capture_affinity(buf, sizeof buf, "");
  CHECK(strcmp(buf, "icv L0") == 0, "capture with an empty format: [%s]", buf);
#pragma omp parallel num_threads(2)
  {
    char b[64];
    omp_capture_affinity(b, sizeof b, NULL);
    if (strcmp(b, "icv L1") != 0) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
  }
  CHECK(bad == 0, "the ICV inside a team");

  /* omp_display_affinity: one line each, on stderr */
  const char *out = capture_stderr(display_two);
  CHECK(strcmp(out, "first 0 of 1\nicv L0\n") == 0, "omp_display_affinity wrote [%s]", out);

  /* pausing */
  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, "a soft pause of the host failed");
  long sum = 0;
#pragma omp parallel for num_threads(3) reduction(+ : sum)
  for (int i = 0; i < 1000; ++i) sum += i;
  CHECK(sum == 499500, "sum after a soft pause = %ld", sum);
  CHECK(omp_pause_resource_all(omp_pause_hard) == 0, "a hard pause failed");
  sum = 0;
#pragma omp parallel num_threads(3) reduction(+ : sum)
  {
#pragma omp single
    for (int i = 0; i < 100; ++i) {
#pragma omp task shared(sum)
      {
#pragma omp atomic
        sum += i;
      }
    }
  }
  CHECK(sum == 4950, "tasks after a hard pause: sum = %ld", sum);
  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device() + 5) == -1, "a pause of a device that is not there");
  int inside = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inside = omp_pause_resource_all(omp_pause_soft);
  }
  CHECK(inside == -1, "a pause inside a region returned %d", inside);
#pragma omp parallel num_threads(1)
  inside = omp_pause_resource_all(omp_pause_soft);
  CHECK(inside == -1, "a pause inside an inactive region returned %d", inside);
  PASS();
}
