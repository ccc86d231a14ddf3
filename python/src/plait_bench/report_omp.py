"""The OpenMP front door's report section: the same gcc-built OpenMP binary on three runtimes.

A session with ``gomp@plait`` runs (registry.py: the gcc tree's OpenMP binary with libplait-omp
preloaded) gets this section (docs/openmp.md, "Performance"):

  omp_same_binary.png   per benchmark configuration at the highest thread count: the median time of
                        gomp@libomp, gomp@plait and native Plait over the median time of gomp (the
                        binary on its own libgomp), whiskers = min and max run / that median.

Tables: every configuration and thread count with the four medians, Plait's OpenMP library paired
round by round against the faster of libgomp and libomp on the same binary (target: at most 1.0,
or a tie: the 95 % interval holds 1.0) and against the native Plait build of the same kernel
(target: within 15 %), and the targets of fib (overhead per task over the serial recursion at one
thread, round by round, with the whole time per task beside it; 2-thread speedup) and UTS
T3 at g = 1 (parallel efficiency at 2 threads) when the session has them. Verdicts come from the
data: "within", "outside", or "tie" when the interval straddles the limit.
"""

from __future__ import annotations

from pathlib import Path

from .analysis import Cell, Dataset, Summary, _num
from .markdown import md_table
from .plots import save_captioned, series_style
from .registry import omp_lib_of
from .runner import FAILED_STATUSES
from .suite import Paired, median_ci, paired_ratio, per_round

MINE = "gomp@plait"
PEERS = ("gomp", "gomp@libomp")
NATIVE = "plait"
# Targets of the front door on the same binary (docs/openmp.md)
FIB_NS_PER_TASK = 10.0
FIB_SPEEDUP_2 = 1.8
UTS_EFF_2 = 0.90
NATIVE_LIMIT = 1.15


def has_omp_libs(ds: Dataset) -> bool:
    return any(omp_lib_of(s) == "plait" for k in ds.kernels() for s in ds.series(k))


def _sum(s: Summary | None, scale: float = 1.0, d: int = 4) -> str:
    return "–" if s is None else f"{s.median * scale:.{d}f} [{s.lo * scale:.{d}f}–{s.hi * scale:.{d}f}]"


def _word(p: Paired | None, limit: float) -> str:
    """What the paired interval says of "ratio <= limit", in one word."""
    if p is None:
        return "no paired rounds"
    if p.ci is None:
        return f"undecided ({p.n} rounds: too few for an interval)"
    return {"below": "within", "above": "outside", "undecided": "tie"}[p.against(limit)]


def _word_at_least(p: Paired, limit: float) -> str:
    """What the paired interval says of "value >= limit", in one word."""
    if p.ci is None:
        return f"undecided ({p.n} rounds: too few for an interval)"
    return "within" if p.ci[0] >= limit else "outside" if p.ci[1] < limit else "tie"


def _verdict(p: Paired | None, limit: float) -> str:
    """The paired ratio, its interval and what it says of "ratio <= limit"."""
    if p is None:
        return "no paired rounds"
    ci = "" if p.ci is None else f" [{p.ci[0]:.3f}–{p.ci[1]:.3f}]"
    return f"{p.median:.3f}{ci}: {_word(p, limit)}"


def _params(base: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(base.items())) or "–"


def _cells(ds: Dataset, kernel: str, base: dict, threads: int) -> dict[str, Cell]:
    out = {}
    for s in (*PEERS, MINE, NATIVE):
        c = ds.cell(kernel, base, s, threads)
        if c is not None:
            out[s] = c
    return out


def _paired(a_cell: Cell, b_cell: Cell, combine, value=lambda r: r.time_s) -> Paired | None:
    """Round by round: combine(a's value, b's value), median and interval."""
    a, b = per_round(a_cell, value), per_round(b_cell, value)
    vals = [combine(a[k], b[k]) for k in a if k in b]
    s = Summary.of(vals)
    return None if s is None else Paired(s.median, s.n, median_ci(vals))


def _speedup_paired(c1: Cell, c2: Cell) -> Paired | None:
    """Time at one thread over time at two (a speedup), round by round."""
    return _paired(c1, c2, lambda t1, t2: t1 / t2)


def _overhead_paired(mine: Cell, serial: Cell) -> Paired | None:
    """mine's ns per task minus the serial recursion's ns per call pair (study 001's per-task
    overhead over the serial program), round by round."""
    return _paired(mine, serial, lambda m, s: m - s, lambda r: _num(r.stats.get("ns_per_task")))


def _targets(ds: Dataset) -> list[list[str]]:
    rows: list[list[str]] = []
    if "fib" in ds.kernels():
        for base in ds.problems("fib"):
            if base.get("cutoff", "0") not in ("0", 0):
                continue
            c1, c2 = ds.cell("fib", base, MINE, 1), ds.cell("fib", base, MINE, 2)
            cs = ds.cell("fib", base, "serial", 1)
            # The target: the overhead per task over the serial recursion (the serial program's
            # time per call pair taken off, round by round), as study 001 and scripts/bench_fib.py
            # count it; the whole time per task below it, a stricter reading, for reference.
            if c1 is not None and cs is not None and (p := _overhead_paired(c1, cs)) is not None:
                peers = [f"{s} {q.median:.1f}" for s in PEERS
                         if (c := ds.cell("fib", base, s, 1)) is not None and (q := _overhead_paired(c, cs)) is not None]
                rows.append([f"fib {_params(base)}: overhead per task over the serial recursion at 1 thread",
                             f"≤ {FIB_NS_PER_TASK:g}",
                             f"{p.median:.2f}" + ("" if p.ci is None else f" [{p.ci[0]:.2f}–{p.ci[1]:.2f}]") +
                             (f" ({', '.join(peers)})" if peers else ""),
                             _word(p, FIB_NS_PER_TASK)])
            if c1 is not None and (ns := c1.stat("ns_per_task")) is not None:
                peers = [f"{s} {c.stat('ns_per_task').median:.1f}" for s in PEERS
                         if (c := ds.cell("fib", base, s, 1)) is not None and c.stat("ns_per_task") is not None]
                rows.append([f"fib {_params(base)}: whole time per task at 1 thread", f"≤ {FIB_NS_PER_TASK:g}",
                             f"{ns.median:.1f} [{ns.lo:.1f}–{ns.hi:.1f}]" + (f" ({', '.join(peers)})" if peers else ""),
                             "within" if ns.hi <= FIB_NS_PER_TASK else "outside" if ns.lo > FIB_NS_PER_TASK else "tie"])
            if c1 is not None and c2 is not None:
                p = _speedup_paired(c1, c2)
                if p is not None:
                    rows.append([f"fib {_params(base)}: speedup at 2 threads over 1", f"≥ {FIB_SPEEDUP_2:g}",
                                 f"{p.median:.2f}" + ("" if p.ci is None else f" [{p.ci[0]:.2f}–{p.ci[1]:.2f}]"),
                                 _word_at_least(p, FIB_SPEEDUP_2)])
    if "uts" in ds.kernels():
        for base in ds.problems("uts"):
            if base.get("tree") != "T3" or str(base.get("g", "1")) != "1":
                continue
            c2 = ds.cell("uts", base, MINE, 2)
            e = ds.efficiency(c2) if c2 is not None else None
            if e is None:
                continue
            peers = [f"{s} {ds.efficiency(c).median * 100:.0f} %" for s in PEERS
                     if (c := ds.cell("uts", base, s, 2)) is not None and ds.efficiency(c) is not None]
            rows.append([f"uts {_params(base)}: parallel efficiency at 2 threads", f"≥ {UTS_EFF_2 * 100:.0f} %",
                         f"{e.median * 100:.1f} % [{e.lo * 100:.1f}–{e.hi * 100:.1f}]" +
                         (f" ({', '.join(peers)})" if peers else ""),
                         "within" if e.lo >= UTS_EFF_2 else "outside" if e.hi < UTS_EFF_2 else "tie"])
    return rows


def omp_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    md = ["\n## The OpenMP front door: the same binary on three runtimes\n",
          "Each gcc-built OpenMP binary ran on libgomp (`gomp`), on LLVM's libomp preloaded (`gomp@libomp`) "
          "and on Plait's libplait-omp preloaded (`gomp@plait`); every run reported the library it ran on "
          "(`omp_library`). `plait` is the native Plait build of the same kernel. Paired ratios are taken round "
          "by round (the runs of one round are interleaved) with the 95 % sign-test interval of their median; "
          "*tie*: the interval holds the limit.\n"]
    rows, bars, written = [], [], []
    n_ok = n_failed = 0
    for k in ds.kernels():
        for base in ds.problems(k):
            threads = sorted({c.threads for c in ds.cells_for(k, base) if c.series in (*PEERS, MINE)})
            for t in threads:
                cs = _cells(ds, k, base, t)
                if MINE not in cs:
                    continue
                for c in cs.values():
                    n_ok += len(c.ok_runs)
                    n_failed += sum(1 for r in c.runs if r.status in FAILED_STATUSES)
                peers = [cs[s] for s in PEERS if s in cs]
                vs_peer = paired_ratio(cs[MINE], peers) if peers else None
                vs_native = paired_ratio(cs[MINE], [cs[NATIVE]]) if NATIVE in cs else None
                rows.append([k, _params(base), str(t), *(_sum(cs[s].time) if s in cs else "–" for s in (*PEERS, MINE, NATIVE)),
                             _verdict(vs_peer, 1.0), _verdict(vs_native, NATIVE_LIMIT)])
            if threads and "gomp" in (cs := _cells(ds, k, base, threads[-1])) and cs["gomp"].time is not None:
                ref = cs["gomp"].time.median
                bars.append((f"{k}\n{_params(base)}\nP={threads[-1]}",
                             {s: cs[s].time for s in ("gomp@libomp", MINE, NATIVE) if s in cs and cs[s].time}, ref))
    if not rows:
        return [], []
    md.append(md_table(["kernel", "params", "P", "gomp (s)", "gomp@libomp (s)", "gomp@plait (s)", "plait native (s)",
                        "gomp@plait / faster of gomp, gomp@libomp (≤ 1)", f"gomp@plait / plait (≤ {NATIVE_LIMIT:g})"],
                       rows) + "\n")
    trows = _targets(ds)
    if trows:
        md.append("\nTargets of the same binary on Plait:\n\n" + md_table(["target", "limit", "measured", "verdict"], trows) + "\n")
    if bars:
        import matplotlib.pyplot as plt  # (after plots has chosen the Agg backend)

        fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(bars) + 2), 4.2))
        width = 0.26
        order = ("gomp@libomp", MINE, NATIVE)
        for j, s in enumerate(order):
            xs, ys, lo, hi = [], [], [], []
            for i, (_, sums, ref) in enumerate(bars):
                if s in sums:
                    m = sums[s]
                    xs.append(i + (j - 1) * width)
                    ys.append(m.median / ref)
                    lo.append(max(0.0, (m.median - m.lo) / ref))
                    hi.append(max(0.0, (m.hi - m.median) / ref))
            st = series_style(s)
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=s, color=st.get("color"),
                   hatch="//" if s != NATIVE else None, edgecolor="black", linewidth=0.4)
        ax.axhline(1.0, color=series_style("gomp")["color"], linewidth=1, linestyle="--", label="gomp (libgomp) = 1")
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], fontsize=7)
        ax.set_ylabel("median time / gomp's median time")
        ax.set_title("The same gcc-built OpenMP binary on libomp and on Plait, and native Plait", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        path = out_dir / "omp_same_binary.png"
        cap = (f"{caption(n_ok, n_failed)}; the highest thread count of each configuration; whiskers: fastest and "
               f"slowest run over gomp's median")
        save_captioned(fig, path, cap)
        written.append(path)
        md.append(f"\n![same binary](omp_same_binary.png)\n\n*{cap}.*\n")
    return md, written
