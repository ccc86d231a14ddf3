#!/usr/bin/env python3
"""Instructions per spawn/join over the serial recursion, counted exactly with callgrind.

The delta method: fib with one task per call (cut-off 0) runs at two sizes, as does the serial
binary; what the process does besides the recursion (start-up, dynamic loading, the pool) is the same
at both sizes and cancels, and so does the serial recursion itself:

    per spawn = ((plait(n2) - plait(n1)) - (serial(n2) - serial(n1))) / (spawns(n2) - spawns(n1))

with spawns(n) = F(n+1) - 1, the calls of fib(n) that spawn (every call with n >= 2). Callgrind counts
instructions, not time: the figure is the same on a busy or a quiet machine.

    scripts/spawn_cost.py [--bin build/gcc-release/bin] [--runtime plait] [--n1 22] [--n2 25]
    scripts/spawn_cost.py --runtime plait,plait-frame     (or --runtime plait --runtime plait-frame)

--runtime names the fib binaries to measure (fib-RUNTIME): plait (plait::spawn and join, the
default), plait-frame (the frame tasks of plait/frame.hpp), or several, comma-separated or
repeated; the serial binary is measured once for all of them. Prints one line per measurement and
one result line per runtime; exit 2 on bad input, 1 when a run fails.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fib_number(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def spawns(n: int) -> int:
    return fib_number(n + 1) - 1


def instructions(binary: str, n: int, function: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        # Only instructions inside the recursion (and what it calls: the runtime's slow paths) are
        # counted; the workers' idle spinning outside it varies from run to run. The pattern must
        # match the recursion alone: callgrind toggles collection at every matching function, so an
        # enclosing match (fib_bench::main_for) would switch it off again inside.
        cp = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                             f"--toggle-collect={function}",
                             binary, "--n", str(n),
                             "--threads", "1", "--reps", "1", "--warmup", "0", "--quiet"],
                            capture_output=True, text=True)
        if cp.returncode != 0:
            sys.exit(f"spawn_cost: {os.path.basename(binary)} --n {n} failed (exit {cp.returncode}): "
                     f"{cp.stderr.strip().splitlines()[-1] if cp.stderr.strip() else 'no output'}")
        m = re.search(r"Collected\s*:\s*(\d+)", cp.stderr)
        if not m:
            sys.exit(f"spawn_cost: no instruction count in callgrind's output for {binary}")
        return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/gcc-release/bin", help="directory with fib-<runtime> and fib-serial")
    ap.add_argument("--runtime", action="append", default=None,
                    help="fib-RUNTIME is measured: plait (default), plait-frame; several comma-separated or repeated")
    ap.add_argument("--n1", type=int, default=22)
    ap.add_argument("--n2", type=int, default=25)
    # Anchored at the start: "*::fib_all(*" also matched functions named after fib_all's lambda
    # (clang leaves spawn_handle<...fib_all(long long)::$_1>::join() out of line), and each such
    # nested match switched collection off inside the recursion.
    ap.add_argument("--function", default="(anonymous namespace)::fib_all(*",
                    help="callgrind pattern of fib-RUNTIME's recursion with a task per call (default: Plait's, "
                         "both variants)")
    ap.add_argument("--serial-function", default="*serial_fib*",
                    help="callgrind pattern of fib-serial's recursion (default: fib_bench::serial_fib)")
    a = ap.parse_args()
    if not (2 <= a.n1 < a.n2 <= 30):
        print(f"spawn_cost: --n1 {a.n1} --n2 {a.n2}: accepted 2 <= n1 < n2 <= 30", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("spawn_cost: valgrind is not installed (scripts/bootstrap.sh installs it)", file=sys.stderr)
        return 2
    runtimes = [r for spec in (a.runtime or ["plait"]) for r in spec.split(",") if r]
    if not runtimes or len(set(runtimes)) != len(runtimes):
        print(f"spawn_cost: --runtime {','.join(runtimes)}: give each runtime once (e.g. plait,plait-frame)",
              file=sys.stderr)
        return 2
    pars = [os.path.join(a.bin, f"fib-{rt}") for rt in runtimes]
    ser = os.path.join(a.bin, "fib-serial")
    for b in pars + [ser]:
        if not os.access(b, os.X_OK):
            print(f"spawn_cost: {b}: no such executable; build first (make build)", file=sys.stderr)
            return 2
    counts = [(instructions(par, a.n1, a.function), instructions(par, a.n2, a.function)) for par in pars]
    s1, s2 = instructions(ser, a.n1, a.serial_function), instructions(ser, a.n2, a.serial_function)
    if min(min(c) for c in counts) == 0 or min(s1, s2) == 0:
        print("spawn_cost: a pattern matched no executed function (see --function, --serial-function)", file=sys.stderr)
        return 2
    extra = spawns(a.n2) - spawns(a.n1)
    for rt, (p1, p2) in zip(runtimes, counts):
        print(f"fib-{rt}: {p1:,} instructions at n={a.n1}, {p2:,} at n={a.n2}")
    print(f"fib-serial: {s1:,} instructions at n={a.n1}, {s2:,} at n={a.n2}")
    print(f"extra spawns: {extra:,}")
    serial = (s2 - s1) / extra
    for rt, (p1, p2) in zip(runtimes, counts):
        over = ((p2 - p1) - (s2 - s1)) / extra
        print(f"{rt}: {over:.1f} instructions per spawn/join over the serial recursion "
              f"(the serial recursion: {serial:.1f} per call pair)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
