"""Study 002 (Giger 2021, "Task self-scheduling in OpenMP"): the loop-to-task report section.

From the runs of the ``mandel`` and ``flatloop`` benchmarks (bench/mandel, bench/flatloop; docs/loops.md)
of one session:

  loops_bathtub_<kernel>.png    time vs grain size (log x), one line per runtime/variant/steal policy,
                                untuned variants (adaptive, ws-static) as horizontal lines (Figs 12, 16-17)
  loops_variance_<kernel>.png   spread of the repeated runs at the smallest grain, box plot (Fig 13)
  loops_affinity_<kernel>.png   task affinity vs grain (section 5.2)
Tables: break-even grain per line (smallest grain within 10 % of the line's best time), adaptive vs the
best hand-tuned grain (ratio, target <= 1.05), and the flatloop efficiency table with the target
(2 workers: >= 90 % parallel efficiency with chunked stealing, >= 2x faster than libomp single+task).

A "line" is (runtime, variant, steal policy); its knob is --grain (task variants), --chunk (ws-dynamic,
ws-guided) or --num-tasks. The variant/grain/steal parameters are runtime-only parameters in the study
files, so every line of a problem shares one serial baseline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Cell, Dataset, Summary

LOOP_KERNELS = ("mandel", "flatloop")
KNOBS = ("grain", "chunk", "num-tasks")
UNTUNED = ("adaptive", "ws-static")
BREAK_EVEN_TOL = 0.10
ADAPTIVE_TARGET = 1.05
FLAT_EFF_TARGET = 0.90
FLAT_VS_LIBOMP_TARGET = 2.0
CHUNKED = ("chunk", "half", "adaptive")  # steal policies that take more than one task
# colour = runtime (report._style), marker = variant, line style = Plait steal policy
VARIANT_MARKERS = {"puretask-single": "o", "puretask-parallel": "s", "taskloop-linear": "^",
                   "taskloop-recursive": "v", "ws-dynamic": "D", "ws-guided": "P"}


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


# ---- the report section --------------------------------------------------------------------------


def _fmt(v: float | None, d: int = 3) -> str:
    return "–" if v is None else f"{v:.{d}f}"


def _sum(s: Summary | None, scale: float = 1.0, d: int = 3, unit: str = "") -> str:
    if s is None:
        return "–"
    return f"{s.median * scale:.{d}f}{unit} [{s.lo * scale:.{d}f}–{s.hi * scale:.{d}f}]"


def _md(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _base_str(base: dict) -> str:
    return ",".join(f"{a}={b}" for a, b in sorted(base.items())) or "defaults"


def loops_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    """Markdown and figures of study 002 for every loop kernel in the dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report import _plain_log, _style

    md: list[str] = ["\n## Loop-to-task conversions (study 002, Giger 2021)\n",
                     "Variants and instrumentation: docs/loops.md. Times are medians with min–max bars; "
                     f"break-even grain = the smallest grain whose median is within {BREAK_EVEN_TOL:.0%} of "
                     "the line's best.\n"]
    files: list[Path] = []
    linestyles = {"one": "-", "": "-", "half": "--", "adaptive": ":"}

    for kernel in [k for k in LOOP_KERNELS if k in ds.kernels()]:
        for base in ds.problems(kernel):
            for P in ds.threads(kernel):
                ls = lines(ds, kernel, base, P)
                if not ls:
                    continue
                tag = f"{kernel}_{'_'.join(f'{a}-{b}' for a, b in sorted(base.items()))}_p{P}".replace("/", "-")
                runs_here = [r for ln in ls for c in ln.points.values() for r in c.runs]
                n_fail = sum(1 for r in runs_here if not r.ok)
                md.append(f"\n### {kernel} ({_base_str(base)}), P = {P}\n")
                ts = ds.serial_time(kernel, base)
                if ts is not None:
                    md.append(f"Serial time: {ts:.4f} s.\n")

                # bathtub
                fig, ax = plt.subplots(figsize=(8, 5))
                for ln in ls:
                    st = _style(ln.key.runtime)
                    style = dict(color=st["color"], marker=VARIANT_MARKERS.get(ln.key.variant, st["marker"]),
                                 linestyle=linestyles.get(ln.key.steal, "-." if ln.key.steal else "-"))
                    if not ln.key.knob:
                        med = ln.medians()
                        if med:
                            ax.axhline(next(iter(med.values())), color=st["color"], linewidth=1,
                                       linestyle=(0, (1, 3)) if ln.key.variant == "ws-static" else (0, (6, 2)),
                                       label=ln.key.label)
                        continue
                    xs = sorted(x for x, c in ln.points.items() if c.time is not None)
                    if not xs:
                        continue
                    sums = [ln.points[x].time for x in xs]
                    ax.errorbar(xs, [s.median for s in sums],
                                yerr=[[s.median - s.lo for s in sums], [s.hi - s.median for s in sums]],
                                label=ln.key.label, capsize=2, linewidth=1.2, markersize=4, **style)
                if ts is not None:
                    ax.axhline(ts / P, color="black", linewidth=0.8, linestyle="--", label=f"serial / {P}")
                ax.set_xscale("log")
                ax.set_yscale("log")
                _plain_log(ax, "x")
                ax.set_xlabel("grain size (iterations per task; chunk for ws-dynamic/guided)")
                ax.set_ylabel("time (s)")
                ax.set_title(f"{kernel} {_base_str(base)}: time vs grain, P={P}")
                ax.legend(fontsize=6, ncol=2)
                fig.text(0.01, 0.005, caption(len(runs_here), n_fail), fontsize=6)
                fig.tight_layout(rect=(0, 0.03, 1, 1))
                p = out_dir / f"loops_bathtub_{tag}.png"
                fig.savefig(p, dpi=120)
                plt.close(fig)
                files.append(p)
                md.append(f"\n![bathtub](./{p.name})\n")

                # break-even table
                rows = []
                for ln in ls:
                    if not ln.key.knob:
                        continue
                    be = break_even(ln.medians())
                    if be is None:
                        continue
                    rows.append([ln.key.label, f"{be[0]:g}", f"{be[1]:g}", f"{be[2]:.4f}",
                                 f"{ts / (P * be[2]) * 100:.1f}%" if ts else "–"])
                if rows:
                    md.append("\nBreak-even grain per line:\n")
                    md.append(_md(["line", "break-even", "best grain", "best time (s)", "efficiency at best"], rows) + "\n")

                # adaptive vs tuned
                arows = adaptive_vs_tuned(ls)
                if arows:
                    md.append(f"\nUntuned `adaptive` vs the best hand-tuned grain of the same runtime and steal "
                              f"policy (target ratio ≤ {ADAPTIVE_TARGET}):\n")
                    md.append(_md(["runtime", "steal", "adaptive (s)", "best tuned", "best (s)", "ratio", "target"],
                                  [[a.runtime, a.steal or "–", f"{a.time:.4f}", a.best_label, f"{a.best_time:.4f}",
                                    f"{a.ratio:.3f}", "met" if a.meets else "missed"] for a in arows]) + "\n")

                # variance at the smallest grain (Fig 13)
                box, labels, cvrows = [], [], []
                for ln in ls:
                    if not ln.key.knob:
                        continue
                    x0 = min(ln.points)
                    c = ln.points[x0]
                    t = [r.time_s for r in c.ok_runs if r.time_s]
                    if t:
                        box.append(t)
                        labels.append(f"{ln.key.label} {ln.key.knob} {x0:g}")
                    # CV at every knob value
                    for x, cc in sorted(ln.points.items()):
                        v = cv([r.time_s for r in cc.ok_runs if r.time_s])
                        if v is not None:
                            cvrows.append((ln.key.label, x, v, len(cc.ok_runs)))
                if box:
                    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(box) + 2), 5))
                    ax.boxplot(box)
                    ax.set_xticks(range(1, len(labels) + 1), labels)
                    ax.set_ylabel("time (s)")
                    ax.set_title(f"{kernel}: run-to-run spread at the smallest grain, P={P}")
                    plt.setp(ax.get_xticklabels(), rotation=70, ha="right", fontsize=6)
                    fig.text(0.01, 0.005, caption(sum(len(b) for b in box), 0), fontsize=6)
                    fig.tight_layout(rect=(0, 0.03, 1, 1))
                    p = out_dir / f"loops_variance_{tag}.png"
                    fig.savefig(p, dpi=120)
                    plt.close(fig)
                    files.append(p)
                    md.append(f"\n![variance](./{p.name})\n")
                if cvrows:
                    # spread vs grain, per line: smallest and largest grain
                    per: dict[str, list[tuple[float, float, int]]] = {}
                    for lab, x, v, n in cvrows:
                        per.setdefault(lab, []).append((x, v, n))
                    md.append("\nRun-to-run coefficient of variation (stdev / mean) at the smallest and the largest grain:\n")
                    md.append(_md(["line", "smallest grain", "CV", "largest grain", "CV", "runs"],
                                  [[lab, f"{v[0][0]:g}", f"{v[0][1] * 100:.1f}%", f"{v[-1][0]:g}", f"{v[-1][1] * 100:.1f}%",
                                    str(v[0][2])] for lab, v in per.items()]) + "\n")

                # affinity
                fig, ax = plt.subplots(figsize=(8, 4.5))
                drawn = False
                for ln in ls:
                    if not ln.key.knob:
                        continue
                    xs, ys = [], []
                    for x in sorted(ln.points):
                        a = ln.points[x].stat("affinity")
                        if a is not None:
                            xs.append(x)
                            ys.append(a.median)
                    if xs:
                        st = _style(ln.key.runtime)
                        ax.plot(xs, ys, label=ln.key.label, color=st["color"],
                                marker=VARIANT_MARKERS.get(ln.key.variant, st["marker"]),
                                linestyle=linestyles.get(ln.key.steal, "-." if ln.key.steal else "-"), linewidth=1.2,
                                markersize=4)
                        drawn = True
                if drawn:
                    ax.set_xscale("log")
                    ax.set_ylim(-0.02, 1.02)
                    ax.set_xlabel("grain size")
                    ax.set_ylabel("affinity (consecutive chunks back to back on one worker)")
                    ax.set_title(f"{kernel}: task affinity, P={P}")
                    ax.legend(fontsize=6, ncol=2)
                    fig.text(0.01, 0.005, caption(len(runs_here), n_fail), fontsize=6)
                    fig.tight_layout(rect=(0, 0.03, 1, 1))
                    p = out_dir / f"loops_affinity_{tag}.png"
                    fig.savefig(p, dpi=120)
                    files.append(p)
                    md.append(f"\n![affinity](./{p.name})\n")
                plt.close(fig)

    fl = flatloop_rows(ds)
    if fl:
        md.append("\n### flatloop: the target table\n")
        md.append(
            f"Efficiency = (T_serial / K_serial) / (P · T_P / K_P), K = the calibrated LCG steps per iteration of each "
            f"process; ×libomp = libomp puretask-single time / this time (both normalised). Target (Plait "
            f"puretask-single with a chunked steal policy): efficiency ≥ {FLAT_EFF_TARGET:.0%} and ≥ "
            f"{FLAT_VS_LIBOMP_TARGET:g}× libomp.\n"
        )
        md.append(_md(["configuration", "P", "time (s)", "efficiency", "× libomp single+task", "ns/iter", "affinity",
                       "target"],
                      [[r.label, str(r.threads), _sum(r.time, d=4), _sum(r.efficiency, 100, 1, "%"),
                        _sum(r.vs_libomp, d=2), _fmt(r.ns_per_iter, 0), _fmt(r.affinity, 3), r.target or ""]
                       for r in fl]) + "\n")
    return md, files
