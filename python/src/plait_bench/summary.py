"""Terminal tables: the study summary (efficiency per runtime and granularity, ratios to Plait) and history."""

from __future__ import annotations

import json
import sqlite3
import statistics

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import suite
from .analysis import Dataset, Summary, load_runs, uts_points
from .runner import FAILED_STATUSES


def fmt_summary(s: Summary | None, scale: float = 1.0, digits: int = 2, pct: bool = False) -> str:
    if s is None:
        return "–"
    if pct:
        return escape(f"{s.median * 100:.0f}% [{s.lo * 100:.0f}–{s.hi * 100:.0f}]")
    return escape(f"{s.median * scale:.{digits}f} [{s.lo * scale:.{digits}f}–{s.hi * scale:.{digits}f}]")


def failed_note(cell) -> str:
    n = len(cell.failed_runs) if cell else 0
    return f" [red]({n} FAILED)[/]" if n else ""


def uts_table(ds: Dataset) -> Table | None:
    pts = uts_points(ds)
    if not pts:
        return None
    P = ds.max_threads("uts")
    t = Table(title=f"UTS parallel efficiency at P={P}: median over runs, ×: ratio to plait (min–max: plait-bench report)")
    t.add_column("runtime")
    for p in pts:
        t.add_column(p.label, justify="right")
    for s in ds.series("uts", parallel_only=True):
        row = [escape(s)]
        for p in pts:
            c = ds.cell("uts", p.base, s, P)
            if c is None:
                row.append("")
                continue
            e = ds.efficiency(c)
            txt = f"{e.median * 100:.0f}%" if e else "–"
            ref = ds.cell("uts", p.base, "plait", P)
            er = ds.efficiency(ref) if ref else None
            if e is not None and er is not None and s != "plait" and er.median > 0:
                txt += f" ×{e.median / er.median:.2f}"
            if e is None and ds.serial_time("uts", p.base) is None:
                txt = "no serial"
            row.append(txt + failed_note(c))
        t.add_row(*row)
    srow = ["serial time (s)"]
    for p in pts:
        c = ds.cell("uts", p.base, "serial", 1)
        tm = c.time if c else None
        srow.append((f"{tm.median:.3f}" if tm else "–") + failed_note(c))
    t.add_row(*srow, style="dim")
    return t


def fib_table(ds: Dataset) -> Table | None:
    if "fib" not in ds.kernels():
        return None
    t = Table(title="fib spawn overhead: median time per run in ms (ns per task); ×: time ratio to plait")
    t.add_column("problem")
    t.add_column("runtime")
    threads = ds.threads("fib") or [1]
    for P in threads:
        t.add_column(f"P={P}", justify="right")
    for base in ds.problems("fib"):
        label = ",".join(f"{k}={v}" for k, v in sorted(base.items()))
        for s in ds.series("fib"):
            row = [escape(label), escape(s)]
            for P in threads:
                c = ds.cell("fib", base, s, 1 if s == "serial" else P)
                if c is None or (s == "serial" and P != threads[0]):
                    row.append("")
                    continue
                tm = c.time
                txt = f"{tm.median * 1e3:.1f}" if tm else "–"
                ns = c.stat("ns_per_task")
                if ns is not None:
                    txt += f" ({ns.median:.1f} ns)"
                ref = ds.cell("fib", base, "plait", P)
                if tm and ref and ref.time and s != "plait":
                    txt += f" ×{tm.median / ref.time.median:.2f}"
                row.append(txt + failed_note(c))
            t.add_row(*row)
    return t


def print_summary(con: sqlite3.Connection, session_id: int, console: Console) -> None:
    sess = con.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    ds = Dataset(load_runs(con, session_id))
    n = len(ds.runs)
    nf = sum(1 for r in ds.runs if r.status in FAILED_STATUSES)
    console.print(
        f"\n[bold]{escape(sess['study'])}[/] session #{session_id} at {sess['commit_short']}: {n} measured runs, "
        f"{nf} failed, status {sess['status']}"
    )
    for tbl in (uts_table(ds), fib_table(ds)):
        if tbl is not None:
            console.print(tbl)
    if suite.has_suite(ds):
        for tbl in suite_tables(ds):
            console.print(tbl)
    other = [k for k in ds.kernels() if k not in ("uts", "fib", "steal", *suite.SUITE_KERNELS)]
    for k in other:
        t = Table(title=f"{k}: median time (s)")
        for col in ("params", "runtime", "P", "time", "efficiency"):
            t.add_column(col)
        for c in sorted(ds.cells_for(k), key=lambda c: (json.dumps(c.base, sort_keys=True), c.series, c.threads)):
            t.add_row(
                escape(",".join(f"{a}={b}" for a, b in sorted(c.base.items()))), escape(c.series), str(c.threads),
                fmt_summary(c.time, digits=4) + failed_note(c), fmt_summary(ds.efficiency(c), pct=True),
            )
        console.print(t)


def history_table(con: sqlite3.Connection, study: str, threads: int | None = None, limit: int = 6) -> Table | None:
    """Median time per configuration, one column per commit (newest session per commit)."""
    sessions = con.execute(
        "SELECT s.* FROM sessions s WHERE s.study = ? AND s.id IN (SELECT MAX(id) FROM sessions WHERE study = ? "
        "GROUP BY commit_hash) ORDER BY s.id",
        (study, study),
    ).fetchall()[-limit:]
    if not sessions:
        return None
    cols = []
    data: dict[tuple, dict[int, float]] = {}
    for s in sessions:
        cols.append(s)
        for r in con.execute(
            "SELECT kernel, series, threads, base_json, time_s FROM runs WHERE session_id = ? AND kind = 'measured' AND status = 'ok'",
            (s["id"],),
        ):
            if threads is not None and r["threads"] != threads and r["series"] != "serial":
                continue
            key = (r["kernel"], r["base_json"], r["series"], r["threads"])
            data.setdefault(key, {}).setdefault(s["id"], []).append(r["time_s"])
    t = Table(title=f"history of study '{study}': median time (s) per commit; last column: change vs previous")
    t.add_column("benchmark")
    t.add_column("params")
    t.add_column("runtime")
    t.add_column("P", justify="right")
    for s in cols:
        t.add_column(f"{s['commit_short']}\n#{s['id']} {s['started_at'][:10]}", justify="right")
    t.add_column("Δ", justify="right")
    for key in sorted(data):
        k, base, series, P = key
        vals = [statistics.median(data[key][s["id"]]) if s["id"] in data[key] else None for s in cols]
        delta = ""
        known = [v for v in vals if v is not None]
        if len(known) >= 2 and vals[-1] is not None:
            prev = [v for v in vals[:-1] if v is not None][-1]
            d = (vals[-1] - prev) / prev * 100
            delta = f"[{'red' if d > 5 else 'green' if d < -5 else 'white'}]{d:+.1f}%[/]"
        ps = ",".join(f"{a}={b}" for a, b in sorted(json.loads(base).items()))
        t.add_row(k, escape(ps), escape(series), str(P), *[f"{v:.4f}" if v is not None else "–" for v in vals], delta)
    return t


def _med(s: Summary | None, d: int = 3, unit: str = "") -> str:
    return "–" if s is None else escape(f"{s.median:.{d}f}{unit}")


def suite_tables(ds: Dataset) -> list[Table]:
    """Study 001 in the terminal: Table 1 (spawn/join, steal cost), Table 4 (one-thread overhead),
    speedup at the largest thread count, and the study-001 targets."""
    out: list[Table] = []
    ghz, ghz_src = suite.clock_ghz(ds)
    costs = suite.cost_table(ds, ghz)
    if costs:
        t = Table(title="Table 1: inlined spawn/join cost (fib, cut-off 0, P=1) and 2-core steal cost, medians",
                  caption=escape(f"cycles via {ghz_src}"))
        for c in ("runtime", "spawn/join ns", "cycles", "steal ns (P=2)", "steal cycles"):
            t.add_column(c, justify="left" if c == "runtime" else "right")
        for c in costs:
            nf = c.failed
            t.add_row(escape(c.series), _med(c.spawn_ns, 2), _med(c.spawn_cycles, 1), _med(c.steal_ns, 0),
                      _med(c.steal_cycles, 0) + (f" [red]({nf} FAILED)[/]" if nf else "")
                      + (f" [yellow]({c.unconverged} not converged)[/]" if c.unconverged else ""))
        out.append(t)
    series, rows = suite.overhead_table(ds)
    if rows:
        t = Table(title="Table 4: one-thread overhead T_rt,1 / T_serial, median [min–max]")
        for c in ("kernel", "cut-off", "serial (s)", *series):
            t.add_column(escape(c), justify="left" if c in ("kernel", "cut-off") else "right")
        for r in rows:
            cells = r.texts(series, lambda v: fmt_summary(v, digits=2), lambda nf: f" [red]({nf} FAILED)[/]")
            t.add_row(r.problem.kernel, escape(r.problem.cutoff_text), _med(r.t_serial, 4)
                      + (f" [red]({r.serial_failed} FAILED)[/]" if r.serial_failed else ""), *cells)
        out.append(t)
        probs = suite.suite_problems(ds)
        t = Table(title="speedup T_serial / T_P at the largest thread count, median")
        t.add_column("kernel")
        t.add_column("cut-off")
        t.add_column("P", justify="right")
        for s in series:
            t.add_column(escape(s), justify="right")
        for p in probs:
            P = ds.max_threads(p.kernel)
            cells = []
            for s in series:
                c = ds.cell(p.kernel, p.base, s, P)
                cells.append("" if c is None else _med(ds.speedup(c), 2) + failed_note(c))
            t.add_row(p.kernel, escape(p.cutoff_text), str(P), *cells)
        out.append(t)
    tg = suite.targets(ds, ghz, costs)
    t = Table(title="study-001 targets (medians decide; paired = median per-round ratio, shown only; a failed Plait run is not met; details: plait-bench report)",
              caption="interval: what the 95 % interval of the paired ratio says about the target "
                      "(within, outside, or undecided: the rounds cannot tell)")
    for c in ("target", "scope", "numbers", "verdict", "interval"):
        t.add_column(c)
    colour = {"met": "green", "not met": "red"}
    prev = None
    for x in tg:
        v = x.verdict
        if prev is not None and x.target != prev:
            t.add_section()
        prev = x.target
        t.add_row(escape(x.short), escape(x.scope.split(";")[0] + (")" if ";" in x.scope else "")),
                  escape(x.brief or (x.plait + (f" / {x.reference}" if x.reference else ""))),
                  f"[{colour[v]}]{v}[/]" if v in colour else v,
                  {"within": "[green]within[/]", "outside": "[red]outside[/]"}.get(x.interval, x.interval))
    out.append(t)
    return out
