#!/usr/bin/env python3
"""Spawn-overhead benchmark (study 001's inlined spawn/join cost): fib(n) with one task per call,
every runtime side by side.

Runs serial, plait, plait-frame (the frame-task API, plait/frame.hpp), gomp, gomp@plait (the same
gcc-built OpenMP binary with libplait-omp preloaded), libomp, libomp@plait (the same clang-built
OpenMP binary with libplait-omp preloaded: libomp's ABI) and tbb at 1 and 2 threads, interleaved
and shuffled per round, and prints medians: time per task (= per spawn), overhead per spawn over the
serial recursion ((T_runtime - T_serial) / spawns; the clang-built binaries over clang's serial
build), and each runtime's 2-thread speedup over its
1-thread time. Below the table, the overhead and the speedup per round (each round's runtime against
the same round's serial run, or its own 1-thread run) with the 95 % sign-test interval of their
median: a target such as "overhead <= 10 ns" is met when the interval lies below it, a tie when it
holds it. Uses only the standard library so that it runs before the Python tooling is set up.

    scripts/bench_fib.py [--n 32] [--rounds 11] [--runtimes plait,plait-frame] [--markdown]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "src"))
from plait_bench.stats import interval_text, median_interval  # noqa: E402  (standard library only)
BIN = {
    "serial": "build/gcc-release/bin/fib-serial",
    "serial@clang": "build/clang-release/bin/fib-serial",
    "plait": "build/gcc-release/bin/fib-plait",
    "plait-frame": "build/gcc-release/bin/fib-plait-frame",
    "gomp": "build/gcc-release/bin/fib-gomp",
    "gomp@plait": "build/gcc-release/bin/fib-gomp",
    "libomp": "build/clang-release/bin/fib-libomp",
    "libomp@plait": "build/clang-release/bin/fib-libomp",
    "tbb": "build/gcc-release/bin/fib-tbb",
}
PRELOAD = {"gomp@plait": "build/gcc-release/libplait-omp.so.1", "libomp@plait": "build/gcc-release/libplait-omp.so.1"}
PARALLEL = ("plait", "plait-frame", "gomp", "gomp@plait", "libomp", "libomp@plait", "tbb")
# The serial build each runtime's overhead is taken over: the same compiler's.
SERIAL_OF = {"libomp": "serial@clang", "libomp@plait": "serial@clang"}


def run_record(prog, series, exe, args, env, expect_lib=None):
    """One run of a benchmark binary: its last JSON record, which must say `verified` (and, with expect_lib, an
    OpenMP library whose file name holds it); anything else ends the script with one line naming the run."""
    p = subprocess.run([exe, *args, "--quiet"], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{prog}: {series} {' '.join(args)} failed (exit {p.returncode}): {p.stderr.strip()}")
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    if not rec.get("verified"):
        sys.exit(f"{prog}: {series} result not verified")
    if expect_lib is not None and expect_lib not in os.path.basename(rec.get("omp_library", "")):
        sys.exit(f"{prog}: {series} ran on {rec.get('omp_library')!r}, not {expect_lib}")
    return rec


def run(rt, threads, n):
    env = dict(os.environ, OMP_WAIT_POLICY="active", OMP_PROC_BIND="false")
    if rt in PRELOAD:
        env["LD_PRELOAD"] = os.path.join(ROOT, PRELOAD[rt])
    # --warmup 2: two unmeasured repetitions in the same process first (thread start-up, clock ramp)
    rec = run_record("bench_fib", rt, os.path.join(ROOT, BIN[rt]),
                     ["--n", str(n), "--threads", str(threads), "--warmup", "2"], env,
                     "libplait-omp" if rt in PRELOAD else None)
    return rec["time_s"], rec["stats"]["tasks"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--speedup-n", type=int, default=0,
                    help="also time plait alone at 1 and 2 workers on fib(N), for a 2-worker speedup on runs long "
                         "enough (fib(32) takes ~6 ms on 2 workers)")
    ap.add_argument("--oversub", action="store_true",
                    help="also run plait at 4, 8 and 16 workers (oversubscription on small machines)")
    ap.add_argument("--runtimes", default=",".join(PARALLEL),
                    help=f"comma-separated parallel runtimes to time beside serial (default: all of {', '.join(PARALLEL)})")
    a = ap.parse_args()
    rts = [r for r in a.runtimes.split(",") if r]
    bad = [r for r in rts if r not in PARALLEL]
    if bad or not rts:
        sys.exit(f"bench_fib: --runtimes: unknown {', '.join(bad) or '(none given)'}; accepted: {', '.join(PARALLEL)}")
    if not 10 <= a.n <= 40:
        sys.exit("bench_fib: --n must be in 10..40")
    serials = sorted({SERIAL_OF.get(rt, "serial") for rt in rts}, key=lambda x: x != "serial")
    missing = [rt for rt in [*serials, *rts] if not os.path.exists(os.path.join(ROOT, BIN[rt]))]
    missing += [rt for rt in rts if rt in PRELOAD and not os.path.exists(os.path.join(ROOT, PRELOAD[rt]))]
    if missing:
        sys.exit(f"bench_fib: missing binaries for {', '.join(missing)}; run `make build` first")
    configs = [(s, 1) for s in serials] + [(rt, t) for rt in rts for t in (1, 2)]
    if a.oversub:
        if "plait" not in rts:
            sys.exit("bench_fib: --oversub needs plait among --runtimes")
        configs += [("plait", t) for t in (4, 8, 16)]
    if a.speedup_n and not 10 <= a.speedup_n <= 40:
        sys.exit("bench_fib: --speedup-n must be in 10..40")
    times = {c: [] for c in configs}
    tasks = None
    for c in configs:  # warm-up
        run(c[0], c[1], a.n)
    rng = random.Random(2026)
    for _ in range(a.rounds):
        order = configs[:]
        rng.shuffle(order)
        for c in order:
            t, k = run(c[0], c[1], a.n)
            times[c].append(t)
            tasks = k
    med = {c: statistics.median(v) for c, v in times.items()}
    rows = []
    for rt in rts:
        t1, t2 = med[(rt, 1)], med[(rt, 2)]
        ts = med[(SERIAL_OF.get(rt, "serial"), 1)]
        rows.append((rt, t1 * 1e3, t1 * 1e9 / tasks, (t1 - ts) * 1e9 / tasks, t2 * 1e3, t1 / t2))
    print(f"fib({a.n}): {tasks} spawns; " + ", ".join(
          f"{s} {med[(s, 1)] * 1e3:.2f} ms ({med[(s, 1)] * 1e9 / tasks:.2f} ns per call-pair)" for s in serials) +
          f"; medians of {a.rounds} interleaved rounds on {os.cpu_count()} CPUs")
    hdr = ("runtime", "1T ms", "ns/spawn (1T)", "overhead ns/spawn", "2T ms", "2T speedup")
    if a.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for r in rows:
            print(f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f}x |")
    else:
        print("{:<13} {:>9} {:>14} {:>18} {:>9} {:>11}".format(*hdr))
        for r in rows:
            print(f"{r[0]:<13} {r[1]:>9.2f} {r[2]:>14.2f} {r[3]:>18.2f} {r[4]:>9.2f} {r[5]:>10.2f}x")
    for rt in rts:
        serial = times[(SERIAL_OF.get(rt, "serial"), 1)]
        over = [(t - s) * 1e9 / tasks for t, s in zip(times[(rt, 1)], serial)]
        speed = [t1 / t2 for t1, t2 in zip(times[(rt, 1)], times[(rt, 2)])]
        om, oci = median_interval(over)
        sm, sci = median_interval(speed)
        print(f"{rt}: per round, median [95 % interval] of {a.rounds}: overhead {om:.2f} {interval_text(oci)} ns "
              f"per spawn, 2-thread speedup {sm:.2f}x {interval_text(sci)}")


    if a.speedup_n:
        sp = {1: [], 2: []}
        for _ in range(a.rounds):
            for t in rng.sample([1, 2], 2):
                sp[t].append(run("plait", t, a.speedup_n)[0])
        m1, m2 = statistics.median(sp[1]), statistics.median(sp[2])
        print(f"plait fib({a.speedup_n}): 1 worker {m1 * 1e3:.1f} ms, 2 workers {m2 * 1e3:.1f} ms, "
              f"speedup {m1 / m2:.2f}x (medians of {a.rounds} interleaved rounds)")
    if a.oversub:
        t2 = med[("plait", 2)]
        print(f"plait oversubscription: " + ", ".join(
            f"{t} workers {med[('plait', t)] * 1e3:.2f} ms ({t2 / med[('plait', t)]:.2f}x of 2-worker speed)"
            for t in (4, 8, 16)))


if __name__ == "__main__":
    main()
