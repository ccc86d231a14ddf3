"""Study 001 numbers for the kernel suite (docs/kernels.md): spawn/join and steal cost (Table 1),
one-thread overhead over serial (Table 4), speedup vs threads per cut-off (Figs 5-9), and the
targets that hold Plait against the runtimes of study 001 (Podobas, Brorsson, Faxén: Wool-style
spawn/join and steal cost as in its Table 1, fine and coarse cut-offs as in its Figs 5-9).

Definitions (all from the measured, verified runs of one session):

* inlined spawn/join cost = (T_rt,1 - T_serial) / tasks, from ``fib`` with a task per call
  (cut-off 0) on one thread; tasks = the runtime's own ``tasks`` counter (else the serial run's);
  computed per run against the median serial time, then median [min-max]. Cycles = ns x GHz.
* 2-core steal cost: the ``steal`` binary's own ``steal_cost_ns`` / ``steal_cost_cycles`` at P=2.
* one-thread overhead = T_rt,1 / T_serial per run (same kernel and parameters), median [min-max].
* speedup = T_serial / T_P per run.

Cut-off classes: a kernel's ``cutoff`` parameter "coarse"/"fine" is its class; numeric cut-offs
of the same problem are ranked (fib: the larger is coarse; nqueens/health/floorplan count depth, so
the larger is fine); a lone numeric value is its own class ("0"); kernels without a cut-off
(sparselu, alignment) are "none" and count as both coarse and fine in the targets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

from .analysis import Cell, Dataset, Run, Summary, _num
from .registry import compiler_of, runtime_of
from .stats import median_ci

SUITE_KERNELS = ("nqueens", "sort", "fft", "strassen", "sparselu", "health", "floorplan", "alignment", "fib")
PEERS = ("tbb", "libomp", "gomp")
RUNTIME_ORDER = ("plait", "tbb", "libomp", "gomp")
# cut-offs that count recursion depth: a larger value spawns more (finer)
DEPTH_CUTOFF = {"nqueens", "health", "floorplan"}
NO_CUTOFF = {"sparselu", "alignment"}

SPAWN_TARGET_CYCLES = 20.0
OVERHEAD_TARGET = 1.05


def has_suite(ds: Dataset) -> bool:
    """Whether the session has study-001 data: a suite kernel, the steal benchmark, or fib with a cut-off
    (fib with a task per call alone, as in studies/quick.toml, keeps the study-000 report)."""
    ks = set(ds.kernels())
    if ks & (set(SUITE_KERNELS) - {"fib"}) or "steal" in ks:
        return True
    return any((_num(b.get("cutoff", 0)) or 0) != 0 for b in ds.problems("fib")) if "fib" in ks else False


def problem_label(base: dict, skip: tuple[str, ...] = ("cutoff",)) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(base.items()) if k not in skip) or "defaults"


def cutoff_class(ds: Dataset, kernel: str, base: dict) -> str:
    """'coarse', 'fine', 'none' (no cut-off parameter) or the numeric cut-off itself."""
    v = base.get("cutoff")
    if v is None:
        return "0" if kernel == "fib" else "none"
    if v in ("coarse", "fine"):
        return v
    x = _num(v)
    if x is None:
        return str(v)
    rest = {k: w for k, w in base.items() if k != "cutoff"}
    values = sorted({_num(b["cutoff"]) for b in ds.problems(kernel)
                     if "cutoff" in b and _num(b["cutoff"]) is not None
                     and {k: w for k, w in b.items() if k != "cutoff"} == rest})
    # fib's cut-off 0 (a task per call) is the spawn microbenchmark, not a granularity choice
    if kernel == "fib":
        values = [y for y in values if y > 0]
    if len(values) >= 2 and x in (values[0], values[-1]):
        low = "coarse" if kernel in DEPTH_CUTOFF else "fine"
        high = "fine" if kernel in DEPTH_CUTOFF else "coarse"
        return low if x == values[0] else high
    return str(v)


@dataclass
class Problem:
    kernel: str
    base: dict
    cut: str  # cut-off class

    @property
    def label(self) -> str:
        return problem_label(self.base)

    @property
    def cutoff_text(self) -> str:
        v = self.base.get("cutoff")
        if self.cut == "none":
            return "no cut-off"
        if v is not None and v != self.cut:
            return f"{self.cut} ({v})"
        return self.cut


def suite_problems(ds: Dataset) -> list[Problem]:
    """Every problem of the suite kernels (fib with cut-off 0 excluded: that is Table 1)."""
    out = []
    for k in SUITE_KERNELS:
        if k not in ds.kernels():
            continue
        for b in ds.problems(k):
            cut = cutoff_class(ds, k, b)
            if k == "fib" and cut == "0":
                continue
            out.append(Problem(k, b, cut))
    rank = {"coarse": 0, "fine": 1, "none": 2}
    return sorted(out, key=lambda p: (SUITE_KERNELS.index(p.kernel), rank.get(p.cut, 3), p.label))


def runtimes_of(ds: Dataset, kernel: str) -> list[str]:
    """Parallel series of a kernel, plait first, then tbb, libomp, gomp."""
    return ds.series(kernel, parallel_only=True)


def ratio_to_serial(ds: Dataset, cell: Cell | None) -> Summary | None:
    """T_P / T_serial per run (at P=1: the one-thread overhead), median [min-max]."""
    if cell is None:
        return None
    ts = ds.serial_time(cell.kernel, cell.base)
    if not ts:
        return None
    return Summary.of(r.time_s / ts for r in cell.ok_runs if r.time_s)


# ---- Table 1 ----------------------------------------------------------------------------------


def spawn_problem(ds: Dataset) -> dict | None:
    """The fib problem with a task per call (cut-off 0); the largest n when there are several."""
    if "fib" not in ds.kernels():
        return None
    cands = [b for b in ds.problems("fib") if (_num(b.get("cutoff", 0)) or 0) == 0]
    if not cands:
        return None
    return max(cands, key=lambda b: _num(b.get("n")) or 0)


@dataclass
class CostRow:
    series: str
    spawn_ns: Summary | None = None
    spawn_cycles: Summary | None = None
    spawn_cell: Cell | None = None
    tasks: float | None = None
    steal_ns: Summary | None = None
    steal_cycles: Summary | None = None
    steal_cell: Cell | None = None

    @property
    def unconverged(self) -> int:
        """Steal runs whose --auto calibration did not converge (stats.auto_converged == 0)."""
        if self.steal_cell is None:
            return 0
        return sum(1 for r in self.steal_cell.ok_runs if _num(r.stats.get("auto_converged")) == 0)

    @property
    def failed(self) -> int:
        return sum(len(c.failed_runs) for c in (self.spawn_cell, self.steal_cell) if c is not None)


def cpuinfo_ghz(path: str = "/proc/cpuinfo") -> float | None:
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    vals = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", text, flags=re.M)]
    return max(vals) / 1e3 if vals else None


def clock_ghz(ds: Dataset, fallback=cpuinfo_ghz) -> tuple[float | None, str]:
    """GHz for ns -> cycles: the steal binary's measured TSC rate (median over its ok runs in this
    session), else /proc/cpuinfo of the machine writing the report. Returns (GHz, where from)."""
    vals = [_num(r.stats.get("tsc_ghz")) for r in ds.runs if r.kernel == "steal" and r.ok]
    vals = [v for v in vals if v]
    if vals:
        s = Summary.of(vals)
        return s.median, f"TSC rate {s.median:.3f} GHz measured by the steal binary (median of {s.n} runs)"
    g = fallback()
    if g:
        return g, f"{g:.3f} GHz from /proc/cpuinfo ('cpu MHz') of the machine that wrote this report (no steal runs in the session)"
    return None, "no clock rate known (no steal runs, no /proc/cpuinfo): cycles not shown"


def cost_table(ds: Dataset, ghz: float | None) -> list[CostRow]:
    """Table 1: inlined spawn/join cost per runtime from fib (P=1, cut-off 0), and 2-core steal cost."""
    rows: dict[str, CostRow] = {}
    fb = spawn_problem(ds)
    if fb is not None:
        ts = ds.serial_time("fib", fb)
        serial_tasks = ds.stat_any("fib", fb, "tasks")
        for s in ds.series("fib", parallel_only=True):
            c = ds.cell("fib", fb, s, 1)
            if c is None:
                continue
            row = rows.setdefault(s, CostRow(s))
            row.spawn_cell = c
            per = []
            for r in c.ok_runs:
                tasks = _num(r.stats.get("tasks")) or serial_tasks
                if ts is not None and tasks and r.time_s:
                    per.append((r.time_s - ts) / tasks * 1e9)
            row.tasks = c.stat("tasks").median if c.stat("tasks") else serial_tasks
            row.spawn_ns = Summary.of(per)
            if row.spawn_ns is not None and ghz:
                row.spawn_cycles = Summary.of(v * ghz for v in per)
    if "steal" in ds.kernels():
        for b in ds.problems("steal"):
            for s in ds.series("steal", parallel_only=True):
                c = ds.cell("steal", b, s, 2)
                if c is None:
                    continue
                row = rows.setdefault(s, CostRow(s))
                if row.steal_cell is not None and row.steal_cell.ok_runs:
                    continue  # first problem with data wins
                row.steal_cell = c
                row.steal_ns = c.stat("steal_cost_ns")
                row.steal_cycles = c.stat("steal_cost_cycles")
    order = {s: i for i, s in enumerate(RUNTIME_ORDER)}
    return sorted(rows.values(), key=lambda r: (order.get(runtime_of(r.series), 9), r.series))


# ---- Table 4 and speedups -----------------------------------------------------------------------


@dataclass
class OverheadRow:
    problem: Problem
    t_serial: Summary | None
    serial_failed: int
    cells: dict[str, tuple[Summary | None, int]] = field(default_factory=dict)  # series -> (ratio, failed)

    def of(self, series: str) -> tuple[Summary | None, int] | None:
        """The series' ratio and its failed runs; None where the series has no run of the problem."""
        return self.cells.get(series)


def overhead_table(ds: Dataset) -> tuple[list[str], list[OverheadRow]]:
    """Table 4: T_rt,1 / T_serial per problem (kernel x cut-off) and runtime."""
    probs = suite_problems(ds)
    series: list[str] = []
    for p in probs:
        for s in runtimes_of(ds, p.kernel):
            if s not in series:
                series.append(s)
    order = {s: i for i, s in enumerate(RUNTIME_ORDER)}
    series.sort(key=lambda s: (order.get(runtime_of(s), 9), s))
    rows = []
    for p in probs:
        sc = ds.cell(p.kernel, p.base, "serial", 1)
        row = OverheadRow(p, sc.time if sc else None, len(sc.failed_runs) if sc else 0)
        for s in series:
            c = ds.cell(p.kernel, p.base, s, 1)
            if c is not None:
                row.cells[s] = (ratio_to_serial(ds, c), len(c.failed_runs))
        rows.append(row)
    return series, rows


def speedup_series(ds: Dataset, p: Problem) -> dict[str, list[tuple[int, Summary | None, int, int]]]:
    """Per parallel series: (threads, speedup summary, ok runs, failed runs) for every thread count."""
    out = {}
    for s in runtimes_of(ds, p.kernel):
        pts = []
        for t in ds.threads(p.kernel):
            c = ds.cell(p.kernel, p.base, s, t)
            if c is None:
                continue
            pts.append((t, ds.speedup(c), len(c.ok_runs), len(c.failed_runs)))
        out[s] = pts
    return out


# ---- targets -------------------------------------------------------------------------------------


@dataclass
class Target:
    target: str
    scope: str
    plait: str
    reference: str
    verdict: str  # "met" | "not met" | "no data"
    brief: str = ""  # the deciding numbers in one short line (terminal)
    # what the 95 % interval of the paired ratio says about the target: "within", "outside" or
    # "undecided" (the rounds cannot tell); "" without a paired ratio. Shown, never deciding.
    interval: str = ""

    @property
    def short(self) -> str:
        """Short name of the target for the terminal."""
        return SHORT.get(self.target, self.target)

    @property
    def met(self) -> bool | None:
        return {"met": True, "not met": False}.get(self.verdict)


SHORT: dict[str, str] = {}


def _fmt(s: Summary | None, unit: str = "", d: int = 1) -> str:
    if s is not None and unit == " s" and s.hi < 0.1:
        return f"{s.median * 1e3:.3f} ms [{s.lo * 1e3:.3f}–{s.hi * 1e3:.3f}]"
    return "–" if s is None else f"{s.median:.{d}f}{unit} [{s.lo:.{d}f}–{s.hi:.{d}f}]"


def sec(v: float) -> str:
    """Seconds, in ms below 0.1 s."""
    return f"{v * 1e3:.3f} ms" if v < 0.1 else f"{v:.4f} s"


def _failed(c: Cell | None) -> str:
    return f", {len(c.failed_runs)} FAILED" if c is not None and c.failed_runs else ""


@dataclass(frozen=True)
class Paired:
    """A per-round statistic with the median over rounds and its 95 % interval: Plait's run over a
    reference run of the same round (paired_ratio), or Plait's spawn cost in cycles
    (spawn_paired)."""

    median: float
    n: int
    ci: tuple[float, float] | None  # distribution-free 95 % interval for the median; None below 6 rounds

    def against(self, limit: float) -> str:
        """What the interval says about "ratio <= limit": "below", "above" or "undecided"."""
        if self.ci is None:
            return "undecided"
        if self.ci[1] <= limit:
            return "below"
        if self.ci[0] > limit:
            return "above"
        return "undecided"


def per_round(c: Cell, value: Callable[[Run], float | None] = lambda r: r.time_s) -> dict[int, float]:
    """Round -> the median of value(run) over the cell's verified runs of that round (positive
    values only: a time, or a cost in cycles)."""
    by: dict[int, list[float]] = {}
    for r in c.ok_runs:
        v = value(r)
        if v is not None and v > 0:
            by.setdefault(r.round, []).append(v)
    return {k: Summary.of(v).median for k, v in by.items()}


def paired_ratio(mine: Cell, refs: list[Cell],
                 value: Callable[[Run], float | None] = lambda r: r.time_s) -> Paired | None:
    """Median over rounds of mine's time over the fastest reference time of the same round (the
    targets pass one reference: the closest peer, or serial). `value` measures something else
    than the time (the steal target: each run's steal cost).

    Only rounds in which mine and every reference have a verified run count (a round's several
    runs of one cell: their median). Interleaved runs of one round lie close together in time, so
    this ratio is less exposed to slow spells of the host than the ratio of the medians. It comes
    with a 95 % interval for its median (median_ci): whether the rounds tell Plait apart from the
    reference at all. Shown next to the verdict; it does not decide it. None when no round has them
    all.
    """
    ratios = round_ratios(mine, refs, value)
    s = Summary.of(ratios)
    return None if s is None else Paired(s.median, s.n, median_ci(ratios))


def round_ratios(mine: Cell, refs: list[Cell],
                 value: Callable[[Run], float | None] = lambda r: r.time_s) -> list[float]:
    """Per round in which mine and every reference have verified runs: mine's value over the
    fastest reference's (paired_ratio's ratios, in round order)."""
    m = per_round(mine, value)
    rs = [per_round(c, value) for c in refs]
    rounds = [k for k in sorted(m) if rs and all(k in r for r in rs)]
    return [m[k] / min(r[k] for r in rs) for k in rounds]


def spawn_paired(ds: Dataset, pl: CostRow, ghz: float | None) -> Paired | None:
    """Plait's inlined spawn/join cost in cycles round by round: (its fib run - the same round's
    serial run) / tasks, with the 95 % interval of the median (None without a clock rate or
    without rounds that have both runs)."""
    fb = spawn_problem(ds)
    sc = ds.cell("fib", fb, "serial", 1) if fb is not None else None
    if not ghz or sc is None or pl.spawn_cell is None:
        return None
    serial = per_round(sc)
    by: dict[int, list[float]] = {}
    for r in pl.spawn_cell.ok_runs:
        tasks = _num(r.stats.get("tasks")) or pl.tasks
        if r.round in serial and tasks and r.time_s:
            by.setdefault(r.round, []).append((r.time_s - serial[r.round]) / tasks * 1e9 * ghz)
    vals = [Summary.of(v).median for v in by.values()]
    s = Summary.of(vals)
    return None if s is None else Paired(s.median, s.n, median_ci(vals))


def _paired_text(p: Paired | None, what: str, limit: float, mine: str = "plait") -> str:
    if p is None:
        return ""
    ci = "no 95 % interval below 6 rounds" if p.ci is None else f"95 % interval {p.ci[0]:.3f}–{p.ci[1]:.3f}"
    return f"; paired {mine} ×{p.median:.3f} over {what} ({p.n} rounds; {ci}: {_SAYS[p.against(limit)]})"


# what the paired interval says, in words (report) and in one word (terminal)
_SAYS = {"below": "within the target", "above": "outside the target", "undecided": "cannot tell"}
_SAYS_SHORT = {"below": "within", "above": "outside", "undecided": "undecided"}


class _Pairing(NamedTuple):
    """A fine-target comparison: one peer's cell and the Plait build it is compared with."""

    peer: str
    peer_cell: Cell
    mine: str  # "plait" or "plait@clang"
    mine_cell: Cell

    @property
    def mixed(self) -> bool:
        """Plait and the peer come from different compilers (no Plait build of the peer's)."""
        return compiler_of(self.peer) != compiler_of(self.mine)

    @property
    def ratio(self) -> float:
        """Plait's median time over the peer's (both cells have verified runs)."""
        return self.mine_cell.time.median / self.peer_cell.time.median


def serial_spread(ds: Dataset) -> list[tuple[str, float, int]]:
    """(kernel, slowest / fastest verified serial run, runs) per suite kernel with at least two
    serial runs, widest first. The serial binary has no scheduler, so its spread is the host's
    noise: a target closer than this to its limit cannot be told by medians of single runs."""
    out = []
    for p in suite_problems(ds):
        c = ds.cell(p.kernel, p.base, "serial", 1)
        t = c.time if c is not None else None
        if t is not None and t.n >= 2 and t.lo > 0 and all(k != p.kernel for k, _, _ in out):
            out.append((p.kernel, t.hi / t.lo, t.n))
    return sorted(out, key=lambda x: -x[1])


def _judged(probs: list[Problem], cut: str, target: str, out: list[Target]) -> list[tuple[Problem, str]]:
    """The problems a cut-off target judges (those of its cut-off class and those without a cut-off),
    each with the scope of its row; when there are none, the target's "no data" row goes into out."""
    judged = [p for p in probs if p.cut in (cut, "none")]
    if not judged:
        out.append(Target(target, "every kernel", f"no {cut} cut-off runs", "", "no data"))
    return [(p, f"{p.kernel} ({p.cutoff_text}; {p.label})") for p in judged]


def targets(ds: Dataset, ghz: float | None, costs: list[CostRow] | None = None) -> list[Target]:
    """The study-001 targets (spawn/join and steal cost, fine and coarse cut-offs), each with the
    numbers it was decided on. Medians decide."""
    costs = cost_table(ds, ghz) if costs is None else costs
    by = {c.series: c for c in costs}
    out: list[Target] = []

    # 1. inlined spawn/join <= 20 cycles
    t1 = f"Plait inlined spawn/join ≤ {SPAWN_TARGET_CYCLES:.0f} cycles"
    SHORT[t1] = f"spawn/join ≤ {SPAWN_TARGET_CYCLES:.0f} cycles"
    pl = by.get("plait")
    if pl is None or pl.spawn_cell is None:
        out.append(Target(t1, "fib, cut-off 0, P=1", "no fib run with cut-off 0 in this session",
                          "run studies/microbench.toml", "no data"))
    elif pl.spawn_cycles is None:
        why = "all runs FAILED" if pl.spawn_cell and not pl.spawn_cell.ok_runs else ("no clock rate" if pl.spawn_ns else "no serial time")
        out.append(Target(t1, "fib, cut-off 0, P=1", _fmt(pl.spawn_ns, " ns") + _failed(pl.spawn_cell), why, "no data"))
    else:
        v = pl.spawn_cycles.median
        pc = spawn_paired(ds, pl, ghz)
        ci = ("" if pc is None else f"; per round (Plait's run minus the same round's serial run) {pc.median:.1f} cycles, "
              + ("no 95 % interval below 6 rounds" if pc.ci is None else f"95 % interval {pc.ci[0]:.1f}–{pc.ci[1]:.1f}")
              + f" ({pc.n} rounds: {_SAYS[pc.against(SPAWN_TARGET_CYCLES)]})")
        out.append(Target(t1, "fib, cut-off 0, P=1", f"{v:.1f} cycles ({pl.spawn_ns.median:.2f} ns){_failed(pl.spawn_cell)}",
                          f"≤ {SPAWN_TARGET_CYCLES:.0f} cycles" + ci,
                          "met" if v <= SPAWN_TARGET_CYCLES and not pl.spawn_cell.failed_runs else "not met",
                          f"{v:.1f} cycles = {pl.spawn_ns.median:.2f} ns{_failed(pl.spawn_cell)}",
                          _SAYS_SHORT[pc.against(SPAWN_TARGET_CYCLES)] if pc else ""))

    # 2. 2-core steal cost lower than every peer's
    t2 = "Plait 2-core steal cost < every peer's"
    SHORT[t2] = "steal cost < every peer"
    peers = [c for c in costs if c.series != "plait" and c.steal_cell is not None]
    if pl is None or pl.steal_cell is None or not peers:
        out.append(Target(t2, "steal, P=2", "no plait steal run in this session" if pl is None or pl.steal_cell is None else "",
                          ("no peer steal runs; " if not peers else "") + "run studies/microbench.toml", "no data"))
    else:
        use_cycles = pl.steal_cycles is not None and all(c.steal_cycles is not None for c in peers if c.steal_cell.ok_runs)
        unit, get = (" cycles", lambda c: c.steal_cycles) if use_cycles else (" ns", lambda c: c.steal_ns)
        mine = get(pl)
        ref = "; ".join(f"{c.series} {_fmt(get(c), unit, 0)}" + _failed(c.steal_cell) for c in peers)
        if mine is None:
            out.append(Target(t2, "steal, P=2", "all runs FAILED" + _failed(pl.steal_cell), ref, "not met"))
        else:
            ok = all(get(c) is None or mine.median < get(c).median for c in peers) and not pl.steal_cell.failed_runs
            if all(get(c) is None for c in peers):
                out.append(Target(t2, "steal, P=2", _fmt(mine, unit, 0), ref + " (every peer failed)", "no data"))
            else:
                brief = f"plait {mine.median:.0f} vs " + ", ".join(
                    f"{c.series} {get(c).median:.0f}" if get(c) is not None else f"{c.series} FAILED" for c in peers) + unit
                # paired with the peer of the lowest median steal cost, round by round
                closest = min((c for c in peers if get(c) is not None), key=lambda c: get(c).median)
                stat = "steal_cost_cycles" if use_cycles else "steal_cost_ns"
                pr = paired_ratio(pl.steal_cell, [closest.steal_cell], lambda r: _num(r.stats.get(stat)))
                if pr is not None:
                    brief += f"; paired ×{pr.median:.2f} over {closest.series}"
                out.append(Target(t2, "steal, P=2", _fmt(mine, unit, 0) + _failed(pl.steal_cell),
                                  ref + _paired_text(pr, closest.series + "'s steal cost", 1.0),
                                  "met" if ok else "not met", brief + _failed(pl.steal_cell),
                                  _SAYS_SHORT[pr.against(1.0)] if pr else ""))

    probs = suite_problems(ds)
    # 3. fine cut-off: Plait's 2-thread time <= every peer's, every kernel, each peer against Plait
    # built by the same compiler when the session has that build (plait@clang for libomp): libomp
    # exists only as a clang build, and the compiler alone moved these kernels by more than the
    # runtimes differ (docs/performance.md, "The compiler"; the A/B is in docs/notes/2026-11-22-kernel-suite.md).
    # Without plait@clang runs libomp is compared with the gcc build, and the row says so.
    t3 = "fine cut-off: Plait 2-thread time ≤ every peer's (same compiler where built)"
    SHORT[t3] = "fine: P=2 time ≤ every peer"
    for p, scope in _judged(probs, "fine", t3, out):
        c = ds.cell(p.kernel, p.base, "plait", 2)
        if c is None:
            out.append(Target(t3, scope, "no plait run at P=2", "", "no data"))
            continue
        mine_by = {"gcc": ("plait", c)}
        cc = ds.cell(p.kernel, p.base, "plait@clang", 2)
        if cc is not None:
            mine_by["clang"] = ("plait@clang", cc)
        peer_cells = [(s, ds.cell(p.kernel, p.base, s, 2)) for s in runtimes_of(ds, p.kernel)
                      if runtime_of(s) in PEERS]
        peer_cells = [(s, pc) for s, pc in peer_cells if pc is not None]
        ok_peers = [(s, pc) for s, pc in peer_cells if pc.time is not None]
        plait_text = "; ".join(f"{n} {_fmt(m.time, ' s', 4) if m.time else 'all runs FAILED'}" + _failed(m)
                               for n, m in mine_by.values())
        ref = "; ".join(f"{s} {_fmt(pc.time, ' s', 4)}" + _failed(pc) for s, pc in peer_cells) or "no peer runs"
        if not ok_peers:
            out.append(Target(t3, scope, plait_text, ref, "no data"))
            continue
        # each peer against the Plait build of its compiler (the gcc build when there is none)
        pairs = [_Pairing(s, pc, *mine_by.get(compiler_of(s), mine_by["gcc"])) for s, pc in ok_peers]
        if any(x.mine_cell.time is None for x in pairs):
            out.append(Target(t3, scope, plait_text, ref, "not met"))
            continue
        ok = all(x.ratio <= 1 for x in pairs) and not any(x.mine_cell.failed_runs for x in pairs)
        # The deciding comparison: the peer closest to (or furthest ahead of) its Plait build. Paired
        # with that peer; every other peer's paired ratio is listed too. Not with the fastest peer
        # of each round: when the runtimes tie, the least of three noisy peer times lies below
        # Plait's in 3 rounds of 4, so that ratio reads as a loss where there is none.
        d = max(pairs, key=lambda x: x.ratio)
        pr = paired_ratio(d.mine_cell, [d.peer_cell])
        differ = " (compilers differ)"
        per_peer = "; ".join(f"{x.peer} vs {x.mine} ×{x.ratio:.3f}" + (differ if x.mixed else "") for x in pairs)
        others = [(x, paired_ratio(x.mine_cell, [x.peer_cell])) for x in pairs if x is not d]
        others_text = "".join(f"; paired {x.mine} ×{q.median:.3f} over {x.peer}" for x, q in others if q is not None)
        out.append(Target(t3, scope, plait_text,
                          f"closest {d.peer} ({per_peer}); " + ref + _paired_text(pr, d.peer, 1.0, d.mine) + others_text,
                          "met" if ok else "not met",
                          f"{d.mine} {sec(d.mine_cell.time.median)} vs {d.peer} {sec(d.peer_cell.time.median)} "
                          f"(×{d.ratio:.2f})" + (differ if d.mixed else "")
                          + (f"; paired ×{pr.median:.2f}" if pr else "") + _failed(d.mine_cell),
                          _SAYS_SHORT[pr.against(1.0)] if pr else ""))

    # 4. coarse cut-off: Plait one-thread overhead <= 5 %
    t4 = f"coarse cut-off: Plait 1-thread overhead ≤ {(OVERHEAD_TARGET - 1) * 100:.0f}% over serial"
    SHORT[t4] = f"coarse: 1-thread ≤ +{(OVERHEAD_TARGET - 1) * 100:.0f}%"
    for p, scope in _judged(probs, "coarse", t4, out):
        c = ds.cell(p.kernel, p.base, "plait", 1)
        sc = ds.cell(p.kernel, p.base, "serial", 1)
        r = ratio_to_serial(ds, c)
        ref = (f"serial {_fmt(sc.time, ' s', 4)}" + _failed(sc)) if sc is not None else "no serial run"
        if c is None:
            out.append(Target(t4, scope, "no plait run at P=1", ref, "no data"))
        elif r is None:
            out.append(Target(t4, scope, ("all runs FAILED" + _failed(c)) if not c.ok_runs else "–", ref,
                              "not met" if not c.ok_runs else "no data"))
        else:
            ok = r.median <= OVERHEAD_TARGET and not c.failed_runs
            pr = paired_ratio(c, [sc]) if sc is not None else None
            paired = f"; paired {(pr.median - 1) * 100:+.1f}%" if pr else ""
            out.append(Target(t4, scope, f"{(r.median - 1) * 100:+.1f}% (×{r.median:.3f} [{r.lo:.3f}–{r.hi:.3f}]){_failed(c)}",
                              ref + _paired_text(pr, "serial", OVERHEAD_TARGET), "met" if ok else "not met",
                              f"{(r.median - 1) * 100:+.1f}% (serial {sec(sc.time.median)}{paired})" + _failed(c)
                              if sc is not None and sc.time else f"{(r.median - 1) * 100:+.1f}%",
                              _SAYS_SHORT[pr.against(OVERHEAD_TARGET)] if pr else ""))
    return out
