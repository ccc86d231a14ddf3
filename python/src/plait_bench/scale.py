"""Past the machine: work/span of a benchmark, the calibrated cost model, the work-stealing
simulator, its validation against real runs and the projections (docs/scaling.md).

The DAG work is done by the C++ tool plait-dag (tools/dag/, built into the gcc tree's bin/);
this module runs the benchmarks, calls plait-dag and draws the figures.
"""

from __future__ import annotations

import json
import math
import os
import random
import socket
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import machine


class ScaleError(Exception):
    """Bad input or a failed run: one line for the user."""


# The kernels of the validation (docs/scaling.md, "Validation"), sized so that a one-worker trace
# stays under ~10^6 tasks and a run takes 10 ms .. 1 s here. UTS: T3 itself (4.1 M nodes, 514 k
# tasks: one per node with children), g = 1. fib: with a cut-off of 16, ~0.5 us per task (fib(27)
# with a task per call does ~1 ns of work per task, and tracing adds ~75 ns: a trace cannot
# resolve that work; docs/scaling.md).
WORKLOADS: dict[str, tuple[str, list[str]]] = {
    "uts": ("uts", ["--tree", "T3", "--g", "1"]),
    "fib": ("fib", ["--n", "36", "--cutoff", "16"]),
    "sparselu": ("sparselu", ["--size", "small"]),
    "health": ("health", ["--size", "small"]),
    "amr": ("amr", ["--preset", "study003", "--num_tsteps", "6", "--variant", "task-2"]),
}
VALIDATION_WORKERS = (1, 2, 4, 8, 16)


def dag_tool(bins) -> Path:
    p = Path(bins.gcc) / "plait-dag"
    if not p.is_file():
        raise ScaleError(f"{p} not found (build it: cmake --build build/gcc-release --target plait-dag)")
    return p


def run_dag(bins, args: list[str]) -> dict:
    cp = subprocess.run([str(dag_tool(bins)), *args, "--json"], capture_output=True, text=True)
    if cp.returncode != 0:
        line = (cp.stderr.strip().splitlines() or ["plait-dag failed"])[-1]
        raise ScaleError(line.removeprefix("plait-dag: error: "))
    return json.loads(cp.stdout)


def bench_binary(bins, kernel: str) -> Path:
    p = Path(bins.gcc) / f"{kernel}-plait"
    if not p.is_file():
        raise ScaleError(f"{p} not found (build it: make build, or cmake --build build/gcc-release --target {kernel}-plait)")
    return p


def run_bench(binary: Path, args: list[str], threads: int, reps: int = 1, warmup: int = 0,
              env: dict | None = None, timeout: float = 600) -> list[dict]:
    """Runs a benchmark binary; its verified JSON lines (a failed check is an error, never a number)."""
    cmd = [str(binary), *args, "--threads", str(threads), "--reps", str(reps), "--warmup", str(warmup), "--quiet"]
    e = dict(os.environ)
    e.pop("PLAIT_TRACE", None)
    e.update(env or {})
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ScaleError(f"{binary.name} timed out after {timeout:.0f} s") from None
    if cp.returncode != 0:
        line = (cp.stderr.strip().splitlines() or [f"exit status {cp.returncode}"])[-1]
        raise ScaleError(f"{binary.name} {' '.join(args)} --threads {threads}: {line}")
    rows = [json.loads(l) for l in cp.stdout.splitlines() if l.startswith("{")]
    if not rows or not all(r.get("verified") for r in rows):
        raise ScaleError(f"{binary.name}: the run did not verify its result")
    return rows


def trace_run(bins, kernel: str, args: list[str], out: Path, threads: int = 1) -> Path:
    binary = bench_binary(bins, kernel)
    run_bench(binary, args, threads, env={"PLAIT_TRACE": str(out)})
    if not out.is_file():
        raise ScaleError(f"{binary.name} wrote no trace {out}")
    return out


# ---- calibration ----

def default_cost_model_path(root: Path) -> Path:
    return root / "results" / "cost-model.json"


# Calibrated costs above these are a busy machine, not the runtime: the steal cost measured here and
# on a 16-core machine was 240-1793 ns and the spawn cost 2-16 ns (docs/scaling.md, "Calibration"),
# so the bounds leave two orders of magnitude above the slowest; a model past them is refused.
MAX_STEAL_NS = 100_000
MAX_SPAWN_NS = 2_000


def calibrate(bins, out: Path, rounds: int = 5) -> dict:
    """Measures the simulator's costs on this machine and writes the cost model file.

    spawn_ns: fib(27) with a task per call on Plait minus the serial fib, per task (1 worker).
    steal_ns: the steal microbenchmark's cost per steal (2 workers), the seed-001 method: `--auto`
    sizes the leaf so that the 2-worker tree runs 10-20 % slower than one leaf alone. (With the
    default 20 us leaf a steal is ~2 % of the time, inside this machine's run-to-run noise: one CI
    run measured -15.7 ns.) A median that is still not positive is an error, not a model.
    trace_task_ns, trace_ns: what tracing adds to a one-worker trace's work (plait-dag workspan of
    that fib), per task and per spawn: a leaf's work (fib(0), fib(1): ~1 ns untraced) is the
    per-task part; the rest of the traced work minus the serial fib, per spawn, the per-spawn part
    (remove_trace_cost in tools/dag takes both back).
    steal_fail_ns, wake_ns, spin_ns: not measured (assumed; docs/scaling.md says why).
    Rounds interleave the variants; each number is the median over rounds.
    """
    fib_p, fib_s = bench_binary(bins, "fib"), Path(bins.gcc) / "fib-serial"
    steal = bench_binary(bins, "steal")
    if not fib_s.is_file():
        raise ScaleError(f"{fib_s} not found (build it: make build)")
    args = ["--n", "27"]
    plain, serial, traced, steals, leaf = [], [], [], [], []
    tasks = 0
    with tempfile.TemporaryDirectory() as td:
        for _ in range(rounds):
            r = run_bench(fib_p, args, 1, reps=5, warmup=1)
            plain.append(statistics.median(x["time_s"] for x in r))
            tasks = int(r[0]["stats"]["tasks"])
            serial.append(statistics.median(x["time_s"] for x in run_bench(fib_s, args, 1, reps=5, warmup=1)))
            tr = Path(td) / "f.json"
            run_bench(fib_p, args, 1, reps=1, env={"PLAIT_TRACE": str(tr)})
            ws = run_dag(bins, ["workspan", str(tr)])
            traced.append(ws["work_ns"] / 1e9)
            leaf.append(ws["leaf_work_ns"] / max(1, ws["leaves"]))
            s = run_bench(steal, ["--seconds", "0.25", "--auto"], 2)
            steals.append(float(s[0]["stats"]["steal_cost_ns"]))
    if statistics.median(steals) <= 0:
        raise ScaleError(f"the steal cost measured {statistics.median(steals):.1f} ns (median of {rounds} runs of "
                         f"{steal.name} --threads 2 --auto): not positive, the machine is too noisy; "
                         "run calibrate again on a quieter machine, or with more --rounds")
    if statistics.median(steals) > MAX_STEAL_NS:
        load = os.getloadavg()[0]
        raise ScaleError(f"the steal cost measured {statistics.median(steals):.0f} ns (median of {rounds} runs of "
                         f"{steal.name} --threads 2 --auto), more than {MAX_STEAL_NS} ns: not a steal but a busy "
                         f"machine (load average {load:.1f} on {os.cpu_count()} CPUs); run calibrate again when it "
                         "is quiet")
    spawn_ns = max(0.0, (statistics.median(plain) - statistics.median(serial)) / tasks * 1e9)
    if spawn_ns > MAX_SPAWN_NS:
        load = os.getloadavg()[0]
        raise ScaleError(f"the spawn cost measured {spawn_ns:.0f} ns per task, more than {MAX_SPAWN_NS} ns: a busy "
                         f"machine (load average {load:.1f} on {os.cpu_count()} CPUs); run calibrate again when it "
                         "is quiet")
    trace_task_ns = statistics.median(leaf)
    rest = statistics.median(traced) - statistics.median(serial) - trace_task_ns * 1e-9 * tasks
    trace_ns = max(0.0, rest / max(1, tasks - 1) * 1e9)
    model = {
        "spawn_ns": round(spawn_ns, 3),
        "steal_ns": round(statistics.median(steals), 1),
        "steal_fail_ns": 60.0,
        "wake_ns": 30000.0,
        "spin_ns": 1000000.0,
        "trace_task_ns": round(trace_task_ns, 1),
        "trace_ns": round(trace_ns, 1),
        "measured": {
            "fib_plait_s": plain, "fib_serial_s": serial, "fib_traced_work_s": traced, "fib_traced_leaf_ns": leaf, "steal_cost_ns": steals,
            "tasks": tasks, "rounds": rounds,
        },
        "assumed": ["steal_fail_ns", "wake_ns", "spin_ns"],
        "machine": {"host": socket.gethostname(), "cpu": machine.cpu_model(), "cpus": os.cpu_count()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(model, indent=1) + "\n")
    tmp.replace(out)
    return model


def cost_args(costs: Path | None) -> list[str]:
    return ["--costs", str(costs)] if costs is not None else []


# ---- work and span ----

def workspan(bins, trace: Path, costs: Path | None) -> dict:
    return run_dag(bins, ["workspan", str(trace), *cost_args(costs)])


def measured_speedups(bins, kernel: str, args: list[str], threads: list[int], rounds: int) -> dict[int, float]:
    """Median time per thread count, rounds interleaved in a shuffled order."""
    binary = bench_binary(bins, kernel)
    times: dict[int, list[float]] = {p: [] for p in threads}
    rng = random.Random(1)
    for _ in range(rounds):
        order = list(threads)
        rng.shuffle(order)
        for p in order:
            rows = run_bench(binary, args, p, reps=3, warmup=1)
            times[p].append(statistics.median(r["time_s"] for r in rows))
    return {p: statistics.median(v) for p, v in times.items()}


def plot_bounds(ws: dict, measured: dict[int, float], title: str, out: Path, max_p: int = 64) -> None:
    """Cilkview's picture: the work law (S <= P), the span law (S <= W/S_inf), the burdened-span
    estimate S ~ W / (W/P + burdened span), and the measured speed-ups."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = [2 ** k for k in range(int(math.log2(max_p)) + 1)]
    work, par = ws["work_ns"], ws["parallelism"]
    bspan = ws["burdened_span_ns"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ps, ps, "k--", lw=1, label="work law: P")
    ax.plot(ps, [par] * len(ps), "k:", lw=1, label=f"span law: parallelism {par:.1f}")
    ax.plot(ps, [work / (work / p + bspan) for p in ps], "C0-", label="burdened-span estimate")
    if measured:
        t1 = measured.get(1) or min(measured.values())
        mp = sorted(measured)
        ax.plot(mp, [t1 / measured[p] for p in mp], "C3o", label="measured (this machine)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("workers P")
    ax.set_ylabel("speed-up over 1 worker")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


# ---- simulation and validation ----

def simulate(bins, trace: Path, workers: str, steal: str = "one", costs: Path | None = None,
             cores: int | None = None, seed: int = 1, topology: str | None = None,
             steal_ns_levels: str | None = None) -> dict:
    args = ["simulate", str(trace), "--workers", workers, "--steal", steal, "--seed", str(seed), *cost_args(costs)]
    if cores:
        args += ["--cores", str(cores)]
    if topology:
        args += ["--topology", topology]
    if steal_ns_levels:
        args += ["--steal-ns-levels", steal_ns_levels]
    return run_dag(bins, args)


@dataclass
class Validation:
    kernel: str
    args: list[str]
    measured: dict[int, float] = field(default_factory=dict)
    predicted: dict[int, float] = field(default_factory=dict)

    def error(self, p: int) -> float:
        return self.predicted[p] / self.measured[p] - 1


def validate(bins, kernels: list[str], costs: Path | None, rounds: int, workers=VALIDATION_WORKERS,
             cores: int | None = None, workdir: Path | None = None) -> list[Validation]:
    """One-worker trace per kernel, simulated at every P (P above the machine's cores share them),
    against real untraced runs (rounds interleaved, medians)."""
    cores = cores or os.cpu_count() or 1
    out = []
    with tempfile.TemporaryDirectory(dir=workdir) as td:
        for k in kernels:
            kernel, args = WORKLOADS[k]
            tr = trace_run(bins, kernel, args, Path(td) / f"{k}.json")
            v = Validation(k, args)
            v.measured = measured_speedups(bins, kernel, args, list(workers), rounds)
            for p in workers:
                res = simulate(bins, tr, str(p), costs=costs, cores=cores if p > cores else None)
                v.predicted[p] = res["rows"][0]["time_ns"] / 1e9
            out.append(v)
            tr.unlink()
    return out


def validation_markdown(vs: list[Validation], costs_note: str) -> str:
    ps = sorted({p for v in vs for p in v.measured})
    lines = [f"Predicted vs measured time (ms) and error; {costs_note}", "",
             "| kernel | " + " | ".join(f"P={p} meas / pred / err" for p in ps) + " |",
             "|---|" + "---|" * len(ps)]
    for v in vs:
        cells = []
        for p in ps:
            cells.append(f"{v.measured[p] * 1e3:.2f} / {v.predicted[p] * 1e3:.2f} / {v.error(p) * 100:+.1f} %")
        lines.append(f"| {v.kernel} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---- projection: study 000's Figs 2 and 4 past the machine ----

PROJECT_GS = (1, 2, 5, 10, 20)
PROJECT_WORKERS = "1,2,4,8,16,32,48,64"
# What study 000 reports in its text for UTS T3 on its machines (Skylake 2 x 24 cores, POWER9,
# ThunderX2, Xeon Phi 68 cores; GCC, Clang, ICC, PGI, CCE, armclang, TBB), threads = cores:
SEED_EFFICIENCY = {
    "finest (1.4-1.7 kinstr/task)": (16.8, 77.5),
    "coarsest (223-279 kinstr/task)": (89.7, 96.9),
}
SEED_SPEEDUP_40 = 37.0  # "All implementations achieve over 37X speedup using 40 threads" (coarsest)


def project(bins, costs: Path, gs=PROJECT_GS, workers: str = PROJECT_WORKERS, rounds: int = 3,
            workdir: Path | None = None, topology: str | None = None, steal_ns_levels: str | None = None) -> dict:
    """UTS T3 at each granularity g: a one-worker trace simulated at every P, and real runs at the
    P this machine has (rounds interleaved)."""
    here = list(range(1, (os.cpu_count() or 1) + 1))
    out: dict = {"costs": str(costs), "workers": workers, "topology": topology or "flat",
                 "steal_ns_levels": steal_ns_levels or "", "g": {}}
    with tempfile.TemporaryDirectory(dir=workdir) as td:
        for g in gs:
            args = ["--tree", "T3", "--g", str(g)]
            tr = trace_run(bins, "uts", args, Path(td) / f"t3g{g}.json")
            rows = simulate(bins, tr, workers, costs=costs, topology=topology, steal_ns_levels=steal_ns_levels)["rows"]
            tr.unlink()
            meas = measured_speedups(bins, "uts", args, here, rounds)
            out["g"][g] = {"simulated": rows, "measured_s": meas}
    return out


def plot_projection(data: dict, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    gs = sorted(data["g"], key=int)
    # Fig 4: speed-up vs workers at the coarsest g we ran.
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, g in enumerate(gs):
        rows = data["g"][g]["simulated"]
        ax.plot([r["workers"] for r in rows], [r["speedup"] for r in rows], "-", color=f"C{i}", marker=".",
                label=f"Plait, g = {g} (projected)")
        meas = {int(p): t for p, t in data["g"][g]["measured_s"].items()}
        t1 = meas[1]
        ax.plot(sorted(meas), [t1 / meas[p] for p in sorted(meas)], "o", color=f"C{i}", mfc="none", ms=8)
    ax.plot([40], [SEED_SPEEDUP_40], "k*", ms=10, label="study 000: > 37x at 40 threads (coarsest g)")
    ps = [r["workers"] for r in data["g"][gs[0]]["simulated"]]
    ax.plot(ps, ps, "k--", lw=0.8, label="ideal")
    ax.set_xlabel("workers")
    ax.set_ylabel("speed-up over 1 worker")
    topo = data.get("topology", "flat")
    ax.set_title("UTS T3: speed-up vs workers (study 000 Fig. 4), projected\n(lines: simulator, "
                 + (f"topology {topo}, steals {data.get('steal_ns_levels')} ns" if topo != "flat" else "flat machine")
                 + "; circles: measured here)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    f4 = out_dir / "fig4-projected.png"
    fig.savefig(f4, dpi=120)
    plt.close(fig)
    # Fig 2: efficiency vs granularity at the largest simulated P and at the P measured here.
    fig, ax = plt.subplots(figsize=(6, 4))
    pmax = max(r["workers"] for r in data["g"][gs[0]]["simulated"])
    eff = [next(r for r in data["g"][g]["simulated"] if r["workers"] == pmax)["efficiency"] * 100 for g in gs]
    ax.plot([int(g) for g in gs], eff, "C0-o", label=f"Plait, {pmax} workers (projected)")
    for p in (2,):
        e = []
        for g in gs:
            meas = {int(q): t for q, t in data["g"][g]["measured_s"].items()}
            if p in meas:
                e.append(meas[1] / meas[p] / p * 100)
        if len(e) == len(gs):
            ax.plot([int(g) for g in gs], e, "C3s", mfc="none", label=f"Plait, {p} workers (measured here)")
    for (name, (lo, hi)), x in zip(SEED_EFFICIENCY.items(), (1, 160)):
        ax.errorbar([x], [(lo + hi) / 2], yerr=[[(hi - lo) / 2], [(hi - lo) / 2]], fmt="k_", capsize=4)
        ax.annotate(f"study 000, {name}:\n{lo}-{hi} %", (x, lo), fontsize=6, xytext=(4, -18), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("granularity g (SHA-1 ops per node; ~1.5 kinstr each)")
    ax.set_ylabel("parallel efficiency (%)")
    ax.set_ylim(0, 105)
    ax.set_title("UTS T3: efficiency vs granularity (study 000 Fig. 2), projected\n(cost model of the machine that ran plait-bench calibrate)", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    f2 = out_dir / "fig2-projected.png"
    fig.savefig(f2, dpi=120)
    plt.close(fig)
    return [f4, f2]
