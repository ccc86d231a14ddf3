#!/usr/bin/env python3
"""The OpenMP front door past two cores: the same gcc-built OpenMP binaries on libgomp, libomp and
Plait's libplait-omp (both preloaded), beside native Plait, at 1..16 threads (docs/openmp.md,
"Performance"; written for the lent 16-core machine, runs anywhere).

Two parts, each in interleaved, shuffled rounds, every run verified and checked for the OpenMP
library it reports:

1. fib with a task per call at one thread: the per-task overhead over the serial recursion, per
   round, with the 95 % sign-test interval of its median (as scripts/bench_fib.py);
2. scaling: every kernel on every series at every thread count; medians, speed-up over the serial
   build and parallel efficiency (T_serial / (P T_P)), per-round paired ratios gomp@plait over
   the faster of libgomp and libomp with their intervals.

Placement follows plait-bench (pin = "auto"): a P-thread run is bound to the first P CPUs and each
runtime binds thread i to CPU i by its own variable (OMP_PROC_BIND=close with OMP_PLACES=threads
for libgomp, KMP_AFFINITY for libomp, PLAIT_PIN=cores for libplait-omp and native Plait).
--cpus-from-top takes the highest CPUs instead
and keeps this script on CPU 0. Uses only the standard library. Writes omp-scaling.json and omp-scaling.md under --out after
every round, so a run stopped by --budget-s (or killed) keeps its finished rounds.

    scripts/omp_scaling.py [--bin DIR] [--lib DIR] [--workers 1,2,4,8,16] [--rounds 3]
        [--overhead-rounds 15] [--kernels fib,uts,...] [--budget-s S] --out DIR

--bin holds fib-serial, fib-gomp, fib-plait, ... (default build/gcc-release/bin); --lib holds
libplait-omp.so.1 and libomp.so.5 (default: build/gcc-release and LLVM 16's libomp).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "src"))
from plait_bench.stats import interval_text, median_interval  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERIES = ("gomp", "gomp@libomp", "gomp@plait", "plait")
EXPECT = {"gomp": "libgomp", "gomp@plait": "libplait-omp", "gomp@libomp": "libomp"}
# kernel -> arguments (sizes that take 0.1-0.3 s serially on the 2-core machine)
KERNELS = {
    "fib": ["--n", "30"],
    "uts": ["--tree", "T3"],
    "nqueens": ["--size", "small", "--cutoff", "coarse"],
    "sort": ["--size", "small", "--cutoff", "coarse"],
    "fft": ["--size", "small", "--cutoff", "coarse"],
    "strassen": ["--size", "small", "--cutoff", "coarse"],
    "sparselu": ["--size", "small"],
}
# fib's serial build is not the same recursion (gcc transforms it): its scaling is shown over each
# series' own one-thread time; its per-task overhead (part 1) is what compares it with serial.
SELF_RELATIVE = ("fib",)
RUN_TIMEOUT_S = 60


class RunFailed(Exception):
    pass


CPUS = []  # the CPUs runs take, in order: a P-thread run gets the first P


def run(bin_dir, libs, kernel, series, threads, args, warmup):
    exe = os.path.join(bin_dir, f"{kernel}-{'serial' if series == 'serial' else 'plait' if series == 'plait' else 'gomp'}")
    env = dict(os.environ, OMP_WAIT_POLICY="active", OMP_STACKSIZE="100M")
    for v in ("LD_PRELOAD", "OMP_PROC_BIND", "OMP_PLACES", "PLAIT_PIN", "KMP_AFFINITY"):
        env.pop(v, None)
    if series in ("gomp@plait", "gomp@libomp"):
        env["LD_PRELOAD"] = libs[series]
    cpus = CPUS[:threads] if threads <= len(CPUS) else None
    if cpus is not None and series != "serial":
        if series == "gomp":
            env["OMP_PROC_BIND"], env["OMP_PLACES"] = "close", "threads"
        elif series == "gomp@libomp":
            env["KMP_AFFINITY"] = "granularity=fine,compact"
        else:
            env["PLAIT_PIN"] = "cores"
    cmd = [exe, *args, "--threads", str(threads), "--warmup", str(warmup), "--quiet"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S,
                           preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    except subprocess.TimeoutExpired:
        raise RunFailed(f"{kernel} {series} {threads}T: timed out after {RUN_TIMEOUT_S} s") from None
    if p.returncode != 0:
        raise RunFailed(f"{kernel} {series} {threads}T: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    if not rec.get("verified"):
        raise RunFailed(f"{kernel} {series} {threads}T: result not verified")
    if series in EXPECT and EXPECT[series] not in os.path.basename(rec.get("omp_library", "")):
        raise RunFailed(f"{kernel} {series} ran on {rec.get('omp_library')!r}, not {EXPECT[series]}")
    return rec["time_s"], rec.get("stats", {})


def interval(values):
    """The median and its 95 % interval (lo and hi None with fewer than 6 values)."""
    m, ci = median_interval(values)
    lo, hi = ci if ci else (None, None)
    return {"median": m, "lo": lo, "hi": hi, "n": len(values)}


def interval_cell(iv, fmt):
    ci = None if iv["lo"] is None else (iv["lo"], iv["hi"])
    return f"{iv['median']:{fmt}} {interval_text(ci, fmt)}"


def summarise(res, kernels, workers):
    out = {}
    for k in kernels:
        t = res["scaling"][k]
        if not t.get("serial/1"):
            continue
        ts = statistics.median(t["serial/1"])
        rows = {}
        for s in SERIES:
            for p in workers:
                v = t.get(f"{s}/{p}")
                if not v:
                    continue
                m = statistics.median(v)
                base = statistics.median(t[f"{s}/1"]) if k in SELF_RELATIVE and t.get(f"{s}/1") else ts
                rows[f"{s}/{p}"] = {"median_s": m, "speedup": base / m, "efficiency": base / (p * m)}
        ratios = {}
        for p in workers:
            a, b, c = (t.get(f"{s}/{p}") for s in ("gomp@plait", "gomp", "gomp@libomp"))
            n = min(len(x) for x in (a, b, c)) if a and b and c else 0
            if n:
                ratios[str(p)] = interval([a[i] / min(b[i], c[i]) for i in range(n)])
        out[k] = {"serial_s": ts, "rows": rows, "plait_over_faster_peer": ratios}
    return out


def markdown(res, kernels, workers):
    lines = []
    ov = res.get("overhead")
    if ov and ov.get("per_round"):
        lines.append(f"fib({ov['n']}) at one thread, {ov['tasks']} tasks, {len(ov['serial'])} rounds: overhead per task "
                     "over the serial recursion, median [95 % interval] of the per-round values")
        lines.append("")
        for s, iv in ov["per_round"].items():
            lines.append(f"- {s}: {interval_cell(iv, '.2f')} ns")
        lines.append("")
    summ = res.get("summary", {})
    hdr = "| kernel | series | " + " | ".join(f"P = {p}" for p in workers) + " |"
    lines.append("Speed-up over the serial build (parallel efficiency), medians of the rounds; "
                 + ", ".join(SELF_RELATIVE) + ": over the same series at P = 1:")
    lines.append("")
    lines.append(hdr)
    lines.append("|" + "---|" * (2 + len(workers)))
    for k in kernels:
        if k not in summ:
            continue
        for s in SERIES:
            cells = []
            for p in workers:
                r = summ[k]["rows"].get(f"{s}/{p}")
                cells.append(f"{r['speedup']:.2f}x ({r['efficiency'] * 100:.0f} %)" if r else "-")
            lines.append(f"| {k} ({summ[k]['serial_s'] * 1e3:.1f} ms serial) | {s} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("gomp@plait time over the faster of gomp and gomp@libomp, per round, median [95 % interval]:")
    lines.append("")
    lines.append("| kernel | " + " | ".join(f"P = {p}" for p in workers) + " |")
    lines.append("|" + "---|" * (1 + len(workers)))
    for k in kernels:
        if k not in summ:
            continue
        cells = []
        for p in workers:
            iv = summ[k]["plait_over_faster_peer"].get(str(p))
            cells.append(interval_cell(iv, ".3f") if iv else "-")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    if res.get("failures"):
        lines.append("")
        lines.append("Failed runs (no number recorded): " + "; ".join(res["failures"]))
    return "\n".join(lines) + "\n"


def save(res, out, kernels, workers):
    res["summary"] = summarise(res, kernels, workers)
    with open(os.path.join(out, "omp-scaling.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "omp-scaling.md"), "w") as f:
        f.write(markdown(res, kernels, workers))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/gcc-release/bin"))
    ap.add_argument("--lib", default=None)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--overhead-rounds", type=int, default=15)
    ap.add_argument("--overhead-n", type=int, default=32)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--budget-s", type=float, default=0, help="start no new round after this many seconds (0: none)")
    ap.add_argument("--cpus-from-top", action="store_true",
                    help="runs take the highest-numbered CPUs and this script keeps to the lowest (on a machine "
                         "whose CPU 0 is busy with the system)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        workers = [int(x) for x in a.workers.split(",")]
    except ValueError:
        sys.exit(f"omp_scaling: --workers must be a comma-separated list of thread counts, got {a.workers!r}")
    if not workers or any(not 1 <= p <= 1024 for p in workers):
        sys.exit("omp_scaling: --workers: each thread count must be in 1..1024")
    kernels = [k for k in a.kernels.split(",") if k]
    bad = [k for k in kernels if k not in KERNELS]
    if bad or not kernels:
        sys.exit(f"omp_scaling: --kernels: unknown {', '.join(bad) or '(none given)'}; accepted: {', '.join(KERNELS)}")
    if not 0 <= a.rounds <= 100 or not 0 <= a.overhead_rounds <= 1000:
        sys.exit("omp_scaling: --rounds must be in 0..100 and --overhead-rounds in 0..1000")
    if not 10 <= a.overhead_n <= 40:
        sys.exit("omp_scaling: --overhead-n must be in 10..40")
    if a.lib:
        libs = {"gomp@plait": os.path.join(a.lib, "libplait-omp.so.1"), "gomp@libomp": os.path.join(a.lib, "libomp.so.5")}
    else:
        libs = {"gomp@plait": os.path.join(ROOT, "build/gcc-release/libplait-omp.so.1"),
                "gomp@libomp": os.environ.get("PLAIT_BENCH_LIBOMP", "/usr/lib/llvm-16/lib/libomp.so.5")}
    need = [os.path.join(a.bin, f"{k}-{r}") for k in kernels for r in ("serial", "gomp", "plait")]
    missing = [p for p in [*need, *libs.values()] if not os.path.exists(p)]
    if missing:
        sys.exit(f"omp_scaling: missing {', '.join(missing)} (make build; --bin, --lib)")
    os.makedirs(a.out, exist_ok=True)
    avail = sorted(os.sched_getaffinity(0))
    CPUS[:] = avail[::-1] if a.cpus_from_top else avail
    if a.cpus_from_top and len(avail) > 1:
        os.sched_setaffinity(0, {avail[0]})
    t0 = time.time()
    res = {"cpus": len(avail), "cpu_order": CPUS[:], "workers": workers, "kernels": {k: KERNELS[k] for k in kernels},
           "failures": [], "scaling": {k: {} for k in kernels}}
    rng = random.Random(2026)

    if a.overhead_rounds:
        ov_series = ["serial", "gomp", "gomp@libomp", "gomp@plait", "plait"]
        fargs = ["--n", str(a.overhead_n)]
        times = {s: [] for s in ov_series}
        tasks = None
        for s in ov_series:  # warm-up
            run(a.bin, libs, "fib", s, 1, fargs, 2)
        for _ in range(a.overhead_rounds):
            for s in rng.sample(ov_series, len(ov_series)):
                t, st = run(a.bin, libs, "fib", s, 1, fargs, 2)
                times[s].append(t)
                tasks = st.get("tasks", tasks)
        per_round = {s: interval([(t - b) * 1e9 / tasks for t, b in zip(times[s], times["serial"])])
                     for s in ov_series[1:]}
        res["overhead"] = {"n": a.overhead_n, "tasks": tasks, "serial": times["serial"],
                           "times": times, "per_round": per_round}
        save(res, a.out, kernels, workers)
        print(f"overhead part done in {time.time() - t0:.0f} s: " + ", ".join(
            f"{s} {interval_cell(iv, '.2f')} ns" for s, iv in per_round.items()), flush=True)

    configs = [(k, "serial", 1) for k in kernels] + [(k, s, p) for k in kernels for s in SERIES for p in workers]
    for r in range(a.rounds):
        if a.budget_s and time.time() - t0 > a.budget_s:
            print(f"budget of {a.budget_s:.0f} s spent: {r} of {a.rounds} rounds done", flush=True)
            break
        order = configs[:]
        rng.shuffle(order)
        for k, s, p in order:
            try:
                t, _ = run(a.bin, libs, k, s, p, KERNELS[k], 1)
            except RunFailed as e:
                res["failures"].append(str(e))
                print(f"omp_scaling: {e}", file=sys.stderr, flush=True)
                continue
            res["scaling"][k].setdefault(f"{s}/{p}", []).append(t)
        save(res, a.out, kernels, workers)
        print(f"round {r + 1} done at {time.time() - t0:.0f} s", flush=True)
    save(res, a.out, kernels, workers)
    with open(os.path.join(a.out, "omp-scaling.md")) as f:
        print(f.read())
    return 1 if res["failures"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RunFailed as e:
        sys.exit(f"omp_scaling: {e}")
