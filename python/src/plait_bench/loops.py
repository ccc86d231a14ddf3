"""Study 002 (Giger 2021, "Task self-scheduling in OpenMP"): the loop-to-task numbers.

From the runs of the ``mandel`` and ``flatloop`` benchmarks (bench/mandel, bench/flatloop; docs/loops.md)
of one session: the lines of the time-vs-grain figures, the break-even grain per line (smallest grain
within 10 % of the line's best time), adaptive vs the best hand-tuned grain (ratio, target <= 1.05),
the run-to-run coefficient of variation, and the flatloop efficiency rows with the target (2 workers:
>= 90 % parallel efficiency with chunked stealing, >= 2x faster than libomp single+task). The report
section that draws and tables them is report_loops.py.

A "line" is (runtime, variant, steal policy); its knob is --grain (task variants), --chunk (ws-dynamic,
ws-guided) or --num-tasks. The variant/grain/steal parameters are runtime-only parameters in the study
files, so every line of a problem shares one serial baseline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .analysis import Cell, Dataset, Summary

LOOP_KERNELS = ("mandel", "flatloop")
KNOBS = ("grain", "chunk", "num-tasks")
UNTUNED = ("adaptive", "ws-static")
BREAK_EVEN_TOL = 0.10
ADAPTIVE_TARGET = 1.05
FLAT_EFF_TARGET = 0.90
FLAT_VS_LIBOMP_TARGET = 2.0
CHUNKED = ("chunk", "half", "adaptive")  # steal policies that take more than one task


def has_loops(ds: Dataset) -> bool:
    return any(k in LOOP_KERNELS for k in ds.kernels())


# ---- organising runs -----------------------------------------------------------------------------


def _steal(cell: Cell) -> str:
    """The Plait steal policy of a cell: the parameter, else what the binary reported, else 'one'."""
    if cell.runtime != "plait":
        return ""
    for r in cell.runs:
        if "steal" in r.params:
            return str(r.params["steal"])
    for r in cell.runs:
        s = r.stats.get("steal")
        if isinstance(s, str):
            return s
    return "one"


def _variant(cell: Cell) -> str:
    for r in cell.runs:
        v = r.params.get("variant") or r.stats.get("variant")
        if v:
            return str(v)
    return "puretask-single"


def _knob(cell: Cell) -> tuple[str, float] | None:
    """The tuning knob of a cell: (name, value) for --num-tasks/--chunk/--grain as the variant uses them."""
    v = _variant(cell)
    p = cell.runs[0].params if cell.runs else {}
    if v in UNTUNED:
        return None
    if v == "taskloop-linear" and str(p.get("num-tasks", "0")) not in ("0", ""):
        return ("num-tasks", float(p["num-tasks"]))
    if v in ("ws-dynamic", "ws-guided"):
        return ("chunk", float(p.get("chunk", 1)))
    return ("grain", float(p.get("grain", 1)))


@dataclass(frozen=True)
class LineKey:
    runtime: str
    variant: str
    steal: str
    knob: str  # grain, chunk, num-tasks, or "" for untuned variants

    @property
    def label(self) -> str:
        s = f"{self.runtime} {self.variant}"
        if self.steal:
            s += f" steal={self.steal}"
        if self.knob and self.knob != "grain":
            s += f" ({self.knob})"
        return s


@dataclass
class Line:
    key: LineKey
    points: dict[float, Cell] = field(default_factory=dict)  # knob value -> cell; untuned: {nan: cell}

    def medians(self) -> dict[float, float]:
        out = {}
        for x, c in self.points.items():
            t = c.time
            if t is not None:
                out[x] = t.median
        return out


def lines(ds: Dataset, kernel: str, base: dict, threads: int) -> list[Line]:
    """Every runtime/variant/steal line of one problem at one thread count (serial left out)."""
    by: dict[LineKey, Line] = {}
    for c in ds.cells_for(kernel, base):
        if c.runtime == "serial" or c.threads != threads or not c.runs:
            continue
        k = _knob(c)
        key = LineKey(c.runtime, _variant(c), _steal(c), k[0] if k else "")
        ln = by.setdefault(key, Line(key))
        ln.points[k[1] if k else math.nan] = c
    order = {"plait": 0, "tbb": 1, "libomp": 2, "gomp": 3}
    return sorted(by.values(), key=lambda l: (order.get(l.key.runtime, 5), l.key.variant, l.key.steal, l.key.knob))


def break_even(medians: dict[float, float], tol: float = BREAK_EVEN_TOL) -> tuple[float, float, float] | None:
    """(break-even knob, best knob, best time): the smallest knob value whose median time is within
    `tol` of the line's best median, as study 002 section 5.1 reads its Fig 12."""
    pts = {x: t for x, t in medians.items() if not math.isnan(x)}
    if not pts:
        return None
    best_x = min(pts, key=lambda x: (pts[x], x))
    best = pts[best_x]
    be = min(x for x, t in pts.items() if t <= best * (1 + tol))
    return be, best_x, best


def cv(values: list[float]) -> float | None:
    """Coefficient of variation (stdev / mean) of repeated times."""
    v = [x for x in values if x is not None]
    if len(v) < 2:
        return None
    m = sum(v) / len(v)
    if m <= 0:
        return None
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) / m


@dataclass
class AdaptiveRow:
    runtime: str
    steal: str
    variant: str        # the untuned variant (adaptive)
    time: float
    best_label: str     # the best hand-tuned configuration of the same runtime (and steal policy)
    best_time: float

    @property
    def ratio(self) -> float:
        return self.time / self.best_time

    @property
    def meets(self) -> bool:
        return self.ratio <= ADAPTIVE_TARGET


def adaptive_vs_tuned(ls: list[Line]) -> list[AdaptiveRow]:
    """The untuned `adaptive` variant against the best hand-tuned point of the same runtime and steal
    policy (any task or worksharing variant, any grain/chunk)."""
    rows = []
    for ln in ls:
        if ln.key.variant != "adaptive":
            continue
        med = ln.medians()
        if not med:
            continue
        t = next(iter(med.values()))
        best: tuple[float, str] | None = None
        for other in ls:
            if other.key.runtime != ln.key.runtime or other.key.steal != ln.key.steal or not other.key.knob:
                continue
            for x, m in other.medians().items():
                lab = f"{other.key.variant} {other.key.knob} {x:g}"
                if best is None or m < best[0]:
                    best = (m, lab)
        if best is None and ln.key.steal:  # no tuned line under this policy: compare with any policy
            for other in ls:
                if other.key.runtime != ln.key.runtime or not other.key.knob:
                    continue
                for x, m in other.medians().items():
                    lab = f"{other.key.variant} {other.key.knob} {x:g} steal={other.key.steal}"
                    if best is None or m < best[0]:
                        best = (m, lab)
        if best is not None:
            rows.append(AdaptiveRow(ln.key.runtime, ln.key.steal, ln.key.variant, t, best[1], best[0]))
    return rows


# ---- flatloop ------------------------------------------------------------------------------------


def _norm_times(cell: Cell) -> list[float]:
    """Seconds per calibrated LCG step (time_s / spin_steps) of each ok run."""
    out = []
    for r in cell.ok_runs:
        k = r.stats.get("spin_steps")
        if r.time_s and isinstance(k, (int, float)) and k > 0:
            out.append(r.time_s / float(k))
    return out


@dataclass
class FlatRow:
    label: str
    runtime: str
    variant: str
    steal: str
    threads: int
    time: Summary | None
    efficiency: Summary | None
    vs_libomp: Summary | None  # libomp puretask-single time / this time (normalised)
    ns_per_iter: float | None
    affinity: float | None

    @property
    def target(self) -> str:
        """Only Plait puretask-single with a chunked steal policy carries the target."""
        if self.runtime != "plait" or self.variant != "puretask-single" or not self.steal.startswith(CHUNKED):
            return ""
        if self.efficiency is None:
            return "no data"
        ok_e = self.efficiency.median >= FLAT_EFF_TARGET
        ok_l = self.vs_libomp is not None and self.vs_libomp.median >= FLAT_VS_LIBOMP_TARGET
        if self.vs_libomp is None:
            return ("met" if ok_e else "missed") + " (efficiency; no libomp run)"
        if ok_e == ok_l:
            return "met" if ok_e else "missed"
        # one of the two parts: say which
        return f"efficiency {'met' if ok_e else 'missed'}, ×libomp {'met' if ok_l else 'missed'}"


def flatloop_rows(ds: Dataset) -> list[FlatRow]:
    rows: list[FlatRow] = []
    for base in ds.problems("flatloop"):
        sc = ds.cell("flatloop", base, "serial", 1)
        s_norm = Summary.of(_norm_times(sc)) if sc else None
        for P in ds.threads("flatloop"):
            ls = lines(ds, "flatloop", base, P)
            ref = None
            for ln in ls:
                if ln.key.runtime == "libomp" and ln.key.variant == "puretask-single":
                    c = ln.points.get(1.0)
                    if c is not None:
                        ref = Summary.of(_norm_times(c))
            for ln in ls:
                for x, c in sorted(ln.points.items(), key=lambda kv: (math.isnan(kv[0]), kv[0])):
                    nt = _norm_times(c)
                    eff = Summary.of(s_norm.median / (P * t) for t in nt) if s_norm and nt else None
                    vs = Summary.of(ref.median / t for t in nt) if ref and nt else None
                    npi = c.stat("ns_per_iter")
                    aff = c.stat("affinity")
                    lab = ln.key.label + ("" if math.isnan(x) else f" {ln.key.knob} {x:g}")
                    rows.append(FlatRow(lab, ln.key.runtime, ln.key.variant, ln.key.steal, P, c.time, eff, vs,
                                        npi.median if npi else None, aff.median if aff else None))
    return rows
