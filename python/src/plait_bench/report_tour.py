"""The tour's report: report/index.md opens with the verdict table (verdicts.py), then one section per
part with its key figures; every study session gets its full report in report/<study>/ (report.py)
and every trace its timeline in report/timelines/ (trace.py: study 002's Figs 8-10 layout, study
003's utilisation per worker).

Written whole or not at all, like report.py: drawn in a scratch folder inside the output folder,
then renamed into place, index.md last.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from . import __version__, db
from .analysis import Dataset, load_runs
from .machine import machine_line
from .markdown import md_table
from .report import write_report
from .runner import FAILED_STATUSES
from .tour import Tour
from .verdicts import STUDIES, VERDICTS, PartData, Verdict, machine_undecided

# The figures of a study's own report shown in the tour's section of the part (glob patterns, in order).
KEY_FIGURES = {
    "000": ("fig2_efficiency_kinstr.png", "fig4_speedup_threads.png", "fib_overhead.png"),
    "001": ("speedup_*.png",),
    "002": ("loops_bathtub_*.png",),
    "003": ("amr_fig2_p*.png",),
    "omp": ("omp_same_binary.png",),
    "mpi": ("ranks_*.png",),
}
VERDICT_MARK = {"agrees": "✅ agrees", "partly": "◐ partly", "disagrees": "❌ disagrees", "tie": "＝ tie",
                "no data": "– no data", "not decided": "⏸ not decided"}


def mark(v: Verdict) -> str:
    """The verdict's mark with its note: the size check ("agrees in order, 1000× in size (...)") or
    why it is not decided."""
    m = VERDICT_MARK.get(v.verdict, v.verdict)
    if not v.note:
        return m
    return f"{m} {v.note}" if v.note.startswith("in order") else f"{m}: {v.note.removeprefix('not decided: ')}"


def part_data(con: sqlite3.Connection, session_ids: list[int], utilisation: dict[str, float]) -> PartData:
    runs = [r for sid in session_ids for r in load_runs(con, sid)]
    return PartData(Dataset(runs), utilisation)


def compute_verdicts(con: sqlite3.Connection, tour: Tour, state: dict, utilisation: dict[str, float]) -> list[Verdict]:
    out: list[Verdict] = []
    for part in tour.parts:
        sids = [state["sessions"][s.name] for s in part.studies if s.name in state["sessions"]]
        # a part whose measured rounds the machine disturbed decides nothing (quiet.py)
        out += machine_undecided(VERDICTS[part.id](part_data(con, sids, utilisation)), db.machine_states(con, sids))
    return out


def trace_utilisation(state: dict) -> tuple[dict[str, float], dict[str, object]]:
    """Mean utilisation per trace name over the workers that do not run the program's main task
    (trace.main_task_workers: the main task's waits are not recorded as idle, so its worker would
    count as always busy; all workers if every one runs such a task), and each loaded trace's
    (trace, analysis, main-task workers)."""
    from .trace import TraceError, analyse, load, main_task_workers

    util: dict[str, float] = {}
    loaded: dict[str, object] = {}
    for name, rec in state.get("traces", {}).items():
        if rec.get("status") != "ok":
            continue
        try:
            tr = load(rec["path"])
            a = analyse(tr)
        except (TraceError, OSError, ValueError) as e:
            rec["status"], rec["message"] = "failed", f"unreadable trace: {e}"
            continue
        mains = main_task_workers(tr, a)
        loaded[name] = (tr, a, mains)
        ws = [w for w in a.workers if w.worker not in mains] or a.workers
        util[name] = sum(w.utilisation for w in ws) / max(len(ws), 1)
    return util, loaded


def write_tour_report(con: sqlite3.Connection, tour: Tour, state: dict, out_dir: Path) -> tuple[list[Path], list[Verdict]]:
    """Write the tour's report into out_dir (whole or not at all); returns (files, verdicts)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    try:
        verdicts = _write(con, tour, state, stage)
        made = sorted(stage.iterdir(), key=lambda f: (f.name == "index.md", f.name))
        for f in made:
            dest = out_dir / f.name
            if f.is_dir():
                shutil.rmtree(dest, ignore_errors=True)
            os.replace(f, dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [out_dir / "index.md"] + [out_dir / f.name for f in made if f.name != "index.md"], verdicts


def verdict_rows(verdicts: list[Verdict]) -> list[list[str]]:
    return [[f"{v.part}: {STUDIES.get(v.part, v.part)}", v.claim, v.measured, mark(v)] for v in verdicts]


def _write(con: sqlite3.Connection, tour: Tour, state: dict, out: Path) -> list[Verdict]:
    from .trace import draw, utilisation_lines

    util, loaded = trace_utilisation(state)
    verdicts = compute_verdicts(con, tour, state, util)
    sessions = {name: con.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
                for name, sid in state["sessions"].items()}
    first = next((s for s in sessions.values() if s is not None), None)
    facts = db.machine(con, first["machine_id"]) if first is not None else {}
    md = [f"# Plait on this machine: the four studies ({tour.name} tour)\n",
          f"Generated {_dt.datetime.now().isoformat(timespec='seconds')} by plait-bench {__version__} from "
          f"`{tour.path.name}`; commit `{state.get('commit', '?')}`; {machine_line(facts) if facts else 'unknown machine'}."
          f" {tour.description}\n",
          "## Verdicts\n",
          "For each study: the claim its paper makes (figure or table, and its numbers, measured on the paper's "
          "machines), what this machine measured, and whether the two agree. Every row is computed from the runs "
          "in the results database; a quick tour compares medians of 3 rounds, and medians within 3 % are a tie "
          "(`make demo FULL=1` runs the full studies, whose reports give paired intervals).\n",
          md_table(["study", "the paper's claim", "measured here", "verdict"], verdict_rows(verdicts), escape=True) + "\n"]

    total_failed = 0
    for part in tour.parts:
        md.append(f"\n## {part.id}: {part.title}\n")
        md.append(f"*{STUDIES.get(part.id, part.id)}.*\n")
        for study in part.studies:
            sess = sessions.get(study.name)
            if sess is None:
                md.append(f"\nStudy `{study.name}`: not run.\n")
                continue
            sub = out / study.name
            write_report(con, int(sess["id"]), sub)
            runs = load_runs(con, int(sess["id"]))
            nf = sum(1 for r in runs if r.status in FAILED_STATUSES)
            total_failed += nf
            md.append(f"\nStudy `{study.name}` ({study.settings.description}): session #{sess['id']}, {len(runs)} measured "
                      f"runs, {nf} failed, status **{sess['status']}**. Full report: [{study.name}/index.md]({study.name}/index.md).\n")
            for pattern in KEY_FIGURES.get(part.id, ()):
                for fig in sorted(sub.glob(pattern)):
                    md.append(f"\n![{fig.name}]({study.name}/{fig.name})\n")
        for v in (v for v in verdicts if v.part == part.id):
            md.append(f"\n- **{mark(v)}**: {v.claim}. Measured: {v.measured}.")
        md.append("")
        for t in part.traces:
            rec = state.get("traces", {}).get(t.name)
            if rec is None:
                md.append(f"\nTimeline `{t.name}`: not recorded.\n")
                continue
            if t.name not in loaded:
                md.append(f"\nTimeline `{t.name}`: **failed**: {rec.get('message', '')}\n")
                continue
            tr, a, mains = loaded[t.name]
            png = out / "timelines" / f"{t.name}.png"
            draw(tr, a, png, None)
            params = " ".join(f"--{k} {v}" for k, v in sorted(t.params.items()))
            md.append(f"\n### Timeline: {t.kernel}-{t.runtime}, {t.threads} threads, {params}\n")
            md.append(f"![{t.name}](timelines/{t.name}.png)\n")
            md.append("Blue: a task runs (darker: higher worker; a narrow darkest bar: a task run inside another task "
                      "of the same worker, at its join or wait); red: idle while work remained; green: idle at the end. "
                      "Left: the first tenth of the run; below: task durations.")
            if mains:
                md.append(f" Worker {', '.join(map(str, sorted(mains)))} runs the program's main task (the wide light bar "
                          "under the rest): its waits inside that task are not recorded as idle, so the utilisation "
                          "in the verdict is the mean of the other workers.")
            md.append("\n")
            md.append("```\n" + "\n".join(utilisation_lines(a)) + "\n```\n")
    if total_failed:
        md.append(f"\n**{total_failed} measured runs failed**: each study's report lists them.\n")
    (out / "index.md").write_text("\n".join(md))
    return verdicts
