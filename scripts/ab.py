#!/usr/bin/env python3
"""A/B of one benchmark between two builds: interleaved rounds, per-process medians, paired ratios.

    scripts/ab.py --old DIR --new DIR [--rounds 15] [--reps 5] [--warmup 1] [--stat time_s] -- BINARY ARGS...

Each round runs DIR/BINARY ARGS --reps R --warmup W from both builds, the old first in odd rounds
and the new first in even ones, and takes the median of the measured repetitions of each process
(the `time_s` of its JSON records, or the stat named by --stat, e.g. a field of "stats"). The
round's ratio is new/old: below 1 the new build is faster. Printed: the median ratio over rounds,
its 95 % sign-test interval (order statistics of the ratios: no assumption about their
distribution), and in how many rounds the new build was faster. Every run must verify; a failed
run stops the A/B with its message (exit 1). Bad input: one line, exit 2.

Run it on a quiet machine (no build, no other benchmark): docs/bench-protocol.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "src"))
from plait_bench.stats import interval_text, median_ci  # noqa: E402  (standard library only)


def one_process(path: str, args: list[str], reps: int, warmup: int, stat: str) -> float:
    cmd = [path, *args, "--reps", str(reps), "--warmup", str(warmup), "--quiet"]
    cp = subprocess.run(cmd, capture_output=True, text=True)
    if cp.returncode != 0:
        last = cp.stderr.strip().splitlines()[-1] if cp.stderr.strip() else f"exit {cp.returncode}"
        sys.exit(f"ab: {' '.join(cmd)} failed: {last}")
    vals = []
    for line in cp.stdout.splitlines():
        rec = json.loads(line)
        if not rec.get("verified", False):
            sys.exit(f"ab: {' '.join(cmd)}: a repetition did not verify: {rec.get('check', '')}")
        v = rec.get(stat, rec.get("stats", {}).get(stat))
        if not isinstance(v, (int, float)):
            sys.exit(f"ab: {' '.join(cmd)}: no numeric '{stat}' in its records")
        vals.append(float(v))
    if not vals:
        sys.exit(f"ab: {' '.join(cmd)}: no records")
    return statistics.median(vals)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--stat", default="time_s")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        print("ab: no benchmark given; accepted: -- BINARY ARGS...", file=sys.stderr)
        return 2
    if not 6 <= a.rounds <= 1000 or not 1 <= a.reps <= 1000 or not 0 <= a.warmup <= 1000:
        print("ab: accepted: --rounds 6..1000 (fewer give no 95 % interval), --reps 1..1000, --warmup 0..1000",
              file=sys.stderr)
        return 2
    paths = {}
    for side in ("old", "new"):
        p = os.path.join(getattr(a, side), cmd[0])
        if not os.access(p, os.X_OK):
            print(f"ab: --{side}: {p} is no executable", file=sys.stderr)
            return 2
        paths[side] = p
    ratios, olds, news = [], [], []
    for r in range(a.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        got = {s: one_process(paths[s], cmd[1:], a.reps, a.warmup, a.stat) for s in order}
        olds.append(got["old"])
        news.append(got["new"])
        ratios.append(got["new"] / got["old"] if got["old"] > 0 else float("nan"))
    ratios = [x for x in ratios if not math.isnan(x)]
    ci = median_ci(ratios)
    faster = sum(1 for x in ratios if x < 1)
    print(f"{' '.join(cmd)}: old median {statistics.median(olds):.6g}, new median {statistics.median(news):.6g} "
          f"({a.stat}, {a.rounds} rounds of --reps {a.reps})")
    print(f"new/old paired ratio: {statistics.median(ratios):.3f} {interval_text(ci, '.3f')} (95 % sign test); new faster in "
          f"{faster}/{len(ratios)} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
