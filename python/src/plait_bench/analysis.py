"""Numbers from stored runs: medians with min-max, efficiency, speedup, moved-task rates, Pearson r.

Efficiency = T_serial / (P * T_P), with T_serial the median time of the serial build of the same
benchmark and the same (runtime-independent) parameters in the same session. Speedup = T_serial / T_P.
Both are computed per measured run and then summarised (median, min, max) over runs.
"""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
from dataclasses import dataclass, field
from typing import Iterable

from .registry import runtime_of
from .runner import FAILED_STATUSES

# m (children per non-leaf node) of the named UTS trees, for when a run's params do not say it.
UTS_TREE_M = {"T3": 8, "T3L": 5, "T3XXL": 2, "T2XXL": 2, "T3WL": 2, "T4": 4}
UTS_TREE_B0 = {"T3": 2000, "T3L": 2000}


def efficiency(t_serial: float, threads: int, t_parallel: float) -> float:
    """Parallel efficiency T_serial / (P * T_P) (1.0 = ideal)."""
    if t_parallel <= 0 or threads <= 0:
        raise ValueError("times and thread counts must be positive")
    return t_serial / (threads * t_parallel)


def speedup(t_serial: float, t_parallel: float) -> float:
    if t_parallel <= 0:
        raise ValueError("time must be positive")
    return t_serial / t_parallel


def pearson(xs: Iterable[float], ys: Iterable[float]) -> float | None:
    """Pearson correlation coefficient; None when undefined (fewer than 2 points or a constant series)."""
    x = [float(v) for v in xs]
    y = [float(v) for v in ys]
    if len(x) != len(y):
        raise ValueError("pearson: series of different lengths")
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


@dataclass
class Summary:
    median: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> "Summary | None":
        v = [float(x) for x in values if x is not None and not math.isnan(float(x))]
        if not v:
            return None
        return cls(statistics.median(v), min(v), max(v), len(v))


@dataclass
class Run:
    id: int
    kernel: str
    runtime: str
    series: str
    threads: int
    params: dict
    base: dict
    round: int
    kind: str
    status: str
    time_s: float | None
    stats: dict
    message: str | None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def base_key(self) -> tuple:
        return (self.kernel, tuple(sorted(self.base.items())))


def load_runs(con: sqlite3.Connection, session_id: int, include_warmup: bool = False) -> list[Run]:
    q = "SELECT * FROM runs WHERE session_id = ?" + ("" if include_warmup else " AND kind = 'measured'") + " ORDER BY id"
    out = []
    for r in con.execute(q, (session_id,)):
        out.append(
            Run(
                id=r["id"], kernel=r["kernel"], runtime=r["runtime"], series=r["series"], threads=r["threads"],
                params=json.loads(r["params_json"]), base=json.loads(r["base_json"]), round=r["round"],
                kind=r["kind"], status=r["status"], time_s=r["time_s"],
                stats=json.loads(r["stats_json"] or "{}"), message=r["message"],
            )
        )
    return out


def _num(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def uts_g(params: dict) -> int:
    for k in ("g", "granularity", "compute_granularity"):
        if k in params:
            try:
                return int(float(params[k]))
            except ValueError:
                pass
    return 1


def uts_m(params: dict, echo: dict | None = None) -> int | None:
    for src in (params, echo or {}):
        for k in ("m", "nonleaf_bf", "non_leaf_bf"):
            if k in src and _num(src[k]):
                return int(float(src[k]))
    tree = params.get("tree") or (echo or {}).get("tree")
    return UTS_TREE_M.get(str(tree)) if tree else None


def moved_rate(run: Run) -> float | None:
    """Moved tasks per thread per second: the binary's own figure, else moved_tasks / (P * time)."""
    v = _num(run.stats.get("moved_per_thread_per_s"))
    if v is not None:
        return v
    mv = _num(run.stats.get("moved_tasks"))
    if mv is not None and run.time_s:
        return mv / (run.threads * run.time_s)
    return None


class MeasuredRuns:
    """What a cell's measured runs (its `runs`) say: the ones that came through, the failed ones, the time."""

    runs: list[Run]

    @property
    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if r.ok]

    @property
    def failed_runs(self) -> list[Run]:
        return [r for r in self.runs if r.status in FAILED_STATUSES]

    @property
    def time(self) -> Summary | None:
        """The median, min and max time of the ok runs."""
        return Summary.of(r.time_s for r in self.ok_runs)


@dataclass
class Cell(MeasuredRuns):
    """All measured runs of one (benchmark, parameters, series, threads)."""

    kernel: str
    base: dict
    series: str
    runtime: str
    threads: int
    runs: list[Run] = field(default_factory=list)

    def stat(self, name: str) -> Summary | None:
        return Summary.of(_num(r.stats.get(name)) for r in self.ok_runs)


class Dataset:
    """Runs of one session organised by problem (kernel + shared params), series and threads."""

    def __init__(self, runs: list[Run]):
        self.runs = runs
        self.cells: dict[tuple, Cell] = {}
        for r in runs:
            key = (r.base_key, r.series, r.threads)
            c = self.cells.get(key)
            if c is None:
                c = self.cells[key] = Cell(r.kernel, r.base, r.series, r.runtime, r.threads)
            c.runs.append(r)

    def kernels(self) -> list[str]:
        return sorted({c.kernel for c in self.cells.values()})

    def problems(self, kernel: str) -> list[dict]:
        seen: dict[tuple, dict] = {}
        for c in self.cells.values():
            if c.kernel == kernel:
                seen.setdefault(tuple(sorted(c.base.items())), c.base)
        return list(seen.values())

    def cell(self, kernel: str, base: dict, series: str, threads: int) -> Cell | None:
        return self.cells.get(((kernel, tuple(sorted(base.items()))), series, threads))

    def cells_for(self, kernel: str, base: dict | None = None) -> list[Cell]:
        return [
            c for c in self.cells.values() if c.kernel == kernel and (base is None or c.base == base)
        ]

    def series(self, kernel: str, parallel_only: bool = False) -> list[str]:
        order = {"plait": 0, "tbb": 1, "libomp": 2, "gomp": 3, "serial": 9}
        s = {c.series for c in self.cells.values() if c.kernel == kernel and (not parallel_only or c.runtime != "serial")}
        # plait@clang next to plait, and so on: the runtime decides the place, then the name
        return sorted(s, key=lambda x: (order.get(runtime_of(x), 5), x))

    def max_threads(self, kernel: str) -> int:
        ts = [c.threads for c in self.cells.values() if c.kernel == kernel and c.runtime != "serial"]
        return max(ts) if ts else 1

    def threads(self, kernel: str) -> list[int]:
        return sorted({c.threads for c in self.cells.values() if c.kernel == kernel and c.runtime != "serial"})

    def serial_time(self, kernel: str, base: dict) -> float | None:
        c = self.cell(kernel, base, "serial", 1)
        s = c.time if c else None
        return s.median if s else None

    def efficiency(self, cell: Cell) -> Summary | None:
        ts = self.serial_time(cell.kernel, cell.base)
        if ts is None:
            return None
        return Summary.of(efficiency(ts, cell.threads, r.time_s) for r in cell.ok_runs if r.time_s)

    def speedup(self, cell: Cell) -> Summary | None:
        ts = self.serial_time(cell.kernel, cell.base)
        if ts is None:
            return None
        return Summary.of(speedup(ts, r.time_s) for r in cell.ok_runs if r.time_s)

    def moved_rate(self, cell: Cell) -> Summary | None:
        return Summary.of(moved_rate(r) for r in cell.ok_runs)

    def stat_any(self, kernel: str, base: dict, name: str) -> float | None:
        """A deterministic counter (nodes, tasks) from any ok run of the problem, serial first."""
        cells = sorted(self.cells_for(kernel, base), key=lambda c: c.runtime != "serial")
        for c in cells:
            s = c.stat(name)
            if s is not None:
                return s.median
        return None


# ---- UTS specifics ----------------------------------------------------------------------------


@dataclass
class UtsPoint:
    """One UTS problem (tree + g): what the granularity figures need."""

    base: dict
    g: int
    m: int | None
    nodes: float | None
    tasks: float | None
    t_serial: float | None

    @property
    def ops_per_task(self) -> float | None:
        """SHA-1 operations per task: m * g (each task hashes its m children g times)."""
        return self.m * self.g if self.m else None

    @property
    def us_per_op(self) -> float | None:
        """Serial time per SHA-1 op: T_serial / ((nodes - 1) * g), every non-root node is hashed g times."""
        if self.t_serial is None or not self.nodes or self.nodes <= 1:
            return None
        return self.t_serial * 1e6 / ((self.nodes - 1) * self.g)

    @property
    def us_per_task_measured(self) -> float | None:
        if self.t_serial is None or not self.tasks:
            return None
        return self.t_serial * 1e6 / self.tasks

    @property
    def label(self) -> str:
        """Short column label: 'g=1 (T3)', or 'g=8 (288k nodes)' for a custom tree."""
        tree = self.base.get("tree")
        if not tree and self.nodes:
            n = self.nodes
            tree = f"{n / 1e6:.2f}M nodes" if n >= 1e6 else f"{n / 1e3:.0f}k nodes"
        if not tree:
            tree = ",".join(f"{k}={v}" for k, v in sorted(self.base.items()) if k != "g")
        return f"g={self.g} ({tree})"

    @property
    def description(self) -> str:
        """Full parameters, for captions and tables in the report."""
        return " ".join(f"{k}={v}" for k, v in sorted(self.base.items()))


def uts_points(ds: Dataset) -> list[UtsPoint]:
    pts = []
    for base in ds.problems("uts"):
        echo_m = None
        for c in ds.cells_for("uts", base):
            for r in c.ok_runs:
                echo_m = uts_m(base, r.params) if echo_m is None else echo_m
        pts.append(
            UtsPoint(
                base=base, g=uts_g(base), m=uts_m(base) or echo_m,
                nodes=ds.stat_any("uts", base, "nodes"), tasks=ds.stat_any("uts", base, "tasks"),
                t_serial=ds.serial_time("uts", base),
            )
        )
    return sorted(pts, key=lambda p: (p.g, json.dumps(p.base, sort_keys=True)))


def us_per_op(points: list[UtsPoint]) -> float | None:
    """Serial time per SHA-1 op, from the coarsest granularity (where traversal overhead matters least)."""
    good = [p for p in points if p.us_per_op is not None]
    if not good:
        return None
    gmax = max(p.g for p in good)
    return statistics.median(p.us_per_op for p in good if p.g == gmax)


def pearson_by_granularity(ds: Dataset, points: list[UtsPoint], threads: int) -> list[tuple[UtsPoint, float | None, int]]:
    """Per granularity: Pearson r between speedup and moved tasks/thread/s across parallel series at P=threads
    (each series contributes its medians), with the number of series used."""
    out = []
    for p in points:
        xs, ys = [], []
        for s in ds.series("uts", parallel_only=True):
            c = ds.cell("uts", p.base, s, threads)
            if c is None:
                continue
            sp, mr = ds.speedup(c), ds.moved_rate(c)
            if sp is not None and mr is not None:
                xs.append(sp.median)
                ys.append(mr.median)
        out.append((p, pearson(xs, ys) if len(xs) >= 3 else None, len(xs)))
    return out


def callgrind_total(path) -> int:
    """Total instructions (Ir) from a callgrind.out file: the 'summary:' or 'totals:' line."""
    total = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
                if line.startswith("summary:"):
                    break
    if total is None:
        raise ValueError(f"{path}: no summary/totals line (not a callgrind output file?)")
    return total


def per_unit_from_two(i1: int, units1: float, i2: int, units2: float) -> float:
    """Instructions per unit of work from two runs that differ only in the amount of that work:
    (I2 - I1) / (units2 - units1); start-up and traversal costs cancel."""
    if units2 == units1:
        raise ValueError("the two measurements must differ in work")
    return (i2 - i1) / (units2 - units1)
