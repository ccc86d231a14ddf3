#include <stdio.h>
#include <stdlib.h>
static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 25; long r = 0;
#pragma omp parallel
#pragma omp single
  r = fib(n);
  printf("fib(%d) = %ld\n", n, r);
  return 0;
}
