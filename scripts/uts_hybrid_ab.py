#!/usr/bin/env python3
"""Hybrid UTS, two uts-mpi binaries A/B: 1 rank x 2 workers against 2 ranks x 1 worker.

Runs `mpirun -np R --bind-to none BINARY --tree TREE --hybrid --threads T` for both binaries and
both shapes, each once per round, shuffled within the round, on CPUs 0-1 (taskset), and prints the
medians, the ratio 2x1 / 1x2 per round for each binary and 2x1 new / old per round (sorted: with 7
rounds the extremes bound a 98 % interval of the median). Every run must verify.

    scripts/uts_hybrid_ab.py --old OLD_BINARY --new NEW_BINARY [--rounds 7] [--tree T3L]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tree", default="T3L")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="0")
    bins = {"old": a.old, "new": a.new}
    cfgs = [(b, r, t) for b in bins for (r, t) in ((1, 2), (2, 1))]
    res: dict = {c: [] for c in cfgs}
    rng = random.Random(a.seed)
    for k in range(a.rounds):
        order = cfgs[:]
        rng.shuffle(order)
        for b, r, t in order:
            cmd = ["taskset", "-c", "0,1", "mpirun", "-np", str(r), "--bind-to", "none", bins[b], "--tree", a.tree,
                   "--hybrid", "--threads", str(t), "--quiet"]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            lines = p.stdout.strip().splitlines()
            rec = json.loads(lines[-1]) if p.returncode == 0 and lines else {}
            if not rec.get("verified"):
                print(f"uts_hybrid_ab: {b} {r}x{t} failed (exit {p.returncode}): {p.stderr.strip()[-300:]}",
                      file=sys.stderr)
                return 1
            res[(b, r, t)].append(rec["time_s"])
        print(k + 1, {f"{b} {r}x{t}": round(v[-1], 3) for (b, r, t), v in res.items()}, flush=True)
    for b in bins:
        rat = sorted(x / y for x, y in zip(res[(b, 2, 1)], res[(b, 1, 2)]))
        print(f"{b}: 1x2 {statistics.median(res[(b, 1, 2)]):.3f} s, 2x1 {statistics.median(res[(b, 2, 1)]):.3f} s; "
              f"2x1/1x2 per round {[round(x, 3) for x in rat]} (median {statistics.median(rat):.3f})")
    rat = sorted(x / y for x, y in zip(res[("new", 2, 1)], res[("old", 2, 1)]))
    print(f"2x1 new/old per round {[round(x, 3) for x in rat]} (median {statistics.median(rat):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
