/* The error directive at execution time (OpenMP 5.1: GOMP_warning, GOMP_error) and
 * omp_display_env: a warning prints its message and the program goes on (from the primary thread
 * of a region and outside it); with the argument "fatal" a fatal one ends the program with
 * status 1 before the next statement (the message checked by omp.error_directive.* tests). */
#define TEST_NAME "error_directive"
#include "omp_test.h"
#include <omp.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    #pragma omp error at(execution) severity(fatal) message("stop here")
    CHECK(0, "ran on after a fatal error directive");
  }
  if (argc > 1 && strcmp(argv[1], "display") == 0) {
    omp_display_env(0);
    PASS();
  }
  int after = 0;
  #pragma omp parallel
  {
    #pragma omp masked
    {
      #pragma omp error at(execution) severity(warning) message("just a warning")
      after = 1;
    }
  }
  CHECK(after == 1, "the code after a warning did not run");
  #pragma omp error at(execution) severity(warning) message("outside the region")
  PASS();
}
