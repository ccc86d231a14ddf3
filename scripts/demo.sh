#!/usr/bin/env bash
# `make demo` after the benchmark builds: count instructions (valgrind), run the tour of the four
# studies (studies/tours/demo.toml; FULL=1: studies/tours/full.toml) under one progress bar, print
# the verdict table, write report/. Exit status: the tour's (0 clean, 1 some run failed, 2 bad input
# or missing binaries, 130 interrupted -- run `make demo` again to resume where it stopped).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH"
TOUR="${PLAIT_DEMO_TOUR:-demo}"
case "${FULL:-}" in
  ""|0) ;;
  1) TOUR=full ;;
  *) echo "demo: error: FULL=${FULL}: accepted values are 1 (the full-size studies) or 0/empty (the quick tour)" >&2; exit 2 ;;
esac
pb() { uv run --frozen --project python plait-bench "$@"; }
start=$(date +%s)

echo "=== plait-bench instr: instructions per SHA-1 op / per fib call (valgrind callgrind)"
if ! pb instr; then
  echo "demo: warning: instruction counts could not be measured; the report falls back to SHA-1 ops per task" >&2
fi

echo "=== plait-bench tour ${TOUR}"
pb tour "${TOUR}"
status=$?
if [ "$status" -eq 130 ]; then
  exit "$status"
fi
if [ "$status" -eq 0 ]; then
  echo "demo: done in $(( $(date +%s) - start )) s after the build; open report/index.md"
fi
exit "$status"
