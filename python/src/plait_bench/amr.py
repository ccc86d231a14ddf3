"""Study 003 (Rico et al., "On the Benefits of Tasking with OpenMP"): the miniAMR proxy numbers.

From the runs of the ``amr`` benchmark (bench/amr, docs/amr.md; studies/amr.toml, amr-ci.toml) of one
session: one bar of Fig. 2 per (case, runtime line, variant, threads), its height the variant's median
time / the median time of the same runtime's `loop` variant at the same P and case, with min and max
run over that median and the speedup over serial; per runtime line whether task-2 beats loop; and
per-thread utilisation when the runs carry it (the binaries do not today: utilisation comes from
traces, `plait-bench trace summary`). The report section that draws and tables them is report_amr.py.

A *case* is the run's shared parameters without `variant`; the variant is read from the run's
parameters (whether the study sweeps it for every runtime or gives it as a runtime-only parameter),
else from the binary's own `stats.variant`. Serial runs (every variant runs the same serial code)
are pooled per case and only give the serial time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .analysis import Dataset, MeasuredRuns, Run, Summary
from .study import WORKERS_TAG, workers_of

AMR_KERNELS = ("amr",)
VARIANTS = ("loop", "loop-dyn", "task-1", "task-2")
REFERENCE = "loop"
RUNTIME_ORDER = {"plait": 0, "gomp": 1, "libomp": 2, "tbb": 3, "mpi": 4}
# per-thread utilisation counters a binary might report: util_0, utilisation_t1, util_worker2, ...
_UTIL_RE = re.compile(r"^(?:util|utilisation|utilization)[_\-]?(?:t|w|thread|worker)?[_\-]?(\d+)$")


def has_amr(ds: Dataset) -> bool:
    return any(k in AMR_KERNELS for k in ds.kernels())


# ---- organising runs -----------------------------------------------------------------------------


def run_variant(r: Run) -> str:
    v = r.params.get("variant") or r.stats.get("variant")
    return str(v) if v else REFERENCE


def run_case(r: Run) -> tuple[tuple[str, str], ...]:
    """The parameter case of a run: its shared parameters without the variant."""
    return tuple(sorted((k, str(v)) for k, v in r.base.items() if k != "variant"))


def run_line(r: Run) -> str:
    """The runtime label of a run: the runtime plus runtime-only parameters other than the variant
    (e.g. a Plait steal policy); plain 'plait', 'gomp', 'libomp' in studies/amr.toml. MPI runs of
    several workers per rank keep their series' workers tag (``mpi[workers=2]``): a P of 2 ranks × 1
    and one of 1 rank × 2 are different lines."""
    extra = [f"{k}={r.params[k]}" for k in sorted(r.params) if k not in r.base and k != "variant"]
    if workers_of(r.series) > 1:
        extra.append(f"{WORKERS_TAG}={workers_of(r.series)}")
    return r.runtime + (f"[{','.join(extra)}]" if extra else "")


def case_label(case: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in case) or "defaults"


@dataclass
class AmrCell(MeasuredRuns):
    """The measured runs of one (case, runtime line, variant, threads)."""

    case: tuple[tuple[str, str], ...]
    line: str
    variant: str
    threads: int
    runs: list[Run] = field(default_factory=list)

    @property
    def ok_runs(self) -> list[Run]:
        """The ok runs that have a time."""
        return [r for r in self.runs if r.ok and r.time_s]

    @property
    def n_failed(self) -> int:
        return len(self.failed_runs)


@dataclass
class Bar:
    """One bar of Fig. 2 and one row of its table."""

    case: tuple[tuple[str, str], ...]
    line: str
    variant: str
    threads: int
    time: Summary | None          # absolute seconds
    ref: Summary | None           # the same line's loop variant (absolute)
    norm: Summary | None          # median / ref median, min / ref median, max / ref median
    speedup: Summary | None       # T_serial (median) / T, per run
    n_failed: int


def cells(ds: Dataset) -> dict[tuple, AmrCell]:
    """(case, line, variant, threads) -> cell, parallel runtimes only."""
    out: dict[tuple, AmrCell] = {}
    for r in ds.runs:
        if r.kernel not in AMR_KERNELS or r.runtime == "serial":
            continue
        key = (run_case(r), run_line(r), run_variant(r), r.threads)
        c = out.get(key)
        if c is None:
            c = out[key] = AmrCell(*key)
        c.runs.append(r)
    return out


def serial_cells(ds: Dataset) -> dict[tuple, AmrCell]:
    """case -> the pooled serial runs of that case (any variant: the serial code is the same)."""
    out: dict[tuple, AmrCell] = {}
    for r in ds.runs:
        if r.kernel in AMR_KERNELS and r.runtime == "serial":
            case = run_case(r)
            out.setdefault(case, AmrCell(case, "serial", "", 1)).runs.append(r)
    return out


def case_key(case: tuple) -> tuple:
    """Fewest parameters first (the Fig. 2 case of studies/amr.toml before its one-change cases)."""
    return (len(case), case)


def variant_key(v: str) -> tuple:
    return (VARIANTS.index(v) if v in VARIANTS else len(VARIANTS), v)


def line_key(line: str) -> tuple:
    return (RUNTIME_ORDER.get(line.split("[")[0], 9), line)


def normalise(cell: AmrCell, ref: AmrCell | None) -> Summary | None:
    """The cell's times over the median time of the reference (loop) cell: median, min and max."""
    t, r = cell.time, (ref.time if ref is not None else None)
    if t is None or r is None or r.median <= 0:
        return None
    return Summary(t.median / r.median, t.lo / r.median, t.hi / r.median, t.n)


def bars(ds: Dataset) -> list[Bar]:
    """Every (case, threads, line, variant) of the parallel runtimes, ordered case, P, runtime, variant."""
    cs = cells(ds)
    ser = serial_cells(ds)
    out = []
    for key in sorted(cs, key=lambda k: (case_key(k[0]), k[3], line_key(k[1]), variant_key(k[2]))):
        case, line, variant, P = key
        c = cs[key]
        ref = cs.get((case, line, REFERENCE, P))
        st = ser[case].time if case in ser else None
        sp = Summary.of(st.median / r.time_s for r in c.ok_runs) if st else None
        out.append(Bar(case, line, variant, P, c.time, ref.time if ref else None, normalise(c, ref), sp, c.n_failed))
    return out


@dataclass
class Verdict:
    case: tuple[tuple[str, str], ...]
    line: str
    threads: int
    text: str
    beats: bool | None  # None: no data


def task2_vs_loop(bs: list[Bar]) -> list[Verdict]:
    """Per (case, threads, runtime line): does task-2 beat loop (smaller median time)?"""
    out = []
    groups: dict[tuple, dict[str, Bar]] = {}
    for b in bs:
        groups.setdefault((b.case, b.threads, b.line), {})[b.variant] = b
    for (case, P, line), by in groups.items():
        t2, lp = by.get("task-2"), by.get(REFERENCE)
        if t2 is None or lp is None:
            continue
        if t2.time is None or lp.time is None:
            missing = " and ".join(v for v, b in (("task-2", t2), ("loop", lp)) if b.time is None)
            out.append(Verdict(case, line, P, f"**{line}**: no verdict (no successful {missing} run)", None))
            continue
        ratio = t2.time.median / lp.time.median
        beats = t2.time.median < lp.time.median
        if t2.time.hi < lp.time.lo:
            spread = "every task-2 run faster than every loop run"
        elif t2.time.lo > lp.time.hi:
            spread = "every task-2 run slower than every loop run"
        else:
            spread = "min–max ranges overlap"
        word = "beats loop" if beats else "does not beat loop"
        out.append(Verdict(case, line, P, f"**{line}**: task-2 {word} (median {ratio:.3f}× loop's; "
                                           f"{t2.time.n} vs {lp.time.n} runs, {spread})", beats))
    return out


def utilisation(ds: Dataset) -> dict[tuple, dict[int, Summary]]:
    """(case, line, variant, threads) -> {thread index: utilisation summary} for runs that report
    per-thread utilisation counters (values in [0, 1], or percentages above 1)."""
    out: dict[tuple, dict[int, Summary]] = {}
    for key, c in cells(ds).items():
        per: dict[int, list[float]] = {}
        for r in c.ok_runs:
            for name, v in r.stats.items():
                m = _UTIL_RE.match(name)
                if m and isinstance(v, (int, float)) and not isinstance(v, bool):
                    per.setdefault(int(m.group(1)), []).append(float(v) / 100 if v > 1 else float(v))
        if per:
            out[key] = {i: Summary.of(vs) for i, vs in sorted(per.items())}
    return out
