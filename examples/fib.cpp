// Fibonacci with one task per call: the smallest fork-join program.
//   ./example_fib 30        (PLAIT_NUM_THREADS picks the worker count)
#include <plait/plait.hpp>

#include <cstdio>
#include <cstdlib>

static long fib(int n) {
  if (n < 2) return n;
  auto a = plait::spawn([n] { return fib(n - 1); });  // may run on another worker
  long b = fib(n - 2);                                // meanwhile, here
  return a.join() + b;                                // joins are LIFO
}

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 30;
  if (n < 0 || n > 60) {
    std::fprintf(stderr, "example_fib: n must be in 0..60\n");
    return 2;
  }
  long r = plait::run([n] { return fib(n); });
  std::printf("fib(%d) = %ld on %u workers\n", n, r, plait::default_pool().num_workers());
  return 0;
}
