#!/usr/bin/env bash
# Big UTS trees (not part of ctest): runs each tree on each runtime and prints them side by side
# with time, nodes/s, speedup and parallel efficiency against the serial build, moved tasks per
# thread per second, and Plait's speed relative to every other runtime.
#
#   bench/uts/run-big.sh                       # T3L, 2 threads, serial plait gomp libomp tbb
#   bench/uts/run-big.sh -t "T1L T2L T3L" -n 4 -r 3 -g 1
#   bench/uts/run-big.sh -R "serial plait plait-group gomp"
#
# Options: -t trees, -n threads, -r measured repetitions (median reported), -g granularity,
#          -R runtimes (serial plait plait-group gomp libomp tbb).
# Binaries: build/gcc-release/bin (everything but libomp) and build/clang-release/bin (libomp);
# override with UTS_GCC_BIN / UTS_CLANG_BIN. The JSON lines are kept in
# ${UTS_OUT:-results/uts}/big-<time>.jsonl. Exit status: 1 if any run failed or did not verify.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
gcc_bin=${UTS_GCC_BIN:-$root/build/gcc-release/bin}
clang_bin=${UTS_CLANG_BIN:-$root/build/clang-release/bin}
trees="T3L"
threads=2
reps=1
gran=1
runtimes="serial plait gomp libomp tbb"

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while getopts "t:n:r:g:R:h" opt; do
  case $opt in
    t) trees=$OPTARG ;;
    n) threads=$OPTARG ;;
    r) reps=$OPTARG ;;
    g) gran=$OPTARG ;;
    R) runtimes=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

out_dir=${UTS_OUT:-$root/results/uts}
mkdir -p "$out_dir"
out=$out_dir/big-$(date +%Y%m%d-%H%M%S).jsonl
: >"$out"
failed=0

for tree in $trees; do
  for rt in $runtimes; do
    extra=()
    case $rt in
      libomp) bin=$clang_bin/uts-libomp ;;
      plait-group) bin=$gcc_bin/uts-plait; extra=(--variant group) ;;
      *) bin=$gcc_bin/uts-$rt ;;
    esac
    n=$threads
    [[ $rt == serial ]] && n=1
    if [[ ! -x $bin ]]; then
      echo "run-big: skipping $rt: no $bin (build it first: make build)" >&2
      continue
    fi
    echo "run-big: $tree on $rt, $n thread(s), g=$gran, $reps rep(s) ..." >&2
    if ! "$bin" --tree "$tree" -g "$gran" --threads "$n" --reps "$reps" --quiet "${extra[@]}" \
        | sed "s/^{/{\"label\":\"$rt\",/" >>"$out"; then
      echo "run-big: $tree on $rt FAILED" >&2
      failed=1
    fi
  done
done

echo "run-big: JSON lines in $out" >&2
python3 - "$out" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs.setdefault((d["params"]["tree"], d["label"]), []).append(d)
trees = []
for (t, _) in runs:
    if t not in trees:
        trees.append(t)
for t in trees:
    rows = {lab: rs for (tt, lab), rs in runs.items() if tt == t}
    med = {lab: statistics.median(r["time_s"] for r in rs) for lab, rs in rows.items()}
    ser = med.get("serial")
    print(f"\n{t}: {rows[next(iter(rows))][0]['stats']['tree_params']}  "
          f"nodes {rows[next(iter(rows))][0]['stats']['nodes']}, depth {rows[next(iter(rows))][0]['stats']['depth']}")
    print(f"{'runtime':<12} {'thr':>3} {'time_s':>9} {'Mnodes/s':>9} {'speedup':>8} {'effic.':>7} {'moved/thr/s':>12}")
    for lab, rs in rows.items():
        r = rs[0]
        tm = med[lab]
        sp = ser / tm if ser else float("nan")
        eff = sp / r["threads"] if ser else float("nan")
        mv = statistics.median(x["stats"]["moved_per_thread_per_s"] for x in rs)
        print(f"{lab:<12} {r['threads']:>3} {tm:>9.3f} {r['stats']['nodes'] / tm / 1e6:>9.2f} "
              f"{sp:>8.2f} {eff:>7.1%} {mv:>12.0f}")
    if "plait" in med:
        rel = ", ".join(f"{med[l] / med['plait']:.2f}x faster than {l}" for l in med if l not in ("plait", "serial"))
        if rel:
            print(f"plait: {rel}")
EOF
exit $failed
