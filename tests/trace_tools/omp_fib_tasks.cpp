// Test program for the OMPT tool: fib(n) with an OpenMP task for each of the two recursive calls
// (2 * (fib(n+1) - 1) explicit tasks). Verifies its result: exit 0 ok, 1 wrong, 2 bad input.
#include <cstdio>
#include <cstdlib>

namespace {

long fib_tasks(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib_tasks(n - 1);
#pragma omp task shared(b) firstprivate(n)
  b = fib_tasks(n - 2);
#pragma omp taskwait
  return a + b;
}

long fib_serial(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    long c = a + b;
    a = b;
    b = c;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 15;
  if (n < 0 || n > 30) {
    std::fprintf(stderr, "omp_fib_tasks: n=%d out of range (accepted: 0..30)\n", n);
    return 2;
  }
  long r = 0;
#pragma omp parallel
#pragma omp single
  r = fib_tasks(n);
  long want = fib_serial(n);
  std::printf("fib(%d) = %ld, tasks = %ld\n", n, r, n >= 2 ? 2 * (fib_serial(n + 1) - 1) : 0L);
  return r == want ? 0 : 1;
}
