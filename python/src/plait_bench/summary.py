"""Terminal tables: the study summary (efficiency per runtime and granularity, ratios to Plait) and history.

The tables are table models (table.py), the ones the report shows too built by report_tables in their
brief form, and drawn here with to_rich."""

from __future__ import annotations

import json
import sqlite3
import statistics

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from . import suite
from .analysis import Dataset, load_runs
from .report_tables import (cost_table, fib_table, kernel_table, overhead_table, speedup_table, targets_table,
                            uts_efficiency_table)
from .runner import FAILED_STATUSES
from .table import BETTER, SAME, WORSE, Column, Mark, Table, to_rich


def print_summary(con: sqlite3.Connection, session_id: int, console: Console) -> None:
    sess = con.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    ds = Dataset(load_runs(con, session_id))
    n = len(ds.runs)
    nf = sum(1 for r in ds.runs if r.status in FAILED_STATUSES)
    console.print(
        f"\n[bold]{escape(sess['study'])}[/] session #{session_id} at {sess['commit_short']}: {n} measured runs, "
        f"{nf} failed, status {sess['status']}"
    )
    tables = [uts_efficiency_table(ds, brief=True), fib_table(ds, brief=True)]
    if suite.has_suite(ds):
        tables += suite_tables(ds)
    tables += [kernel_table(ds, k, brief=True) for k in ds.kernels()
               if k not in ("uts", "fib", "steal", *suite.SUITE_KERNELS)]
    for t in tables:
        if t is not None:
            console.print(to_rich(t))


def history_table(con: sqlite3.Connection, study: str, threads: int | None = None, limit: int = 6) -> RichTable | None:
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
    t = Table([Column("benchmark"), Column("params"), Column("runtime"), Column("P", "right"),
               *(Column(f"{s['commit_short']}\n#{s['id']} {s['started_at'][:10]}", "right") for s in cols),
               Column("Δ", "right")],
              title=f"history of study '{study}': median time (s) per commit; last column: change vs previous")
    for key in sorted(data):
        k, base, series, P = key
        vals = [statistics.median(data[key][s["id"]]) if s["id"] in data[key] else None for s in cols]
        delta = None
        known = [v for v in vals if v is not None]
        if len(known) >= 2 and vals[-1] is not None:
            prev = [v for v in vals[:-1] if v is not None][-1]
            d = (vals[-1] - prev) / prev * 100
            delta = Mark(WORSE if d > 5 else BETTER if d < -5 else SAME, f"{d:+.1f}%")
        ps = ",".join(f"{a}={b}" for a, b in sorted(json.loads(base).items()))
        t.add(k, ps, series, str(P), *[f"{v:.4f}" if v is not None else "–" for v in vals], delta)
    return to_rich(t)


def suite_tables(ds: Dataset) -> list[Table]:
    """Study 001 in the terminal: Table 1 (spawn/join, steal cost), Table 4 (one-thread overhead),
    speedup at the largest thread count, and the study-001 targets."""
    out: list[Table] = []
    ghz, ghz_src = suite.clock_ghz(ds)
    costs = suite.cost_table(ds, ghz)
    if costs:
        out.append(cost_table(costs, ghz, ghz_src, brief=True))
    series, rows = suite.overhead_table(ds)
    if rows:
        out += [overhead_table(series, rows, brief=True), speedup_table(ds, series)]
    out.append(targets_table(suite.targets(ds, ghz, costs), brief=True))
    return out
