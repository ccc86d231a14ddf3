"""MPI runs next to the single-process runtimes: the report's "Across ranks" section.

Every configuration of a kernel that has MPI runs is placed on a ranks × threads grid: an MPI run
at R ranks of T workers each (its P is R · T; what the binary reported in ``stats.ranks`` and
``stats.threads_per_rank``, else what its series says), a single-process runtime at one rank of P
threads. A *family* is a series without its workers tag (``mpi[hybrid=true,workers=2]`` belongs to
``mpi[hybrid=true]``), so one family spans the grid's shapes.

  ranks_<kernel>[_<n>].png  efficiency T_serial / (P · T) per shape (1×2, 2×1, 2×2, 4×1 ...),
                            one bar per family, whiskers = min and max run.

Tables: every configuration with its shape, time and efficiency; and, for each family with several
shapes at one P, the paired ratio of each shape's time over the one with the fewest ranks, round by
round (suite.paired_ratio), with its 95 % interval and whether it lies within ±10 % (the hybrid
target of docs/mpi.md: one rank of two workers and two ranks of one within 10 % of each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt

from .analysis import Cell, Dataset
from .markdown import md_table, pct_cell
from .plots import save_captioned, series_style
from .registry import MPI_RUNTIMES
from .study import WORKERS_TAG, ranks_of, workers_of
from .suite import Paired, paired_ratio

# Two shapes of one family are "within 10 %" when the 95 % interval of their paired time ratio
# lies inside [1/1.1, 1.1].
BALANCE = 1.10


@dataclass
class Placed:
    """A cell on the grid."""

    cell: Cell
    family: str
    ranks: int
    per_rank: int

    @property
    def shape(self) -> str:
        return f"{self.ranks} × {self.per_rank}"


def family_of(series: str) -> str:
    """The series without its workers tag: mpi[hybrid=true,workers=2] -> mpi[hybrid=true]."""
    head, _, inner = series.partition("[")
    if not inner:
        return series
    kept = [x for x in inner.rstrip("]").split(",") if x.partition("=")[0] != WORKERS_TAG]
    return head + (f"[{','.join(kept)}]" if kept else "")


def _reported(c: Cell, name: str) -> int | None:
    s = c.stat(name)
    return None if s is None or s.median < 1 else int(round(s.median))


def place(c: Cell) -> Placed:
    """The cell's ranks × threads: reported by the runs where they say, else from the series."""
    if c.runtime not in MPI_RUNTIMES:
        return Placed(c, c.series, 1, c.threads)
    ranks = _reported(c, "ranks") or ranks_of(c.runtime, c.series, c.threads) or 1
    per_rank = _reported(c, "threads_per_rank") or workers_of(c.series)
    return Placed(c, family_of(c.series), ranks, per_rank)


def has_ranks(ds: Dataset) -> bool:
    return any(c.runtime in MPI_RUNTIMES for c in ds.cells.values())


def _verdict(p: Paired) -> str:
    if p.ci is None:
        return "cannot tell (no 95 % interval below 6 rounds)"
    lo, hi = p.ci
    if 1 / BALANCE <= lo and hi <= BALANCE:
        return "within ±10 %"
    if hi < 1 / BALANCE or lo > BALANCE:
        return "outside ±10 %"
    return "cannot tell"


def shape_pairs(placed: list[Placed]) -> list[tuple[Placed, Placed, Paired | None]]:
    """For each family and P with several shapes: (the shape with the fewest ranks, another shape,
    the paired ratio of the other's time over the first's)."""
    out = []
    by: dict[tuple[str, int], list[Placed]] = {}
    for p in placed:
        by.setdefault((p.family, p.cell.threads), []).append(p)
    for key in sorted(by):
        ps = by[key]
        if len(ps) < 2:
            continue
        ps.sort(key=lambda p: p.ranks)
        for other in ps[1:]:
            out.append((ps[0], other, paired_ratio(other.cell, [ps[0].cell])))
    return out


def _draw(ds: Dataset, placed: list[Placed], title: str, path: Path, note: str) -> Path:
    shapes = sorted({(p.cell.threads, p.ranks, p.per_rank) for p in placed})
    families = sorted({p.family for p in placed}, key=lambda f: (f.split("[")[0] in MPI_RUNTIMES, f))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(shapes) + 2), 3.6))
    width = 0.8 / max(len(families), 1)
    for j, fam in enumerate(families):
        xs, meds, lo, hi = [], [], [], []
        for i, (P, r, t) in enumerate(shapes):
            p = next((q for q in placed if q.family == fam and (q.cell.threads, q.ranks, q.per_rank) == (P, r, t)), None)
            e = ds.efficiency(p.cell) if p is not None else None
            if e is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            meds.append(e.median * 100)
            lo.append(max(0.0, (e.median - e.lo) * 100))
            hi.append(max(0.0, (e.hi - e.median) * 100))
        if xs:
            ax.bar(xs, meds, width * 0.95, yerr=[lo, hi], capsize=2, label=fam,
                   color=series_style(fam).get("color"), alpha=1.0 if fam.split("[")[0] in MPI_RUNTIMES else 0.55,
                   hatch="" if fam.split("[")[0] in MPI_RUNTIMES else "//")
    ax.axhline(100, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([f"{r}×{t}\nP={P}" for P, r, t in shapes])
    ax.set_xlabel("ranks × threads per rank")
    ax.set_ylabel("efficiency (%)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return save_captioned(fig, path, note)


def ranks_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    """The markdown and figures of the section (nothing without MPI runs)."""
    if not has_ranks(ds):
        return [], []
    md = ["\n## Across ranks: ranks × threads\n",
          "An MPI run is R ranks × T threads per rank (P = R · T processing elements); a single-process runtime at "
          "P threads is 1 × P. Efficiency = T_serial / (P · T_P), medians with min–max. Shapes of one family at one "
          "P are compared round by round: the time of the shape with more ranks over the one with fewer, with the "
          "95 % interval of the median ratio.\n"]
    written: list[Path] = []
    kernels = sorted({c.kernel for c in ds.cells.values() if c.runtime in MPI_RUNTIMES})
    for k in kernels:
        for n, base in enumerate(ds.problems(k)):
            cells = [c for c in ds.cells_for(k, base) if c.runtime != "serial"]
            if not any(c.runtime in MPI_RUNTIMES for c in cells):
                continue
            placed = sorted((place(c) for c in cells),
                            key=lambda p: (p.cell.threads, p.cell.runtime not in MPI_RUNTIMES, p.ranks, p.family))
            label = " ".join(f"{a}={b}" for a, b in sorted(base.items()))
            md.append(f"\n### {k} {label}\n")
            rows = [[p.cell.series, str(p.cell.threads), p.shape,
                     "–" if p.cell.time is None else f"{p.cell.time.median:.4f} [{p.cell.time.lo:.4f}–{p.cell.time.hi:.4f}]",
                     pct_cell(ds.efficiency(p.cell)), str(len(p.cell.failed_runs))] for p in placed]
            md.append(md_table(["runtime", "P", "ranks × threads", "time (s)", "efficiency", "failed"], rows) + "\n")
            pairs = shape_pairs(placed)
            if pairs:
                prow = []
                for a, b, pr in pairs:
                    ci = "–" if pr is None or pr.ci is None else f"{pr.ci[0]:.3f}–{pr.ci[1]:.3f}"
                    prow.append([a.family, str(a.cell.threads), f"{b.shape} over {a.shape}",
                                 "–" if pr is None else f"×{pr.median:.3f}", "–" if pr is None else str(pr.n), ci,
                                 "no paired rounds" if pr is None else _verdict(pr)])
                md.append("\n" + md_table(["family", "P", "shapes", "paired time ratio", "rounds", "95 % interval",
                                           "verdict"], prow) + "\n")
            if ds.serial_time(k, base) is not None:
                name = f"ranks_{k}.png" if n == 0 else f"ranks_{k}_{n}.png"
                n_ok = sum(len(p.cell.ok_runs) for p in placed)
                n_failed = sum(len(p.cell.failed_runs) for p in placed)
                written.append(_draw(ds, placed, f"{k} {label}: efficiency by ranks × threads", out_dir / name,
                                     caption(n_ok, n_failed)))
                md.append(f"\n![{k} ranks × threads]({name})\n")
    return md, written
