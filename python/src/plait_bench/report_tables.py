"""The tables that both the report (Markdown) and the terminal summary show, each built once as a
table model (table.py) and rendered by the caller: UTS efficiency, fib's spawn overhead, every
configuration of a kernel, and study 001's Table 1, Table 4, speedup and targets.

brief=True is the terminal's shorter form of the same table: medians without their [min–max], a ratio
in fewer words, a column or two left out; the report (brief=False) has the full numbers. Failed runs
and verdicts are marks, which each renderer shows its own way.
"""

from __future__ import annotations

import json

from . import suite
from .analysis import Cell, Dataset, Summary, uts_points
from .markdown import pct_cell
from .table import MET, NOT_MET, OUTSIDE, WARN, WITHIN, Column, Mark, Part, Table, failed


def failed_parts(n: int) -> list[Part]:
    """What follows a number when n of its runs failed: nothing, or " " and the mark."""
    return [" ", failed(n)] if n else []


def failed_of(c: Cell | None) -> list[Part]:
    return failed_parts(len(c.failed_runs) if c is not None else 0)


def median_text(s: Summary | None, d: int, unit: str = "", brief: bool = False) -> str:
    """A summary as "median unit [min–max]" (the terminal's brief form: the median alone, no unit); "–" without."""
    if s is None:
        return "–"
    if brief:
        return f"{s.median:.{d}f}"
    return f"{s.median:.{d}f}{unit} [{s.lo:.{d}f}–{s.hi:.{d}f}]"


def _params(base: dict) -> str:
    return ",".join(f"{a}={b}" for a, b in sorted(base.items()))


def uts_efficiency_table(ds: Dataset, brief: bool = False) -> Table | None:
    """UTS parallel efficiency at the largest thread count, a row per runtime and a column per problem,
    with the ratio to Plait's; brief adds the serial times as a last (dim) row. None without UTS runs."""
    pts = uts_points(ds)
    if not pts:
        return None
    P = ds.max_threads("uts")
    t = Table([Column("runtime"), *(Column(p.label, "right") for p in pts)],
              title=f"UTS parallel efficiency at P={P}: median over runs, ×: ratio to plait "
                    + ("(min–max: plait-bench report)" if brief else "[min–max]"))
    for s in ds.series("uts", parallel_only=True):
        row: list = [s]
        for p in pts:
            c = ds.cell("uts", p.base, s, P)
            if c is None:
                row.append("" if brief else "–")
                continue
            e = ds.efficiency(c)
            ref = ds.cell("uts", p.base, "plait", P)
            er = ds.efficiency(ref) if ref else None
            if e is None:
                txt = "no serial" if brief and ds.serial_time("uts", p.base) is None else "–"
            else:
                txt = f"{e.median * 100:.0f}%" if brief else pct_cell(e)
            if e is not None and er is not None and s != "plait" and er.median > 0:
                r = e.median / er.median
                txt += f" ×{r:.2f}" if brief else f" (×{r:.2f})"
            row.append([txt, *failed_of(c)])
        t.add(*row)
    if brief:
        srow: list = ["serial time (s)"]
        for p in pts:
            c = ds.cell("uts", p.base, "serial", 1)
            tm = c.time if c else None
            srow.append([f"{tm.median:.3f}" if tm else "–", *failed_of(c)])
        t.add(*srow, dim=True)
    return t


def fib_table(ds: Dataset, brief: bool = False) -> Table | None:
    """fib's time per run, a row per problem and runtime. The report: every thread count in one cell
    (a line each: time [min–max], ns per task, the ratio to serial); brief: a column per thread count,
    the median in ms, ns per task and the ratio to Plait's time. None without fib runs."""
    if "fib" not in ds.kernels():
        return None
    threads = ds.threads("fib") or [1]
    if brief:
        t = Table([Column("problem"), Column("runtime"), *(Column(f"P={P}", "right") for P in threads)],
                  title="fib spawn overhead: median time per run in ms (ns per task); ×: time ratio to plait")
    else:
        t = Table.of(["params", "runtime", "median time per run"],
                     title="fib spawn overhead: median time per run [min–max], ns per task, ratio to serial")
    for base in ds.problems("fib"):
        label = _params(base)
        ts = ds.serial_time("fib", base)
        for s in ds.series("fib"):
            if brief:
                cells: list = []
                for P in threads:
                    c = ds.cell("fib", base, s, 1 if s == "serial" else P)
                    if c is None or (s == "serial" and P != threads[0]):
                        cells.append("")
                        continue
                    tm, ns = c.time, c.stat("ns_per_task")
                    txt = f"{tm.median * 1e3:.1f}" if tm else "–"
                    if ns is not None:
                        txt += f" ({ns.median:.1f} ns)"
                    ref = ds.cell("fib", base, "plait", P)
                    if tm and ref and ref.time and s != "plait":
                        txt += f" ×{tm.median / ref.time.median:.2f}"
                    cells.append([txt, *failed_of(c)])
                t.add(label, s, *cells)
                continue
            lines: list[Part] = []
            for P in ([1] if s == "serial" else threads):
                c = ds.cell("fib", base, s, P)
                if c is None:
                    continue
                tm, ns = c.time, c.stat("ns_per_task")
                txt = "–" if tm is None else f"{tm.median * 1e3:.2f} ms [{tm.lo * 1e3:.2f}–{tm.hi * 1e3:.2f}]"
                if ns is not None:
                    txt += f", {ns.median:.1f} ns/task"
                if ts and tm and s != "serial":
                    txt += f", {tm.median / ts:.2f}× serial"
                lines += [*(["\n"] if lines else []), f"P={P}: {txt}", *failed_of(c)]
            t.add(label, s, lines)
    return t


def kernel_table(ds: Dataset, kernel: str, brief: bool = False) -> Table:
    """Every configuration of one kernel: time [min–max] and efficiency, with the failed runs as a
    column (brief: beside the time, the efficiency in whole percent)."""
    t = Table.of(["params", "runtime", "P", "time" if brief else "time (s)", "efficiency",
                  *([] if brief else ["failed"])], title=f"{kernel}: median time (s)")
    for c in sorted(ds.cells_for(kernel), key=lambda c: (json.dumps(c.base, sort_keys=True), c.series, c.threads)):
        time = median_text(c.time, 4)
        e = ds.efficiency(c)
        if brief:
            t.add(_params(c.base), c.series, str(c.threads), [time, *failed_of(c)],
                  "–" if e is None else f"{e.median * 100:.0f}% [{e.lo * 100:.0f}–{e.hi * 100:.0f}]")
        else:
            t.add(_params(c.base), c.series, str(c.threads), time, pct_cell(e), str(len(c.failed_runs)))
    return t


# ---- study 001 -----------------------------------------------------------------------------------


def cost_table(costs: list[suite.CostRow], ghz: float | None, ghz_src: str, brief: bool = False) -> Table:
    """Table 1: inlined spawn/join cost and 2-core steal cost per runtime (suite.cost_table's rows);
    the report adds the tasks per run. A failed run is marked in the cost it belongs to, an --auto
    calibration that did not converge beside the steal cost."""
    if brief:
        cols = ["spawn/join ns", "cycles", "steal ns (P=2)", "steal cycles"]
    else:
        cols = ["spawn/join (ns)", "spawn/join (cycles)", "tasks per run", "steal cost, P=2 (ns)",
                "steal cost, P=2 (cycles)"]
    t = Table([Column("runtime"), *(Column(c, "right" if brief else "left") for c in cols)],
              title="Table 1: inlined spawn/join cost (fib, cut-off 0, P=1) and 2-core steal cost, medians"
                    + ("" if brief else " [min–max]"),
              caption=f"cycles via {ghz_src}")
    for c in costs:
        steal: list[Part] = [median_text(c.steal_ns, 0, " ns", brief), *failed_of(c.steal_cell)]
        if c.unconverged:
            steal += [" ", Mark(WARN, f"{c.unconverged} not converged" if brief else
                                f"{c.unconverged} of {len(c.steal_cell.ok_runs)} runs: --auto did not converge")]
        t.add(c.series, [median_text(c.spawn_ns, 2, " ns", brief), *failed_of(c.spawn_cell)],
              median_text(c.spawn_cycles, 1, "", brief) if ghz else "–",
              *([] if brief else ["–" if c.tasks is None else f"{c.tasks:.0f}"]),
              steal, median_text(c.steal_cycles, 0, "", brief))
    return t


def overhead_table(series: list[str], rows: list[suite.OverheadRow], brief: bool = False) -> Table:
    """Table 4: one-thread overhead T_rt,1 / T_serial per problem and runtime (suite.overhead_table's
    series and rows); the report adds the problem's parameters and writes every number with its [min–max]."""
    cols = [Column("kernel"), Column("cut-off")]
    cols += [Column("serial (s)", "right")] if brief else [Column("problem"), Column("T_serial")]
    t = Table([*cols, *(Column(s, "right" if brief else "left") for s in series)],
              title="Table 4: one-thread overhead T_rt,1 / T_serial, median [min–max]")
    for r in rows:
        ratios = [None if (x := r.of(s)) is None else [median_text(x[0], 2 if brief else 3), *failed_parts(x[1])]
                  for s in series]
        ts = [median_text(r.t_serial, 4, brief=True) if brief else suite._fmt(r.t_serial, " s", 4),
              *failed_parts(r.serial_failed)]
        t.add(r.problem.kernel, r.problem.cutoff_text, *([ts] if brief else [r.problem.label, ts]), *ratios)
    return t


def speedup_table(ds: Dataset, series: list[str]) -> Table:
    """Speedup T_serial / T_P at each suite problem's largest thread count, a column per runtime (the
    terminal's; the report draws it as figures)."""
    t = Table([Column("kernel"), Column("cut-off"), Column("P", "right"), *(Column(s, "right") for s in series)],
              title="speedup T_serial / T_P at the largest thread count, median")
    for p in suite.suite_problems(ds):
        P = ds.max_threads(p.kernel)
        cells = []
        for s in series:
            c = ds.cell(p.kernel, p.base, s, P)
            cells.append("" if c is None else [median_text(ds.speedup(c), 2, brief=True), *failed_of(c)])
        t.add(p.kernel, p.cutoff_text, str(P), *cells)
    return t


_VERDICT = {"met": MET, "not met": NOT_MET}
_INTERVAL = {"within": WITHIN, "outside": OUTSIDE}


def targets_table(tg: list[suite.Target], brief: bool = False) -> Table:
    """The study-001 targets, a row per target and scope, a section per target. The report: Plait's
    numbers and the reference's in full; brief: the short name, the scope without its parameters and
    the deciding numbers in one line."""
    t = Table.of(["target", "scope", "numbers", "verdict", "interval"] if brief else
                 ["target", "scope", "Plait", "reference", "verdict", "paired interval"],
                 title="study-001 targets (medians decide; paired = median per-round ratio, shown only; a failed "
                       "Plait run is not met" + ("; details: plait-bench report)" if brief else ")"),
                 caption="interval: what the 95 % interval of the paired ratio says about the target "
                         "(within, outside, or undecided: the rounds cannot tell)")
    prev = None
    for x in tg:
        v = Mark(_VERDICT[x.verdict], x.verdict) if x.verdict in _VERDICT else x.verdict
        iv = Mark(_INTERVAL[x.interval], x.interval) if x.interval in _INTERVAL else x.interval
        if brief:
            cells = [x.short, x.scope.split(";")[0] + (")" if ";" in x.scope else ""),
                     x.brief or (x.plait + (f" / {x.reference}" if x.reference else ""))]
        else:
            cells = [x.target, x.scope, x.plait, x.reference]
        t.add(*cells, v, iv, section=prev is not None and x.target != prev)
        prev = x.target
    return t

