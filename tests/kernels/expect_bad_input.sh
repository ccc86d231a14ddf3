#!/bin/sh
# The bench protocol's contract for bad input, checked on one run of a benchmark binary:
#   expect_bad_input.sh [--garbage FILE] [--env NAME=VALUE]... PATTERN PROGRAM [ARGS...]
# Runs PROGRAM ARGS (with the --env settings) and passes when
#   - the exit status is 2 and nothing was written on stdout (no JSON line, nothing half-written);
#   - stderr is exactly one line, that line matches the extended regular expression PATTERN, is
#     at most 400 characters long and holds printable ASCII only (no bytes echoed from a binary
#     file, no control characters).
# --garbage FILE first writes FILE: every byte value but white space, twice (500 bytes: control
# characters, ESC, DEL, bytes >= 0x80, NUL last), in one "token", as a binary file looks to a parser.
set -u
garbage=""
while :; do
  case "${1-}" in
    --garbage) garbage=$2; shift 2 ;;
    --env) export "$2"; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: expect_bad_input.sh [--garbage FILE] [--env NAME=VALUE]... PATTERN PROGRAM [ARGS...]" >&2
  exit 64
fi
pattern=$1
shift

if [ -n "$garbage" ]; then
  : >"$garbage" || exit 1
  for round in 1 2; do
    i=1
    while [ $i -le 256 ]; do
      case $i in
        9 | 10 | 11 | 12 | 13 | 32) ;;
        *) printf "\\$(printf %o $((i % 256)))" >>"$garbage" ;;
      esac
      i=$((i + 1))
    done
  done
fi

out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
echo "exit status $rc; stderr:"
cat "$err"
fail() {
  echo "FAIL: $*"
  exit 1
}
[ $rc -eq 2 ] || fail "exit status $rc, expected 2"
[ -s "$out" ] && fail "stdout is not empty: $(head -c 200 "$out")"
lines=$(wc -l <"$err")
[ "$lines" -eq 1 ] || fail "stderr has $lines lines, expected exactly one"
LC_ALL=C grep -q '[^ -~]' "$err" && fail "stderr holds bytes that are not printable ASCII"
chars=$(LC_ALL=C wc -c <"$err")
[ "$chars" -le 401 ] || fail "stderr is $chars bytes long, expected at most 400 characters"
grep -Eq -- "$pattern" "$err" || fail "stderr does not match '$pattern'"
echo "ok"
