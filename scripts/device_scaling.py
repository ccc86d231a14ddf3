#!/usr/bin/env python3
"""Scaling runs on a lent many-core machine (docs/scaling.md, "Validation on more cores").

Runs with the Python standard library only (the lent machine has no uv environment): it imports
python/src/plait_bench/scale.py, calibrates the cost model on that machine, then for each
validation kernel records a one-worker trace, simulates it at every P and runs it for real at
every P (rounds interleaved), and writes the numbers as JSON and a markdown table.

  python3 scripts/device_scaling.py --bin DIR --out DIR [--workers 1,2,4,8,16] [--rounds 3]
        [--health-input FILE]

DIR holds statically linked builds of fib-plait, fib-serial, steal-plait, uts-plait,
sparselu-plait, health-plait, amr-plait and plait-dag (build/device: cmake -DCMAKE_EXE_LINKER_FLAGS=-static).
The lent machine has no ../shared: copy health's input under build/ (ignored, so never committed)
and name it with --health-input, carrying it with the binaries. Set PLAIT_PIN=cores in the
environment to pin every run (the recorded run did: unpinned runs there vary 1.6x).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "src"))
from plait_bench import scale  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--health-input", type=Path, default=None)
    ap.add_argument("--project", default="1..64", help="simulated worker counts for the projection")
    a = ap.parse_args()
    bins = SimpleNamespace(gcc=a.bin)
    a.out.mkdir(parents=True, exist_ok=True)
    ps = [int(x) for x in a.workers.split(",")]
    if a.health_input:
        scale.WORKLOADS["health"] = ("health", ["--input", str(a.health_input)])
    t0 = time.time()
    cm = a.out / "cost-model.json"
    model = scale.calibrate(bins, cm, rounds=3)
    print(f"calibrated in {time.time() - t0:.0f} s: spawn {model['spawn_ns']} ns, steal {model['steal_ns']} ns, "
          f"trace {model['trace_task_ns']}+{model['trace_ns']} ns", flush=True)
    results = {"cpus": os.cpu_count(), "cost_model": model, "kernels": {}}
    for k in scale.WORKLOADS:
        kernel, args = scale.WORKLOADS[k]
        tr = a.out / f"{k}.trace.json"
        scale.trace_run(bins, kernel, args, tr)
        ws = scale.workspan(bins, tr, cm)
        meas = scale.measured_speedups(bins, kernel, args, ps, a.rounds)
        pred = {p: scale.simulate(bins, tr, str(p), costs=cm)["rows"][0]["time_ns"] / 1e9 for p in ps}
        proj = scale.simulate(bins, tr, a.project, costs=cm)
        results["kernels"][k] = {"args": args, "workspan": ws, "measured_s": meas, "predicted_s": pred,
                                 "projection": proj["rows"]}
        tr.unlink()
        print(f"{k}: " + ", ".join(f"P={p} {meas[p] * 1e3:.2f}/{pred[p] * 1e3:.2f} ms" for p in ps)
              + f" ({time.time() - t0:.0f} s)", flush=True)
    (a.out / "device-scaling.json").write_text(json.dumps(results, indent=1) + "\n")
    vs = []
    for k, r in results["kernels"].items():
        v = scale.Validation(k, r["args"])
        v.measured, v.predicted = r["measured_s"], r["predicted_s"]
        vs.append(v)
    md = scale.validation_markdown(vs, f"calibrated on this {os.cpu_count()}-CPU machine, {a.rounds} interleaved rounds (medians)")
    (a.out / "validation.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
