#!/usr/bin/env bash
# `make demo` after `make build`: count instructions (valgrind), run the quick study, print its
# summary, write report/. Exit status: the study's (0 clean, 1 some run failed, 2 bad input or
# missing binaries, 130 interrupted -- run again to resume).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH"
STUDY="${PLAIT_DEMO_STUDY:-quick}"
pb() { uv run --frozen --project python plait-bench "$@"; }

echo "=== plait-bench instr: instructions per SHA-1 op / per fib call (valgrind callgrind)"
if ! pb instr; then
  echo "demo: warning: instruction counts could not be measured; the report falls back to SHA-1 ops per task" >&2
fi

echo "=== plait-bench run ${STUDY}"
pb run "${STUDY}"
status=$?
if [ "$status" -eq 130 ]; then
  exit "$status"
fi

echo "=== plait-bench report"
report_ok=1
if ! pb report --study "${STUDY}"; then
  echo "demo: error: the report could not be written" >&2
  report_ok=0
  [ "$status" -eq 0 ] && status=1
fi
if [ "$status" -ne 0 ]; then
  echo -n "demo: the study did not complete cleanly (exit status $status)" >&2
  [ "$report_ok" -eq 1 ] && echo "; report/index.md lists the failed runs" >&2 || echo >&2
else
  echo "demo: done; open report/index.md"
fi
exit "$status"
