"""``plait-bench report``: report/index.md plus PNGs that redraw study 000 (Olivier 2020) from one session.

Figures (medians with min–max bars; failed runs drawn as red crosses, never dropped):
  fig2_efficiency_kinstr.png  parallel efficiency vs kilo-instructions per task (Fig 2-3)
  fig3_efficiency_us.png      parallel efficiency vs microseconds per task      (Fig 2-3, time axis)
  fig4_speedup_threads.png    speedup vs threads at the coarsest granularity     (Fig 4)
  fig5_moved_rate.png         moved tasks per thread per second vs granularity, log-log (Fig 5)
  fib_overhead.png            fib: ns per task vs threads (spawn overhead), when the study has fib
  speedup_<kernel>.png        study 001 (kernel suite): speedup vs threads per cut-off (suite_section)
  loops_*.png                 study 002 (mandel, flatloop): time vs grain, variance, affinity (see report_loops.py)
  amr_fig2_p*.png             study 003 (amr): variants normalised to each runtime's loop variant (see report_amr.py)
Tables: 1 (time per SHA-1 op and per task), 2 (instructions per op and per task), 3 (Pearson r).

index.md is written section by section (SECTIONS, in order); each section returns its markdown and
the figures it drew. The numbers come from the analysis modules (analysis, suite, loops, amr); this
module and the report_* modules only draw and write them.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from functools import cached_property, wraps
from pathlib import Path
from typing import Callable, Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import __version__, db, suite  # noqa: E402
from .amr import AMR_KERNELS, has_amr  # noqa: E402
from .analysis import (Cell, Dataset, Run, Summary, UtsPoint, load_runs, pearson_by_granularity, us_per_op,  # noqa: E402
                       uts_points)
from .loops import LOOP_KERNELS, has_loops  # noqa: E402
from .machine import machine_line  # noqa: E402
from .markdown import md_table  # noqa: E402
from .plots import errbar, failed_marks, plain_log, series_style  # noqa: E402
from .report_amr import amr_section  # noqa: E402
from .report_loops import loops_section  # noqa: E402
from .report_omp import has_omp_libs, omp_section  # noqa: E402
from .report_ranks import ranks_section  # noqa: E402
from .report_tables import (cost_table, fib_table, kernel_table, overhead_table, targets_table,  # noqa: E402
                            uts_efficiency_table)
from .runner import FAILED_STATUSES  # noqa: E402
from .table import FAILED, Mark, Table, to_markdown  # noqa: E402

Section = tuple[list[str], list[Path]]  # a section's markdown pieces and the files it drew


def _num(v: float | None, d: int = 3) -> str:
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{d}f}"


def write_report_into(con: sqlite3.Connection, session_id: int, out_dir: Path) -> list[Path]:
    """write_report, but whole or not at all: the report is drawn in a new folder inside out_dir and
    its files are then renamed into out_dir, index.md last. A folder that cannot be written fails at
    the start (OSError), before any file is made; a failure while drawing leaves out_dir as it was."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    try:
        write_report(con, session_id, stage)
        made = sorted(stage.iterdir(), key=lambda f: (f.name == "index.md", f.name))
        for f in made:
            os.replace(f, out_dir / f.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    index = [f for f in made if f.name == "index.md"]
    return [out_dir / f.name for f in index + [f for f in made if f.name != "index.md"]]


def write_report(con: sqlite3.Connection, session_id: int, out_dir: Path) -> list[Path]:
    """Write index.md and the figures; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx = _Context.load(con, session_id, out_dir)
    md: list[str] = []
    written: list[Path] = []
    for section in SECTIONS:
        smd, files = section(ctx)
        md += smd
        written += files
    index = out_dir / "index.md"
    index.write_text("\n".join(md))
    return [index, *written]


# ---------------- what the sections share ----------------


@dataclass
class _Uts:
    """What the UTS sections share: the problems (one per g), the thread count of the efficiency
    figures, instructions and time per SHA-1 op, and the run counts of the captions."""

    pts: list[UtsPoint]
    P: int
    instr_rows: list[sqlite3.Row]
    i_op: float | None  # instructions per SHA-1 op (gcc serial build, callgrind)
    t_op: float | None  # µs per SHA-1 op (serial runs)
    series: list[str]
    n_ok: int
    n_failed: int

    def kinstr(self, p: UtsPoint) -> float | None:
        if self.i_op is not None and p.ops_per_task:
            return p.ops_per_task * self.i_op / 1e3
        return None

    def us_task(self, p: UtsPoint) -> float | None:
        if self.t_op is not None and p.ops_per_task:
            return p.ops_per_task * self.t_op
        return p.us_per_task_measured


@dataclass
class _Context:
    """One session's report: the database, the session row, its measured runs and the output folder."""

    con: sqlite3.Connection
    session_id: int
    sess: sqlite3.Row
    facts: dict
    mline: str
    runs: list[Run]
    ds: Dataset
    out_dir: Path

    @classmethod
    def load(cls, con: sqlite3.Connection, session_id: int, out_dir: Path) -> "_Context":
        sess = con.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if sess is None:
            raise ValueError(f"no session #{session_id} in the database")
        facts = db.machine(con, sess["machine_id"])
        runs = load_runs(con, session_id)
        return cls(con, session_id, sess, facts, machine_line(facts) if facts else "unknown machine", runs,
                   Dataset(runs), out_dir)

    def caption(self, n_runs: int, n_failed: int, extra: str = "") -> str:
        return (
            f"{n_runs} measured runs ({n_failed} failed) on {self.mline}; commit {self.sess['commit_short']}; "
            f"session #{self.session_id} of study '{self.sess['study']}'" + (f"; {extra}" if extra else "")
        )

    @cached_property
    def uts(self) -> _Uts | None:
        """The UTS problems of the session, None without UTS runs."""
        ds = self.ds
        pts = uts_points(ds)
        if not pts:
            return None
        instr_rows = db.latest_instr(self.con, "uts", self.sess["commit_hash"])
        instr_gcc = next((r for r in instr_rows if r["build"] == "gcc"), instr_rows[0] if instr_rows else None)
        uts_runs = [r for r in self.runs if r.kernel == "uts"]
        return _Uts(pts, ds.max_threads("uts"), instr_rows, instr_gcc["instr_per_unit"] if instr_gcc else None,
                    us_per_op(pts), ds.series("uts", parallel_only=True), sum(1 for r in uts_runs if r.ok),
                    sum(1 for r in uts_runs if r.status in FAILED_STATUSES))


# ---------------- the sections, in the order of index.md ----------------


def machine_state_line(states) -> str:
    """The session's machine readings in one cell: quiet, or which rounds a busy machine disturbed."""
    from .verdicts import disturbed_rounds

    if not states:
        return "not recorded (a session from before the readings)"
    rounds, busy = disturbed_rounds(states)
    probes = [st["probe_s"] for st in states if st["probe_s"]]
    spread = f"; the probe varied {max(probes) / min(probes):.2f}× across the readings" if len(probes) > 1 else ""
    if not busy:
        return f"**quiet** in all {len(states)} readings (before the first run, between rounds, after the last){spread}"
    where = f"rounds {', '.join(map(str, sorted(rounds)))}" if rounds else "the warm-up only"
    return (f"**busy** in {len(busy)} of {len(states)} readings, disturbing {where} ({busy[0]['busy']}){spread}: "
            f"timed comparisons of those rounds are not trustworthy (the tour's verdicts say 'not decided')")


def machine_state_table(states) -> list[str]:
    """The readings, when any was busy: what each saw."""
    if not any(st["busy"] for st in states):
        return []
    best = min((st["probe_s"] for st in states if st["probe_s"]), default=None)
    rows = [[("after the last" if st["round"] < 0 else f"before round {st['round']}"),
             f"{st['load1']:.2f}" if st["load1"] is not None else "–",
             f"{st['others']:g}" if st["others"] is not None else "–",
             f"{st['steal_pct']:.1f} %" if st["steal_pct"] is not None else "–",
             f"{st['probe_s'] / best:.2f}×" if st["probe_s"] and best else "–",
             st["busy"] or "quiet"] for st in states]
    return ["\nMachine readings (plait-bench's quiet.py: other runnable threads, hypervisor steal, the calibration "
            "probe against the session's fastest):\n",
            md_table(["reading", "load 1 min", "other runnable", "steal", "probe", "verdict"], rows) + "\n"]


def _header(ctx: _Context) -> Section:
    """Title, the session's facts, the placement and the definition of efficiency."""
    con, sess, session_id, facts, mline, runs, ds = (ctx.con, ctx.sess, ctx.session_id, ctx.facts, ctx.mline,
                                                     ctx.runs, ctx.ds)
    warm = load_runs(con, session_id, include_warmup=True)
    n_ok = sum(1 for r in runs if r.ok)
    n_fail = sum(1 for r in runs if r.status in FAILED_STATUSES)
    md: list[str] = []
    md.append(f"# Plait study report: {sess['study']} (session #{session_id})\n")
    md.append(
        f"Generated {_dt.datetime.now().isoformat(timespec='seconds')} by plait-bench {__version__} from "
        f"`{sess['study_path']}`.\n"
    )
    md.append(md_table(["", ""], [
        ["status", f"**{sess['status']}**"],
        ["commit", f"`{sess['commit_hash']}`" + (" (working tree had changes)" if sess["dirty"] else "")],
        ["machine", mline],
        ["compilers", f"{facts.get('gcc', '?')}; {facts.get('clang', '?')}"],
        ["libraries", f"oneTBB {facts.get('libtbb', '?')}; {facts.get('libomp', '?')}; {facts.get('libgomp', '?')}"],
        ["plan", f"{sess['rounds']} rounds, {sess['warmup']} warm-up run(s) per configuration, "
                 f"interleaved and shuffled per round (seed {sess['seed']})"],
        ["runs", f"{len(runs)} measured ({n_ok} ok, {n_fail} failed), {len(warm) - len(runs)} warm-up"],
        ["started / finished", f"{sess['started_at']} / {sess['finished_at'] or '–'}"],
        ["machine state", machine_state_line(db.machine_states(con, [session_id]))],
    ]))
    md += machine_state_table(db.machine_states(con, [session_id]))
    pin = con.execute("SELECT pinning FROM runs WHERE session_id = ? AND threads = ? LIMIT 1",
                      (session_id, ds.max_threads("uts") if "uts" in ds.kernels() else 1)).fetchone()
    if pin:
        md.append(f"\nPlacement of a run at the largest thread count: {pin['pinning']}.\n")
    md.append(
        "\nEfficiency = T_serial / (P · T_P) with T_serial the median time of the serial build of the same "
        "benchmark and parameters in this session; every figure shows medians over runs with min–max bars.\n"
    )
    return md, []


def _uts_section(body: Callable[[_Context, _Uts, list[str], list[Path]], None]) -> Callable[[_Context], Section]:
    """A UTS section: nothing for a session without UTS runs; else body(ctx, u, md, written) appends its
    markdown pieces to md and the files it draws to written."""
    @wraps(body)
    def section(ctx: _Context) -> Section:
        if ctx.uts is None:
            return [], []
        md: list[str] = []
        written: list[Path] = []
        body(ctx, ctx.uts, md, written)
        return md, written
    return section


def _figure(fig, out_dir: Path, name: str, alt: str, text: str, md: list[str], written: list[Path],
            dpi: int = 110) -> None:
    """Writes the figure to out_dir/name (tight layout), closes it and lists the file in written; links it
    into the section (md) with its caption, text, below it."""
    fig.tight_layout()
    fig.savefig(out_dir / name, dpi=dpi)
    plt.close(fig)
    written.append(out_dir / name)
    md.append(f"![{alt}]({name})\n\n*{text}.*\n")


def _points(pairs: Iterable[tuple[float | None, Cell | None]], value: Callable[[Cell], Summary | None]
            ) -> tuple[list, list, list, list]:
    """One series of a figure from its (x, cell) pairs (pairs without an x or a cell skipped): the x and value(cell)
    of each cell with a value, and the x and failed-run count of each cell with failed runs."""
    xs, vals, fx, fc = [], [], [], []
    for x, c in pairs:
        if c is None or x is None:
            continue
        v = value(c)
        if v is not None:
            xs.append(x)
            vals.append(v)
        if c.failed_runs:
            fx.append(x)
            fc.append(len(c.failed_runs))
    return xs, vals, fx, fc


@_uts_section
def _uts_efficiency(ctx: _Context, u: _Uts, md: list[str], written: list[Path]) -> None:
    """UTS parallel efficiency vs granularity: Figs 2-3 and the efficiency table."""
    ds, out_dir, caption = ctx.ds, ctx.out_dir, ctx.caption
    pts, P, series = u.pts, u.P, u.series
    i_op, kinstr, us_task, n_u, f_u = u.i_op, u.kinstr, u.us_task, u.n_ok, u.n_failed
    md.append("\n## UTS: parallel efficiency vs task granularity (study 000, Figs 2–3)\n")
    for fname, xfun, xlabel, note in (
        ("fig2_efficiency_kinstr.png", kinstr, "task granularity (kilo-instructions per task, callgrind)",
         None if i_op is not None else "instructions not measured (run `plait-bench instr`): x is SHA-1 ops per task"),
        ("fig3_efficiency_us.png", us_task, "task granularity (µs per task, serial)", None),
    ):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        use_ops = xfun(pts[0]) is None if pts else True
        if use_ops and fname.startswith("fig2"):
            xfun = lambda p: p.ops_per_task or p.g  # noqa: E731
            xlabel = "task granularity (SHA-1 ops per task)"
        done = [False]
        for s in series:
            xs, sums, fx, fc = _points(((xfun(p), ds.cell("uts", p.base, s, P)) for p in pts), ds.efficiency)
            errbar(ax, xs, sums, s, scale=100, **series_style(s))
            failed_marks(ax, fx, fc, 0, done, s)
        ax.set_xscale("log")
        plain_log(ax)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"parallel efficiency (%) at P={P}")
        ax.set_ylim(bottom=-5, top=max(110, ax.get_ylim()[1]))
        ax.axhline(100, color="grey", linewidth=0.6, linestyle=":")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"UTS parallel efficiency vs granularity, {P} threads", fontsize=10)
        _figure(fig, out_dir, fname, fname, caption(n_u, f_u, note or ""), md, written)

    md.append(f"Efficiency at P={P}, median [min–max] (× ratio to plait). Problems: " + "; ".join(
        f"g={p.g}: {p.description}" + (f", {p.nodes:.0f} nodes, {p.tasks:.0f} tasks" if p.nodes and p.tasks else "")
        for p in pts) + ".\n")
    md.append(to_markdown(uts_efficiency_table(ds)) + "\n")


@_uts_section
def _uts_speedup(ctx: _Context, u: _Uts, md: list[str], written: list[Path]) -> None:
    """UTS speedup vs threads at the coarsest granularity: Fig 4."""
    ds, out_dir, caption = ctx.ds, ctx.out_dir, ctx.caption
    pts, series = u.pts, u.series
    md.append("\n## UTS: speedup vs threads at the coarsest granularity (Fig 4)\n")
    gmax = max(p.g for p in pts)
    pc = next(p for p in reversed(pts) if p.g == gmax)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    threads = ds.threads("uts")
    done = [False]
    n4 = f4 = 0
    for s in series:
        cells = [(t, c) for t in threads if (c := ds.cell("uts", pc.base, s, t)) is not None]
        n4 += sum(len(c.ok_runs) for _, c in cells)
        f4 += sum(len(c.failed_runs) for _, c in cells)
        xs, sums, fx, fc = _points(cells, ds.speedup)
        errbar(ax, xs, sums, s, **series_style(s))
        failed_marks(ax, fx, fc, 0, done, s)
    if threads:
        ax.plot([0, max(threads)], [0, max(threads)], color="grey", linestyle=":", label="ideal")
    ax.set_xlabel("threads")
    ax.set_ylabel("speedup over serial")
    ax.set_xticks(threads or [1])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"UTS speedup at the coarsest granularity ({pc.label})", fontsize=10)
    _figure(fig, out_dir, "fig4_speedup_threads.png", "fig4", caption(n4, f4, pc.description), md, written)


@_uts_section
def _uts_load_balancing(ctx: _Context, u: _Uts, md: list[str], written: list[Path]) -> None:
    """UTS moved tasks per thread per second vs granularity (Fig 5) and its Pearson r (Table 3)."""
    ds, out_dir, caption = ctx.ds, ctx.out_dir, ctx.caption
    pts, P, series = u.pts, u.P, u.series
    i_op, kinstr, n_u, f_u = u.i_op, u.kinstr, u.n_ok, u.n_failed
    md.append("\n## UTS: load balancing, moved tasks per thread per second (Fig 5, Table 3)\n")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xf = kinstr if i_op is not None else (lambda p: p.ops_per_task or p.g)
    any_pt = False
    done = [False]
    positive_rate = lambda c: mr if (mr := ds.moved_rate(c)) is not None and mr.lo > 0 else None  # noqa: E731
    for s in series:
        xs, sums, fx, fc = _points(((xf(p), ds.cell("uts", p.base, s, P)) for p in pts), positive_rate)
        if xs:
            any_pt = True
        errbar(ax, xs, sums, s, **series_style(s))
        failed_marks(ax, fx, fc, 1, done, s)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax, "x")
    ax.set_xlabel("task granularity (kilo-instructions per task)" if i_op is not None else "task granularity (SHA-1 ops per task)")
    ax.set_ylabel(f"moved tasks per thread per second (P={P})")
    ax.grid(True, which="both", alpha=0.3)
    if any_pt or done[0]:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no moved-task counters in these runs", transform=ax.transAxes, ha="center")
    ax.set_title("UTS load balancing rate vs granularity", fontsize=10)
    _figure(fig, out_dir, "fig5_moved_rate.png", "fig5",
            caption(n_u, f_u, f"P={P}; zero rates cannot be drawn on a log axis"), md, written)

    pr = pearson_by_granularity(ds, pts, P)
    md.append(
        "Table 3. Pearson correlation between speedup and moved tasks per thread per second, across the "
        f"parallel runtimes at P={P} (each runtime's medians; needs at least 3 runtimes):\n"
    )
    md.append(md_table(
        ["SHA-1 ops per task", *[str(p.ops_per_task or "?") + f" (g={p.g})" for p, _, _ in pr]],
        [["Pearson r", *[("–" if r is None else f"{r:.2f}") + f" (n={n})" for _, r, n in pr]]],
    ) + "\n")


@_uts_section
def _uts_granularity_tables(ctx: _Context, u: _Uts, md: list[str], written: list[Path]) -> None:
    """UTS time and instructions per SHA-1 op and per task: Tables 1-2."""
    pts, t_op, instr_rows = u.pts, u.t_op, u.instr_rows
    md.append("\n## UTS: time and instructions per SHA-1 op and per task (Tables 1–2)\n")
    md.append(
        "Time per op = T_serial / ((nodes − 1) · g) at the coarsest granularity of this session "
        "(serial runs); time per task = ops per task × time per op, ops per task = m · g. "
        "Measured per task = T_serial / tasks.\n"
    )
    hdr = ["", "per op", *[f"{p.ops_per_task or '?'} ops (g={p.g})" for p in pts]]
    t1 = [["time (µs), gcc serial", _num(t_op), *[_num(p.ops_per_task * t_op) if (t_op and p.ops_per_task) else "–" for p in pts]],
          ["measured µs per task", "", *[_num(p.us_per_task_measured) for p in pts]]]
    md.append("Table 1. Task granularity as time:\n")
    md.append(md_table(hdr, t1) + "\n")
    md.append("\nTable 2. Task granularity as instructions (valgrind callgrind, kilo-instructions):\n")
    if instr_rows:
        t2 = []
        for r in instr_rows:
            kio = r["instr_per_unit"] / 1e3
            t2.append([f"{r['build']} serial ({r['commit_short']})", _num(kio),
                       *[_num(p.ops_per_task * kio) if p.ops_per_task else "–" for p in pts]])
        md.append(md_table(hdr, t2) + "\n")
        per_node = instr_rows[0]["instr_per_node"]
        if per_node:
            md.append(f"\nAll instructions of a g=1 serial run per node: {per_node / 1e3:.2f} k ({instr_rows[0]['build']}).\n")
    else:
        md.append("\n*No instruction counts in the database: run `plait-bench instr` (valgrind callgrind).*\n")


def _fib(ctx: _Context) -> Section:
    """fib: cost per spawned task vs threads, its table and the instructions per call."""
    con, sess, ds, runs, out_dir, caption = ctx.con, ctx.sess, ctx.ds, ctx.runs, ctx.out_dir, ctx.caption
    if "fib" not in ds.kernels():
        return [], []
    md: list[str] = []
    written: list[Path] = []
    md.append("\n## fib: spawn overhead\n")
    fruns = [r for r in runs if r.kernel == "fib"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    done = [False]
    threads = ds.threads("fib") or [1]
    for base in ds.problems("fib"):
        label = ",".join(f"{k}={v}" for k, v in sorted(base.items()))
        for s in ds.series("fib", parallel_only=True):
            xs, sums, fx, fc = _points(((t, ds.cell("fib", base, s, t)) for t in threads),
                                       lambda c: c.stat("ns_per_task"))
            errbar(ax, xs, sums, f"{s} ({label})" if len(ds.problems("fib")) > 1 else s, **series_style(s))
            failed_marks(ax, fx, fc, 0, done, s)
    ax.set_xlabel("threads")
    ax.set_ylabel("ns per task (binary's own ns_per_task)")
    ax.set_xticks(threads)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("fib: cost per spawned task", fontsize=10)
    _figure(fig, out_dir, "fib_overhead.png", "fib",
            caption(sum(1 for r in fruns if r.ok), sum(1 for r in fruns if r.status in FAILED_STATUSES)), md, written)
    md.append(to_markdown(fib_table(ds)) + "\n")
    instr_fib = db.latest_instr(con, "fib", sess["commit_hash"])
    if instr_fib:
        md.append("\nInstructions per fib call (serial, callgrind): " + ", ".join(
            f"{r['build']} {r['instr_per_unit']:.1f}" for r in instr_fib) + ".\n")
    return md, written


def _suite(ctx: _Context) -> Section:
    """Study 001 (the kernel suite), when the session has it."""
    return suite_section(ctx.ds, ctx.out_dir, ctx.caption) if suite.has_suite(ctx.ds) else ([], [])


def _loops(ctx: _Context) -> Section:
    """Study 002 (loop-to-task conversions), when the session has loop kernels."""
    return loops_section(ctx.ds, ctx.out_dir, ctx.caption) if has_loops(ctx.ds) else ([], [])


def _amr(ctx: _Context) -> Section:
    """Study 003 (the miniAMR proxy), when the session has amr runs."""
    return amr_section(ctx.ds, ctx.out_dir, ctx.caption) if has_amr(ctx.ds) else ([], [])


def _omp(ctx: _Context) -> Section:
    """The OpenMP front door (the same binary on libgomp, libomp and Plait), when the session has gomp@plait runs."""
    return omp_section(ctx.ds, ctx.out_dir, ctx.caption) if has_omp_libs(ctx.ds) else ([], [])


def _ranks(ctx: _Context) -> Section:
    """MPI runs (docs/plait-bench.md, "MPI runs"): every configuration as ranks × threads per rank
    next to the single-process runtimes at the same number of processing elements."""
    return ranks_section(ctx.ds, ctx.out_dir, ctx.caption)


def _other_kernels(ctx: _Context) -> Section:
    """Every configuration of the kernels without a figure of their own, as tables."""
    ds = ctx.ds
    md: list[str] = []
    if any(k not in ("uts", "fib", *LOOP_KERNELS, *AMR_KERNELS) for k in ds.kernels()):
        md.append("\n## All configurations of the other kernels\n")
    for k in ds.kernels():
        if k in ("uts", "fib", *LOOP_KERNELS, *AMR_KERNELS):
            continue
        md.append(f"\n### {k}\n")
        md.append(to_markdown(kernel_table(ds, k)) + "\n")
    return md, []


def _failed_runs(ctx: _Context) -> Section:
    """Every failed run of the session, warm-up runs included."""
    con, session_id = ctx.con, ctx.session_id
    md: list[str] = []
    failed = con.execute(
        f"SELECT * FROM runs WHERE session_id = ? AND status IN ({','.join('?' * len(FAILED_STATUSES))}) ORDER BY id",
        (session_id, *FAILED_STATUSES),
    ).fetchall()
    md.append("\n## Failed runs\n")
    if failed:
        md.append(to_markdown(Table.of(
            ["run", "kind", "round", "benchmark", "P", "params", "status", "message"],
            [[str(r["id"]), r["kind"], str(r["round"]), f"{r['kernel']}-{r['series']}", str(r["threads"]),
              ",".join(f"{a}={b}" for a, b in sorted(json.loads(r["params_json"]).items())), Mark(FAILED, r["status"]),
              r["message"] or ""] for r in failed],
        )) + "\n")
    else:
        md.append("None: every run verified.\n")
    return md, []


SECTIONS: tuple[Callable[[_Context], Section], ...] = (
    _header, _uts_efficiency, _uts_speedup, _uts_load_balancing, _uts_granularity_tables, _fib, _suite, _loops,
    _amr, _omp, _ranks, _other_kernels, _failed_runs,
)


# ---------------- study 001: the kernel suite ----------------


def suite_section(ds: Dataset, out_dir: Path, caption, ghz_fallback=None) -> tuple[list[str], list[Path]]:
    """Markdown and figures of study 001: Table 1 (spawn/join and steal cost), Table 4 (one-thread
    overhead), speedup vs threads per kernel and cut-off, and the targets that compare Plait with the
    runtimes of study 001 (Podobas et al.: its Table 1 costs and the cut-offs of its Figs 5-9)."""
    md: list[str] = []
    written: list[Path] = []
    ghz, ghz_src = suite.clock_ghz(ds, **({"fallback": ghz_fallback} if ghz_fallback else {}))

    def counts(kernels: tuple[str, ...] | str, pred=lambda r: True) -> tuple[int, int]:
        ks = (kernels,) if isinstance(kernels, str) else kernels
        rs = [r for r in ds.runs if r.kernel in ks and pred(r)]
        return sum(1 for r in rs if r.ok), sum(1 for r in rs if r.status in FAILED_STATUSES)

    md.append("\n## Study 001: task runtimes on the kernel suite\n")
    md.append(
        "One-thread overhead = T_rt,1 / T_serial and speedup = T_serial / T_P, per run against the median "
        "serial time of the same kernel and parameters; medians [min–max] over runs. Cut-off classes: "
        "`coarse`/`fine` as given to the binaries (fib: of two numeric cut-offs the larger is coarse); sparselu "
        "and alignment have no cut-off and count as both coarse and fine in the targets.\n"
    )

    # Table 1
    costs = suite.cost_table(ds, ghz)
    if costs:
        fb = suite.spawn_problem(ds)
        n1, f1 = counts(("fib",), lambda r: fb is not None and r.base == fb)
        n2, f2 = counts("steal")
        ts = ds.serial_time("fib", fb) if fb is not None else None
        md.append("\n### Table 1. Inlined spawn/join cost and 2-core steal cost\n")
        md.append(to_markdown(cost_table(costs, ghz, ghz_src)) + "\n")
        md.append(
            "\n*Spawn/join = (T_rt,1 − T_serial) / tasks from fib"
            + (f" ({' '.join(f'{k}={v}' for k, v in sorted(fb.items()))}, a task per call, one thread; "
               f"T_serial = {ts * 1e3:.2f} ms)" if fb is not None and ts else " (no fib run with cut-off 0 or no serial time)")
            + f"; cycles = ns × GHz with {ghz_src}. Steal cost: the steal binary's own steal_cost_ns / "
            f"steal_cost_cycles (its TSC) at 2 threads; a run whose --auto calibration did not converge "
            f"(stats.auto_converged = 0) is counted but flagged, its cost is unreliable. {caption(n1 + n2, f1 + f2)}.*\n"
        )

    # Table 4
    series, orows = suite.overhead_table(ds)
    if orows:
        ks = tuple(sorted({r.problem.kernel for r in orows}))
        n4, f4 = counts(ks, lambda r: r.threads == 1)
        md.append("\n### Table 4. One-thread overhead normalised to serial (T_rt,1 / T_serial)\n")
        md.append(to_markdown(overhead_table(series, orows)) + "\n")
        md.append(f"\n*1.000 = as fast as the serial elision. {caption(n4, f4, 'runs at one thread and serial runs')}.*\n")

    # speedup figures, one PNG per kernel (a panel per cut-off class)
    probs = suite.suite_problems(ds)
    if probs:
        md.append("\n### Speedup vs threads per kernel (study 001 Figs 5–9)\n")
    for k in suite.SUITE_KERNELS:
        kp = [p for p in probs if p.kernel == k]
        if not kp:
            continue
        threads = ds.threads(k) or [1]
        fig, axes = plt.subplots(1, len(kp), figsize=(5.2 * len(kp), 4.2), squeeze=False)
        for ax, p in zip(axes[0], kp):
            done = [False]
            for s, pts in suite.speedup_series(ds, p).items():
                xs = [t for t, sm, _, _ in pts if sm is not None]
                sums = [sm for _, sm, _, _ in pts if sm is not None]
                errbar(ax, xs, sums, s, **series_style(s))
                failed_marks(ax, [t for t, _, _, nf in pts if nf], [nf for _, _, _, nf in pts if nf], 0, done, s)
            ax.plot([0, max(threads)], [0, max(threads)], color="grey", linestyle=":", label="ideal")
            ax.set_xticks(threads)
            ax.set_xlabel("threads")
            ax.set_ylabel("speedup over serial")
            ax.set_ylim(bottom=-0.05 * max(threads))
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
            ax.set_title(f"{k}, cut-off {p.cutoff_text}", fontsize=9)
        fig.suptitle(f"{k}: speedup vs threads ({kp[0].label})", fontsize=10)
        fname = f"speedup_{k}.png"
        nk, fk = counts(k, lambda r: any(r.base == p.base for p in kp))
        _figure(fig, out_dir, fname, fname,
                f"{k}: " + "; ".join(f"{p.cutoff_text}: {p.label}" for p in kp) + f". {caption(nk, fk)}", md, written,
                dpi=100)

    # targets
    tg = suite.targets(ds, ghz, costs)
    md.append("\n### Targets (study 001)\n")
    md.append(to_markdown(targets_table(tg)) + "\n")
    nm = sum(1 for t in tg if t.verdict == "met")
    nn = sum(1 for t in tg if t.verdict == "not met")
    md.append(f"\n*{nm} met, {nn} not met, {len(tg) - nm - nn} without data; fine rows compare each peer with the "
              f"Plait build of the same compiler where the session has it (plait@clang for libomp); medians decide, and a row with a "
              f"failed Plait run is not met. \"paired\": the median over rounds of Plait's run over the same round's "
              f"serial run, or run of the closest peer (every other peer's is listed too; runs of one round "
              f"lie close together in time); for the steal cost, Plait's over the same round's run of the peer "
              f"with the lowest median; for spawn/join, Plait's cycles per task against the same round's "
              f"serial run. Shown beside the "
              f"verdict, not deciding it. \"paired interval\": what the distribution-free 95 % interval of "
              f"that median (the sign-test interval; none below 6 rounds) says about the target: within, "
              f"outside, or undecided when it straddles the limit, i.e. the rounds cannot tell Plait from its "
              f"reference. Cycles via {ghz_src}. {caption(*counts(tuple(ds.kernels())))}.*\n")
    spread = suite.serial_spread(ds)
    if spread:
        md.append("\n*Host noise: the slowest over the fastest serial run of each kernel in this session ("
                  + ", ".join(f"{k} ×{r:.2f} over {n} runs" for k, r, n in spread)
                  + "). The serial binary runs no scheduler, so this spread is the machine's: where it is wider "
                    "than a target's margin, the medians of single runs can fall on either side of the limit, "
                    "and the paired interval says whether the rounds still tell.*\n")
    return md, written
