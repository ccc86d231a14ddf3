#!/bin/sh
# run_on_plait_omp.sh LIBPLAIT_OMP PROGRAM ARGS...: runs a gcc-built OpenMP benchmark unchanged on
# Plait's OpenMP runtime (LD_PRELOAD). Passes when the program verifies (exit 0) and the library
# announced itself on stderr (a run that silently fell back to libgomp fails); otherwise exits
# with the program's status (2 = bad input or missing data, which ctest may report as a skip) or 1.
lib="$1"
prog="$2"
shift 2
err=$(LD_PRELOAD="$lib" PLAIT_OMP_ANNOUNCE=1 "$prog" --quiet "$@" 2>&1 >/dev/null)
rc=$?
printf '%s\n' "$err"
if [ "$rc" -ne 0 ]; then
  echo "run_on_plait_omp: $prog exited with status $rc"
  exit "$rc"
fi
if ! printf '%s\n' "$err" | grep -q 'plait-omp: OpenMP runtime: Plait'; then
  echo "run_on_plait_omp: libplait-omp did not announce itself: the program did not run on Plait"
  exit 1
fi
exit 0
