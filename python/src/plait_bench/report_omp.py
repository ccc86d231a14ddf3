"""The OpenMP front door's report section: the same OpenMP binary on its own runtime and on Plait.

A session with ``gomp@plait`` or ``libomp@plait`` runs (registry.py: an OpenMP binary with
libplait-omp preloaded) gets this section (docs/openmp.md, "Performance"), one part per compiler:

* gcc's binaries (``gomp``) on libgomp, on libomp (``gomp@libomp``) and on Plait (``gomp@plait``);
* clang's binaries (``libomp``) on libomp and on Plait through libomp's ABI (``libomp@plait``).

  omp_same_binary.png        per benchmark configuration at the highest thread count: the median
  omp_same_binary_clang.png  time of each other library and of native Plait over the median time of
                             the binary on its own library, whiskers = min and max run / that median.

Tables: every configuration and thread count with the medians, Plait's OpenMP library paired round
by round against the faster of the other libraries on the same binary (target: at most 1.0, or a
tie: the 95 % interval holds 1.0) and against the native Plait build of the same kernel (the same
compiler's where the session has it; target: within 15 %), and the targets of fib (overhead per
task over the serial recursion at one thread, round by round, with the whole time per task beside
it; 2-thread speedup) and UTS T3 at g = 1 (parallel efficiency at 2 threads) when the session has
them. Verdicts come from the data: "within", "outside", or "tie" when the interval straddles the
limit.
"""

from __future__ import annotations

from pathlib import Path

from .analysis import Cell, Dataset, Summary, _num
from .markdown import md_table
from .plots import save_captioned, series_style
from .registry import OMP_FRONTS, OmpFront, omp_lib_of
from .runner import FAILED_STATUSES
from .stats import median_ci
from .suite import Paired, paired_ratio, per_round



FIGURE = {"gcc": "omp_same_binary.png", "clang": "omp_same_binary_clang.png"}
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


def _native(ds: Dataset, f: OmpFront, kernel: str, base: dict) -> str:
    """The native Plait series a part compares with: the first of f.natives the configuration has."""
    have = set(ds.series(kernel))
    return next((n for n in f.natives if n in have), f.natives[-1])


def _cells(ds: Dataset, f: OmpFront, kernel: str, base: dict, threads: int) -> dict[str, Cell]:
    """The part's cells of one configuration and thread count; the native one under the key "native"."""
    out = {}
    for s in (*f.peers, f.mine):
        c = ds.cell(kernel, base, s, threads)
        if c is not None:
            out[s] = c
    if (c := ds.cell(kernel, base, _native(ds, f, kernel, base), threads)) is not None:
        out["native"] = c
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


def _targets(ds: Dataset, f: OmpFront) -> list[list[str]]:
    rows: list[list[str]] = []
    if "fib" in ds.kernels():
        for base in ds.problems("fib"):
            if base.get("cutoff", "0") not in ("0", 0):
                continue
            c1, c2 = ds.cell("fib", base, f.mine, 1), ds.cell("fib", base, f.mine, 2)
            cs = ds.cell("fib", base, "serial" if f.compiler == "gcc" else "serial@clang", 1) or \
                ds.cell("fib", base, "serial", 1)
            # The target: the overhead per task over the serial recursion (the serial program's
            # time per call pair taken off, round by round), as study 001 and scripts/bench_fib.py
            # count it; the whole time per task below it, a stricter reading, for reference.
            if c1 is not None and cs is not None and (p := _overhead_paired(c1, cs)) is not None:
                peers = [f"{s} {q.median:.1f}" for s in f.peers
                         if (c := ds.cell("fib", base, s, 1)) is not None and (q := _overhead_paired(c, cs)) is not None]
                rows.append([f"fib {_params(base)}: overhead per task over the serial recursion at 1 thread",
                             f"≤ {FIB_NS_PER_TASK:g}",
                             f"{p.median:.2f}" + ("" if p.ci is None else f" [{p.ci[0]:.2f}–{p.ci[1]:.2f}]") +
                             (f" ({', '.join(peers)})" if peers else ""),
                             _word(p, FIB_NS_PER_TASK)])
            if c1 is not None and (ns := c1.stat("ns_per_task")) is not None:
                peers = [f"{s} {c.stat('ns_per_task').median:.1f}" for s in f.peers
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
            c2 = ds.cell("uts", base, f.mine, 2)
            e = ds.efficiency(c2) if c2 is not None else None
            if e is None:
                continue
            peers = [f"{s} {ds.efficiency(c).median * 100:.0f} %" for s in f.peers
                     if (c := ds.cell("uts", base, s, 2)) is not None and ds.efficiency(c) is not None]
            rows.append([f"uts {_params(base)}: parallel efficiency at 2 threads", f"≥ {UTS_EFF_2 * 100:.0f} %",
                         f"{e.median * 100:.1f} % [{e.lo * 100:.1f}–{e.hi * 100:.1f}]" +
                         (f" ({', '.join(peers)})" if peers else ""),
                         "within" if e.lo >= UTS_EFF_2 else "outside" if e.hi < UTS_EFF_2 else "tie"])
    return rows


INTRO = {
    "gcc": "Each gcc-built OpenMP binary ran on libgomp (`gomp`), on LLVM's libomp preloaded (`gomp@libomp`) "
           "and on Plait's libplait-omp preloaded (`gomp@plait`)",
    "clang": "Each clang-built OpenMP binary ran on LLVM's libomp (`libomp`) and on Plait's libplait-omp "
             "preloaded (`libomp@plait`: the same binary through libomp's `__kmpc_*` ABI)",
}


def _part(ds: Dataset, f: OmpFront, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    """One compiler's part of the section, or nothing when the session has no f.mine runs."""
    rows, bars, written = [], [], []
    n_ok = n_failed = 0
    native_used: set[str] = set()
    for k in ds.kernels():
        for base in ds.problems(k):
            threads = sorted({c.threads for c in ds.cells_for(k, base) if c.series in (*f.peers, f.mine)})
            for t in threads:
                cs = _cells(ds, f, k, base, t)
                if f.mine not in cs:
                    continue
                for c in cs.values():
                    n_ok += len(c.ok_runs)
                    n_failed += sum(1 for r in c.runs if r.status in FAILED_STATUSES)
                peers = [cs[s] for s in f.peers if s in cs]
                vs_peer = paired_ratio(cs[f.mine], peers) if peers else None
                vs_native = paired_ratio(cs[f.mine], [cs["native"]]) if "native" in cs else None
                if "native" in cs:
                    native_used.add(cs["native"].series)
                rows.append([k, _params(base), str(t),
                             *(_sum(cs[s].time) if s in cs else "–" for s in (*f.peers, f.mine, "native")),
                             _verdict(vs_peer, 1.0), _verdict(vs_native, NATIVE_LIMIT)])
            if threads and f.own in (cs := _cells(ds, f, k, base, threads[-1])) and cs[f.own].time is not None:
                ref = cs[f.own].time.median
                bars.append((f"{k}\n{_params(base)}\nP={threads[-1]}",
                             {s: cs[s].time for s in (*f.peers[1:], f.mine, "native") if s in cs and cs[s].time}, ref))
    if not rows:
        return [], []
    natives = ", ".join(f"`{n}`" for n in sorted(native_used))
    native_txt = (f"Native: {natives}, the native Plait build of the same kernel." if natives else
                  "The session has no native Plait build of these kernels.")
    md = [f"\n### {f.compiler}'s binaries\n",
          f"{INTRO[f.compiler]}; every run reported the library it ran on (`omp_library`). {native_txt}\n\n"]
    peers_txt = ", ".join(f.peers)
    md.append(md_table(["kernel", "params", "P", *(f"{s} (s)" for s in (*f.peers, f.mine)), "plait native (s)",
                        f"{f.mine} / faster of {peers_txt} (≤ 1)" if len(f.peers) > 1 else f"{f.mine} / {f.own} (≤ 1)",
                        f"{f.mine} / plait (≤ {NATIVE_LIMIT:g})"],
                       rows) + "\n")
    trows = _targets(ds, f)
    if trows:
        md.append(f"\nTargets of the same {f.compiler}-built binary on Plait:\n\n" +
                  md_table(["target", "limit", "measured", "verdict"], trows) + "\n")
    if bars:
        import matplotlib.pyplot as plt  # (after plots has chosen the Agg backend)

        fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(bars) + 2), 4.2))
        order = (*f.peers[1:], f.mine, "native")
        width = 0.8 / len(order)
        for j, s in enumerate(order):
            xs, ys, lo, hi = [], [], [], []
            for i, (_, sums, ref) in enumerate(bars):
                if s in sums:
                    m = sums[s]
                    xs.append(i + (j - (len(order) - 1) / 2) * width)
                    ys.append(m.median / ref)
                    lo.append(max(0.0, (m.median - m.lo) / ref))
                    hi.append(max(0.0, (m.hi - m.median) / ref))
            label = "plait (native)" if s == "native" else s
            st = series_style("plait" if s == "native" else s)
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=label, color=st.get("color"),
                   hatch="//" if s != "native" else None, edgecolor="black", linewidth=0.4)
        ax.axhline(1.0, color=series_style(f.own)["color"], linewidth=1, linestyle="--", label=f"{f.own} = 1")
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], fontsize=7)
        ax.set_ylabel(f"median time / {f.own}'s median time")
        others = " and ".join(["libomp"] * (len(f.peers) > 1) + ["Plait"])
        ax.set_title(f"The same {f.compiler}-built OpenMP binary on {others}, and native Plait", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        path = out_dir / FIGURE[f.compiler]
        cap = (f"{caption(n_ok, n_failed)}; the highest thread count of each configuration; whiskers: fastest and "
               f"slowest run over {f.own}'s median")
        save_captioned(fig, path, cap)
        written.append(path)
        md.append(f"\n![same {f.compiler} binary]({FIGURE[f.compiler]})\n\n*{cap}.*\n")
    return md, written


def omp_section(ds: Dataset, out_dir: Path, caption) -> tuple[list[str], list[Path]]:
    md = ["\n## The OpenMP front door: the same binary on three runtimes\n",
          "An OpenMP program runs unchanged on Plait's libplait-omp: gcc's binaries through the GOMP ABI, "
          "clang's through libomp's. Paired ratios are taken round by round (the runs of one round are "
          "interleaved) with the 95 % sign-test interval of their median; *tie*: the interval holds the limit.\n"]
    written: list[Path] = []
    for f in OMP_FRONTS:
        part, files = _part(ds, f, out_dir, caption)
        md += part
        written += files
    return (md, written) if len(md) > 2 else ([], [])  # (no part: the session has no run on libplait-omp)
