"""Study 003 (Rico et al., "On the Benefits of Tasking with OpenMP"): the miniAMR proxy report section.

From the runs of the ``amr`` benchmark (bench/amr, docs/amr.md; studies/amr.toml, amr-ci.toml) of one
session:

  amr_fig2_p<P>.png   Fig. 2: a grouped bar chart per thread count P, one panel per parameter case,
                      one group per runtime, one bar per variant (loop, loop-dyn, task-1, task-2);
                      height = the variant's median time / the median time of the same runtime's
                      `loop` variant at the same P and case, whiskers = min and max run / that median.
Tables: the same normalised numbers with the absolute medians [min–max] and the speedup over serial,
a line per runtime saying whether task-2 beats loop, and per-thread utilisation when the runs carry
it (the binaries do not today: utilisation comes from traces, `plait-bench trace summary`).

A *case* is the run's shared parameters without `variant`; the variant is read from the run's
parameters (whether the study sweeps it for every runtime or gives it as a runtime-only parameter),
else from the binary's own `stats.variant`. Serial runs (every variant runs the same serial code)
are pooled per case and only give the serial time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Dataset, Run, Summary
from .runner import FAILED_STATUSES

AMR_KERNELS = ("amr",)
VARIANTS = ("loop", "loop-dyn", "task-1", "task-2")
REFERENCE = "loop"
RUNTIME_ORDER = {"plait": 0, "gomp": 1, "libomp": 2, "tbb": 3}
VARIANT_COLORS = {"loop": "#4c72b0", "loop-dyn": "#8fb3e0", "task-1": "#dd8452", "task-2": "#c44e52"}
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
    (e.g. a Plait steal policy); plain 'plait', 'gomp', 'libomp' in studies/amr.toml."""
    extra = [f"{k}={r.params[k]}" for k in sorted(r.params) if k not in r.base and k != "variant"]
    return r.runtime + (f"[{','.join(extra)}]" if extra else "")


def case_label(case: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in case) or "defaults"


@dataclass
class AmrCell:
    """The measured runs of one (case, runtime line, variant, threads)."""

    case: tuple[tuple[str, str], ...]
    line: str
    variant: str
    threads: int
    runs: list[Run] = field(default_factory=list)

    @property
    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if r.ok and r.time_s]

    @property
    def n_failed(self) -> int:
        return sum(1 for r in self.runs if r.status in FAILED_STATUSES)

    @property
    def time(self) -> Summary | None:
        return Summary.of(r.time_s for r in self.ok_runs)


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


def _case_key(case: tuple) -> tuple:
    """Fewest parameters first (the Fig. 2 case of studies/amr.toml before its one-change cases)."""
    return (len(case), case)


def _variant_key(v: str) -> tuple:
    return (VARIANTS.index(v) if v in VARIANTS else len(VARIANTS), v)


def _line_key(line: str) -> tuple:
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
    for key in sorted(cs, key=lambda k: (_case_key(k[0]), k[3], _line_key(k[1]), _variant_key(k[2]))):
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


# ---- the report section --------------------------------------------------------------------------


def _md(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out)


def _sum(s: Summary | None, d: int = 3, unit: str = "") -> str:
    return "–" if s is None else f"{s.median:.{d}f}{unit} [{s.lo:.{d}f}–{s.hi:.{d}f}]"


def _draw_panel(ax, bs: list[Bar], title: str) -> None:
    lines = sorted({b.line for b in bs}, key=_line_key)
    variants = sorted({b.variant for b in bs}, key=_variant_key)
    width = 0.8 / max(len(variants), 1)
    by = {(b.line, b.variant): b for b in bs}
    top = 1.0
    labelled: set[str] = set()
    failed_label = [False]
    for gi, line in enumerate(lines):
        for vi, v in enumerate(variants):
            b = by.get((line, v))
            if b is None:
                continue
            x = gi - 0.4 + width * (vi + 0.5)
            if b.norm is not None:
                n = b.norm
                ax.bar(x, n.median, width * 0.92, color=VARIANT_COLORS.get(v, "grey"), edgecolor="black",
                       linewidth=0.5, label=None if v in labelled else v)
                labelled.add(v)
                ax.errorbar([x], [n.median], yerr=[[n.median - n.lo], [n.hi - n.median]], color="black",
                            capsize=2, linewidth=0.9)
                ax.annotate(f"{n.median:.2f}", (x, n.hi), textcoords="offset points", xytext=(0, 2),
                            ha="center", fontsize=6)
                top = max(top, n.hi)
            elif b.time is not None:  # no loop reference to normalise by
                ax.annotate("no loop\nref.", (x, 0.02), ha="center", fontsize=5, rotation=90)
            if b.n_failed:
                ax.scatter([x], [0], marker="x", color="red", s=40, zorder=5,
                           label=None if failed_label[0] else "failed run(s)")
                failed_label[0] = True
                ax.annotate(f"{b.n_failed} failed", (x, 0), textcoords="offset points", xytext=(0, 6),
                            ha="center", fontsize=6, color="red", rotation=90)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(range(len(lines)), lines)
    ax.set_xlim(-0.6, len(lines) - 0.4)
    ax.set_ylim(0, top * 1.32)
    ax.set_ylabel("time / same runtime's loop time")
    ax.set_title(title, fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=6, loc="upper center", ncol=5, frameon=False)


def amr_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    """Markdown and figures of study 003 (Fig. 2 and its tables) for the amr runs in the dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    md: list[str] = [
        "\n## miniAMR proxy: loops vs tasks (study 003, Rico et al., Fig. 2)\n",
        "Variants and model: docs/amr.md. Normalised time = a variant's median time / the median time of "
        "the same runtime's `loop` variant at the same thread count and parameter case (below 1: faster than "
        "loop); whiskers and [min–max] = the fastest and slowest run over that same loop median. Speedup = "
        "median serial time of the case / each run's time.\n",
    ]
    files: list[Path] = []
    bs = bars(ds)
    ser = serial_cells(ds)
    verdicts = task2_vs_loop(bs)
    amr_runs = [r for r in ds.runs if r.kernel in AMR_KERNELS]

    threads = sorted({b.threads for b in bs})
    for P in threads:
        pb = [b for b in bs if b.threads == P]
        cases = sorted({b.case for b in pb}, key=_case_key)
        ncol = min(len(cases), 2)
        nrow = (len(cases) + ncol - 1) // ncol
        n_lines = max(len({b.line for b in pb if b.case == c}) for c in cases)
        fig, axes = plt.subplots(nrow, ncol, figsize=(max(5.0, 1.9 * n_lines + 1.2) * ncol, 3.8 * nrow + 0.4),
                                 squeeze=False)
        for i, case in enumerate(cases):
            _draw_panel(axes[i // ncol][i % ncol], [b for b in pb if b.case == case], case_label(case))
        for j in range(len(cases), nrow * ncol):
            axes[j // ncol][j % ncol].set_visible(False)
        runs_here = [r for r in amr_runs if r.runtime != "serial" and r.threads == P]
        n_fail = sum(1 for r in runs_here if r.status in FAILED_STATUSES)
        n_ok = sum(1 for r in runs_here if r.ok)
        fig.suptitle(f"amr (miniAMR proxy): variants normalised to loop, P = {P}", fontsize=10)
        fig.text(0.01, 0.005, caption(n_ok, n_fail), fontsize=6)
        fig.tight_layout(rect=(0, 0.03, 1, 0.97))
        p = out_dir / f"amr_fig2_p{P}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        files.append(p)

        md.append(f"\n### P = {P}\n")
        md.append(f"![amr_fig2_p{P}](./{p.name})\n\n*{caption(n_ok, n_fail)}.*\n")
        for case in cases:
            md.append(f"\n#### {case_label(case)}, P = {P}\n")
            sc = ser.get(case)
            st = sc.time if sc else None
            if sc is not None:
                md.append(f"Serial: {_sum(st, 4, ' s')} over {len(sc.ok_runs)} run(s)"
                          + (f", **{sc.n_failed} FAILED**" if sc.n_failed else "") + ".\n")
            rows = []
            for b in (b for b in pb if b.case == case):
                rows.append([b.line, b.variant, _sum(b.norm), _sum(b.time, 4), _sum(b.speedup, 2),
                             "–" if b.time is None else str(b.time.n),
                             f"**{b.n_failed}**" if b.n_failed else "0"])
            md.append(_md(["runtime", "variant", "time / loop", "time (s)", "speedup over serial", "ok runs",
                           "failed"], rows) + "\n")
            vs = [v for v in verdicts if v.case == case and v.threads == P]
            if vs:
                md.append("\nTask-2 vs loop:\n\n" + "\n".join(f"- {v.text}" for v in vs) + "\n")

    if ser and not bs:
        md.append("\nOnly serial runs: nothing to normalise.\n")

    util = utilisation(ds)
    if util:
        md.append("\n### Per-thread utilisation (median [min–max] over runs)\n")
        rows = []
        for (case, line, variant, P), per in sorted(util.items(), key=lambda kv: (_case_key(kv[0][0]), kv[0][3],
                                                                                 _line_key(kv[0][1]),
                                                                                 _variant_key(kv[0][2]))):
            rows.append([case_label(case), line, variant, str(P),
                         "; ".join(f"t{i}: {s.median * 100:.1f}% [{s.lo * 100:.1f}–{s.hi * 100:.1f}]"
                                   for i, s in per.items())])
        md.append(_md(["case", "runtime", "variant", "P", "utilisation per thread"], rows) + "\n")
    return md, files
