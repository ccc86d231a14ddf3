#!/usr/bin/env python3
"""UTS T3 at g = 1, the same gcc-built OpenMP binary on libgomp, libomp and Plait's libplait-omp
(both preloaded), the same clang-built one on libomp and on libplait-omp (libomp@plait: libomp's
ABI), beside native Plait and the serial build: interleaved, shuffled rounds, medians, and each
runtime's parallel efficiency at 2 threads (T_serial / (2 T_2), the clang binaries against clang's
serial build): of the medians, and per round with the 95 % sign-test interval of its median.

Every run must verify, and a preloaded run must report the library it was given (`omp_library`,
docs/bench-protocol.md). Uses only the standard library.

    scripts/uts_efficiency.py [--rounds 9] [--tree T3] [--series gomp,gomp@libomp,gomp@plait,plait,libomp,libomp@plait]
"""
import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "src"))
from bench_fib import run_record  # noqa: E402
from plait_bench.stats import interval_text, median_interval  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build/gcc-release/bin")
CLANG_BIN = os.path.join(ROOT, "build/clang-release/bin")
PLAIT_OMP = os.path.join(ROOT, "build/gcc-release/libplait-omp.so.1")
LIBS = {"gomp@plait": PLAIT_OMP, "libomp@plait": PLAIT_OMP,
        "gomp@libomp": os.environ.get("PLAIT_BENCH_LIBOMP", "/usr/lib/llvm-16/lib/libomp.so.5")}
EXPECT = {"gomp": "libgomp", "gomp@plait": "libplait-omp", "gomp@libomp": "libomp", "libomp": "libomp",
          "libomp@plait": "libplait-omp"}
SERIES = ("gomp", "gomp@libomp", "gomp@plait", "plait", "libomp", "libomp@plait")
DEFAULT_SERIES = ("gomp", "gomp@libomp", "gomp@plait", "plait")
# The binary of each series, and the serial build its efficiency is taken against.
EXE = {"serial": (BIN, "uts-serial"), "serial@clang": (CLANG_BIN, "uts-serial"), "plait": (BIN, "uts-plait"),
       "gomp": (BIN, "uts-gomp"), "gomp@libomp": (BIN, "uts-gomp"), "gomp@plait": (BIN, "uts-gomp"),
       "libomp": (CLANG_BIN, "uts-libomp"), "libomp@plait": (CLANG_BIN, "uts-libomp")}
SERIAL_OF = {"libomp": "serial@clang", "libomp@plait": "serial@clang"}


def run(series, threads, tree):
    env = dict(os.environ, OMP_WAIT_POLICY="active")
    env.pop("LD_PRELOAD", None)
    if series in LIBS:
        env["LD_PRELOAD"] = LIBS[series]
    rec = run_record("uts_efficiency", series, os.path.join(*EXE[series]),
                     ["--tree", tree, "--threads", str(threads), "--warmup", "1"], env, EXPECT.get(series))
    return rec["time_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tree", default="T3")
    ap.add_argument("--series", default=",".join(DEFAULT_SERIES),
                    help=f"comma-separated series (accepted: {', '.join(SERIES)}; default: {','.join(DEFAULT_SERIES)})")
    a = ap.parse_args()
    if not 1 <= a.rounds <= 1000:
        sys.exit("uts_efficiency: --rounds must be in 1..1000")
    series = [x for x in a.series.split(",") if x]
    bad = [x for x in series if x not in SERIES]
    if bad or not series:
        sys.exit(f"uts_efficiency: --series: unknown {', '.join(bad) or '(none given)'}; accepted: {', '.join(SERIES)}")
    for s in series:
        if s in LIBS and not os.path.exists(LIBS[s]):
            sys.exit(f"uts_efficiency: {s} needs {LIBS[s]}, which does not exist (make build; PLAIT_BENCH_LIBOMP)")
    serials = sorted({SERIAL_OF.get(s, "serial") for s in series})
    for s in [*serials, *series]:
        if not os.path.exists(os.path.join(*EXE[s])):
            sys.exit(f"uts_efficiency: {s} needs {os.path.join(*EXE[s])}, which does not exist (make build)")
    configs = [(s, 1) for s in serials] + [(s, t) for s in series for t in (1, 2)]
    times = {c: [] for c in configs}
    rng = random.Random(1)
    for _ in range(a.rounds):
        order = configs[:]
        rng.shuffle(order)
        for c in order:
            times[c].append(run(c[0], c[1], a.tree))
    print(f"UTS {a.tree}: " + ", ".join(f"{s} {statistics.median(times[(s, 1)]) * 1e3:.1f} ms" for s in serials) +
          f"; medians of {a.rounds} interleaved rounds")
    for s in series:
        ts = statistics.median(times[(SERIAL_OF.get(s, "serial"), 1)])
        t1, t2 = statistics.median(times[(s, 1)]), statistics.median(times[(s, 2)])
        print(f"{s:12s} 1T {t1 * 1e3:7.1f} ms  2T {t2 * 1e3:7.1f} ms  efficiency at 2 threads {ts / (2 * t2) * 100:5.1f} %")
    # Round by round (each round's serial run against the same round's 2-thread run): a target
    # such as ">= 90 %" is met when the interval lies above it, a tie when it holds it.
    for s in series:
        eff = [a / (2 * b) * 100 for a, b in zip(times[(SERIAL_OF.get(s, "serial"), 1)], times[(s, 2)])]
        m, ci = median_interval(eff)
        print(f"{s}: per round, median [95 % interval] of {a.rounds}: efficiency at 2 threads {m:.1f} % "
              f"{interval_text(ci, '.1f')}")


if __name__ == "__main__":
    main()
