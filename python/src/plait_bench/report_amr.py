"""Study 003 (Rico et al., "On the Benefits of Tasking with OpenMP"): the miniAMR proxy report section.

Draws and tables the numbers of amr.py for the ``amr`` runs of one session (bench/amr, docs/amr.md;
studies/amr.toml, amr-ci.toml):

  amr_fig2_p<P>.png   Fig. 2: a grouped bar chart per thread count P, one panel per parameter case,
                      one group per runtime, one bar per variant (loop, loop-dyn, task-1, task-2);
                      height = the variant's median time / the median time of the same runtime's
                      `loop` variant at the same P and case, whiskers = min and max run / that median.
Tables: the same normalised numbers with the absolute medians [min–max] and the speedup over serial,
a line per runtime saying whether task-2 beats loop, and per-thread utilisation when the runs carry
it (the binaries do not today: utilisation comes from traces, `plait-bench trace summary`).
"""

from __future__ import annotations

from pathlib import Path

from .amr import (AMR_KERNELS, Bar, bars, case_key, case_label, line_key, serial_cells, task2_vs_loop, utilisation,
                  variant_key)
from .analysis import Dataset, Summary
from .markdown import md_table
from .plots import save_captioned
from .runner import FAILED_STATUSES

VARIANT_COLORS = {"loop": "#4c72b0", "loop-dyn": "#8fb3e0", "task-1": "#dd8452", "task-2": "#c44e52"}


def _sum(s: Summary | None, d: int = 3, unit: str = "") -> str:
    return "–" if s is None else f"{s.median:.{d}f}{unit} [{s.lo:.{d}f}–{s.hi:.{d}f}]"


def _draw_panel(ax, bs: list[Bar], title: str) -> None:
    lines = sorted({b.line for b in bs}, key=line_key)
    variants = sorted({b.variant for b in bs}, key=variant_key)
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
        cases = sorted({b.case for b in pb}, key=case_key)
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
        p = save_captioned(fig, out_dir / f"amr_fig2_p{P}.png", caption(n_ok, n_fail), top=0.97, dpi=110)
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
            md.append(md_table(["runtime", "variant", "time / loop", "time (s)", "speedup over serial", "ok runs",
                                "failed"], rows, escape=True) + "\n")
            vs = [v for v in verdicts if v.case == case and v.threads == P]
            if vs:
                md.append("\nTask-2 vs loop:\n\n" + "\n".join(f"- {v.text}" for v in vs) + "\n")

    if ser and not bs:
        md.append("\nOnly serial runs: nothing to normalise.\n")

    util = utilisation(ds)
    if util:
        md.append("\n### Per-thread utilisation (median [min–max] over runs)\n")
        rows = []
        for (case, line, variant, P), per in sorted(util.items(), key=lambda kv: (case_key(kv[0][0]), kv[0][3],
                                                                                 line_key(kv[0][1]),
                                                                                 variant_key(kv[0][2]))):
            rows.append([case_label(case), line, variant, str(P),
                         "; ".join(f"t{i}: {s.median * 100:.1f}% [{s.lo * 100:.1f}–{s.hi * 100:.1f}]"
                                   for i, s in per.items())])
        md.append(md_table(["case", "runtime", "variant", "P", "utilisation per thread"], rows, escape=True) + "\n")
    return md, files
