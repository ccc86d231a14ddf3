"""Study 002 (Giger 2021, "Task self-scheduling in OpenMP"): the loop-to-task report section.

Draws and tables the numbers of loops.py for the ``mandel`` and ``flatloop`` runs of one session
(bench/mandel, bench/flatloop; docs/loops.md):

  loops_bathtub_<kernel>.png    time vs grain size (log x), one line per runtime/variant/steal policy,
                                untuned variants (adaptive, ws-static) as horizontal lines (Figs 12, 16-17)
  loops_variance_<kernel>.png   spread of the repeated runs at the smallest grain, box plot (Fig 13)
  loops_affinity_<kernel>.png   task affinity vs grain (section 5.2)
Tables: break-even grain per line (smallest grain within 10 % of the line's best time), adaptive vs the
best hand-tuned grain (ratio, target <= 1.05), and the flatloop efficiency table with the target
(2 workers: >= 90 % parallel efficiency with chunked stealing, >= 2x faster than libomp single+task).
"""

from __future__ import annotations

from pathlib import Path

from .analysis import Dataset, Summary
from .loops import (ADAPTIVE_TARGET, BREAK_EVEN_TOL, FLAT_EFF_TARGET, FLAT_VS_LIBOMP_TARGET, LOOP_KERNELS, LineKey,
                    adaptive_vs_tuned, break_even, cv, flatloop_rows, lines)
from .markdown import md_table
from .plots import plain_log, save_captioned, series_style

# colour = runtime (plots.series_style), marker = variant, line style = Plait steal policy
VARIANT_MARKERS = {"puretask-single": "o", "puretask-parallel": "s", "taskloop-linear": "^",
                   "taskloop-recursive": "v", "ws-dynamic": "D", "ws-guided": "P"}
STEAL_LINESTYLES = {"one": "-", "": "-", "half": "--", "adaptive": ":"}


def _line_style(key: LineKey) -> dict:
    """The colour, marker and line style of a loop line."""
    st = series_style(key.runtime)
    return dict(color=st["color"], marker=VARIANT_MARKERS.get(key.variant, st["marker"]),
                linestyle=STEAL_LINESTYLES.get(key.steal, "-." if key.steal else "-"))


def _name_axes(ax, xlabel: str, ylabel: str, title: str) -> None:
    """Names the axes and the figure of a plot of loop lines, with their legend (small, two columns)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=6, ncol=2)


def _figure(fig, path: Path, note: str, alt: str, files: list[Path], md: list[str]) -> None:
    """Writes the figure with its note (save_captioned) and links it into the section."""
    files.append(save_captioned(fig, path, note))
    md.append(f"\n![{alt}](./{path.name})\n")


def _fmt(v: float | None, d: int = 3) -> str:
    return "–" if v is None else f"{v:.{d}f}"


def _sum(s: Summary | None, scale: float = 1.0, d: int = 3, unit: str = "") -> str:
    if s is None:
        return "–"
    return f"{s.median * scale:.{d}f}{unit} [{s.lo * scale:.{d}f}–{s.hi * scale:.{d}f}]"


def _base_str(base: dict) -> str:
    return ",".join(f"{a}={b}" for a, b in sorted(base.items())) or "defaults"


def loops_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    """Markdown and figures of study 002 for every loop kernel in the dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    md: list[str] = ["\n## Loop-to-task conversions (study 002, Giger 2021)\n",
                     "Variants and instrumentation: docs/loops.md. Times are medians with min–max bars; "
                     f"break-even grain = the smallest grain whose median is within {BREAK_EVEN_TOL:.0%} of "
                     "the line's best.\n"]
    files: list[Path] = []

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
                    style = _line_style(ln.key)
                    if not ln.key.knob:
                        med = ln.medians()
                        if med:
                            ax.axhline(next(iter(med.values())), color=style["color"], linewidth=1,
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
                plain_log(ax, "x")
                _name_axes(ax, "grain size (iterations per task; chunk for ws-dynamic/guided)", "time (s)",
                           f"{kernel} {_base_str(base)}: time vs grain, P={P}")
                _figure(fig, out_dir / f"loops_bathtub_{tag}.png",
                        caption(len(runs_here), n_fail), "bathtub", files, md)

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
                    md.append(md_table(["line", "break-even", "best grain", "best time (s)", "efficiency at best"], rows) + "\n")

                # adaptive vs tuned
                arows = adaptive_vs_tuned(ls)
                if arows:
                    md.append(f"\nUntuned `adaptive` vs the best hand-tuned grain of the same runtime and steal "
                              f"policy (target ratio ≤ {ADAPTIVE_TARGET}):\n")
                    md.append(md_table(["runtime", "steal", "adaptive (s)", "best tuned", "best (s)", "ratio", "target"],
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
                    _figure(fig, out_dir / f"loops_variance_{tag}.png",
                            caption(sum(len(b) for b in box), 0), "variance", files, md)
                if cvrows:
                    # spread vs grain, per line: smallest and largest grain
                    per: dict[str, list[tuple[float, float, int]]] = {}
                    for lab, x, v, n in cvrows:
                        per.setdefault(lab, []).append((x, v, n))
                    md.append("\nRun-to-run coefficient of variation (stdev / mean) at the smallest and the largest grain:\n")
                    md.append(md_table(["line", "smallest grain", "CV", "largest grain", "CV", "runs"],
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
                        ax.plot(xs, ys, label=ln.key.label, linewidth=1.2, markersize=4, **_line_style(ln.key))
                        drawn = True
                if drawn:
                    ax.set_xscale("log")
                    ax.set_ylim(-0.02, 1.02)
                    _name_axes(ax, "grain size", "affinity (consecutive chunks back to back on one worker)",
                               f"{kernel}: task affinity, P={P}")
                    _figure(fig, out_dir / f"loops_affinity_{tag}.png",
                            caption(len(runs_here), n_fail), "affinity", files, md)
                else:
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
        md.append(md_table(["configuration", "P", "time (s)", "efficiency", "× libomp single+task", "ns/iter", "affinity",
                       "target"],
                      [[r.label, str(r.threads), _sum(r.time, d=4), _sum(r.efficiency, 100, 1, "%"),
                        _sum(r.vs_libomp, d=2), _fmt(r.ns_per_iter, 0), _fmt(r.affinity, 3), r.target or ""]
                       for r in fl]) + "\n")
    return md, files
