/* Linked against libgomp first and libplait-omp second: the program's OpenMP calls bind to libgomp,
 * so libplait-omp must refuse to run in this process (one line, exit 2) before main starts. */
#include <omp.h>
#include <stdio.h>

int main(void) {
  int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  printf("FAIL mix_link: the program ran on two OpenMP runtimes without a word (%d threads)\n", n);
  return 1;
}
