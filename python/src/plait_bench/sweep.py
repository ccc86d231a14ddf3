"""Executes a study: creates or resumes a session and works through its pending planned runs."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from . import db, quiet
from .machine import git_state, machine_facts
from .registry import BinDirs, expected_omp_library, omp_lib_of, parse_runtime
from .runner import FAILED_STATUSES, execute, missing_record
from .study import Config, Study, missing_binaries, nproc, ranks_of


class MissingBinaries(Exception):
    def __init__(self, paths: list[Path]):
        self.paths = paths
        super().__init__(", ".join(map(str, paths)))


@dataclass
class SweepResult:
    session_id: int
    resumed: bool
    executed: int
    total: int
    failed: list[sqlite3.Row] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.failed


def config_of(row: sqlite3.Row) -> Config:
    params = json.loads(row["params_json"])
    base = json.loads(row["base_json"])
    return Config(
        kernel=row["kernel"], runtime=row["runtime"], threads=int(row["threads"]),
        params=tuple(sorted(params.items())), runtime_params=tuple(sorted(set(params) - set(base))),
        timeout_s=float(row["timeout_s"]),
        compiler=_compiler_of(row["series"].split("[")[0]),  # "plait@clang[...]" -> "clang"
        ranks=ranks_of(row["runtime"], row["series"], int(row["threads"])),
    )


@functools.cache
def _compiler_of(label: str) -> str:
    """A runtime label's compiler tree or OpenMP library, parsed once per label (not once per run)."""
    return parse_runtime(label)[1]


def run_study(
    study: Study,
    con: sqlite3.Connection,
    bins: BinDirs,
    root: Path,
    *,
    new_session: bool = False,
    keep_going: bool = False,
    console: Console | None = None,
    outer: tuple[Progress, object, float] | None = None,
    wait_quiet: float = 0.0,
) -> SweepResult:
    """Run (or resume) a session of the study. ``outer``: (a progress bar, its task, the weight of
    one run) when the study is one part of a tour, whose bar then advances instead of one of its own.
    ``wait_quiet``: seconds to wait for a quiet machine before the first run (quiet.py).

    The machine's state (quiet.py) is read before the first run, before every round after it and
    after the last, and stored with the session (machine_states); a reading that finds the machine
    busy is printed as a warning, and the verdicts of rounds it disturbed are not decided."""
    console = console or Console(stderr=True)
    missing = missing_binaries(study, bins)
    if missing and not keep_going:
        raise MissingBinaries(missing)

    facts = machine_facts()
    git = git_state(root)
    mid = db.upsert_machine(con, facts)
    plan = study.plan()
    h = study.plan_hash()

    locks = db.SessionLocks(con)
    sid = None
    resumed = False
    if not new_session:
        old = _claim(con, locks, study, h, console)
        if old is not None:
            if old["commit_hash"] == git["commit"]:
                sid, resumed = int(old["id"]), True
            else:
                locks.release(int(old["id"]))
                console.print(
                    f"[yellow]note:[/] unfinished session #{old['id']} of '{escape(study.name)}' was at commit "
                    f"{old['commit_short']}, now at {git['short']}: starting a new session instead of resuming it"
                )
    if sid is None:
        sid = db.create_session(con, study=study, plan=plan, plan_hash=h, git=git, machine_id=mid, bins=bins,
                                nproc=nproc(), locks=locks)
    else:
        db.set_session_status(con, sid, "running")
    watcher = quiet.Watcher()
    watcher.best_probe = db.best_probe(con, mid)
    if wait_quiet > 0:
        state, why = quiet.wait_quiet(wait_quiet, watcher, lambda m: console.print(f"[yellow]{escape(m)}[/]", soft_wrap=True))
        watcher.pending = (state, why)
    try:
        return _work(study, con, bins, sid, resumed, plan, git, console, outer, watcher)
    finally:
        locks.release(sid)


def _claim(con: sqlite3.Connection, locks: db.SessionLocks, study: Study, h: str, console: Console):
    """The unfinished session of this plan to resume, locked for this process, or None. While
    another process runs it, waits for that process to end or finish it, and looks again: the second
    of two runs started together resumes what the first left, or starts a new session after it, as
    if it had been started later."""
    while True:
        try:
            return db.claim_resumable(con, locks, study.name, h)
        except db.SessionBusy as e:
            busy = int(e.row["id"])
        console.print(
            f"[yellow]waiting:[/] session #{busy} of '{escape(study.name)}' is being run by another plait-bench "
            f"process on this database; this run goes on when that one ends (Ctrl-C stops waiting)",
            soft_wrap=True,
        )
        locks.wait(busy)
        locks.release(busy)


def _record_state(con: sqlite3.Connection, sid: int, round_: int, watcher: quiet.Watcher, console: Console,
                  first: bool) -> None:
    """Reads the machine (or takes the reading wait_quiet made), stores it, and warns when it is busy."""
    pending = watcher.pending
    if pending is not None:
        state, why = pending
        watcher.pending = None
    else:
        state = watcher.read()
        why = quiet.busy(state, watcher.best_probe)
    db.store_machine_state(con, sid, round_, state.as_row(), why)
    if why:
        where = "before the first run" if first else (f"before round {round_}" if round_ >= 0 else "after the last run")
        console.print(f"[yellow]warning:[/] the machine is busy {where} ({escape(why)}; {escape(quiet.describe(state))}): "
                      f"timings taken now are not trustworthy (plait-bench run --wait-quiet SECONDS waits for a quiet "
                      f"machine)", soft_wrap=True)


def _work(study: Study, con: sqlite3.Connection, bins: BinDirs, sid: int, resumed: bool, plan, git: dict,
          console: Console, outer: tuple[Progress, object, float] | None = None,
          watcher: quiet.Watcher | None = None) -> SweepResult:
    pending = db.pending_runs(con, sid)
    watcher = watcher or quiet.Watcher()
    last_round = None
    total = len(plan)
    done_before = total - len(pending)
    if resumed:
        console.print(f"resuming session #{sid} of '{escape(study.name)}': {done_before} of {total} runs already stored")
    else:
        console.print(
            f"session #{sid} of '{escape(study.name)}': {len(study.configs)} configurations, {total} runs "
            f"(seed {study.settings.seed}, commit {git['short']})"
        )

    executed = 0
    found = study.binaries_in(bins)  # each binary looked up once for the study, not once per run
    try:
        with contextlib.ExitStack() as stack:
            if outer is None:
                progress = stack.enter_context(Progress(
                    TextColumn("[bold]{task.fields[study]}[/]"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    TimeRemainingColumn(),
                    TextColumn("{task.description}"),
                    console=console,
                    transient=False,
                ))
                task = progress.add_task("", total=total, completed=done_before, study=escape(study.name))
                step = 1.0
            else:
                progress, task, step = outer
                progress.advance(task, step * done_before)
            for row in pending:
                if row["round"] != last_round:
                    # before the first run and between rounds: no benchmark of ours runs now
                    _record_state(con, sid, int(row["round"]), watcher, progress.console, last_round is None)
                    last_round = row["round"]
                cfg = config_of(row)
                exe = found.path(cfg.kernel, cfg.runtime, cfg.compiler)
                label = escape(f"{cfg.kernel}-{cfg.series} P={cfg.threads} " + " ".join(
                    f"{k}={v}" for k, v in cfg.params if k not in cfg.runtime_params
                ))
                progress.update(task, description=f"{escape(study.name)} {row['kind']} r{row['round']}: {label}"
                                if outer is not None else f"{row['kind']} r{row['round']}: {label}")
                if not exe.is_file():
                    rec = missing_record(cfg, exe, study.settings)
                else:
                    env = study.env_for(cfg.runtime)
                    tag = omp_lib_of(cfg.series)
                    lib, why = found.omp_preload(tag) if tag else (None, "")
                    if tag and lib is None:
                        rec = missing_record(cfg, exe, study.settings)
                        rec.message = f"cannot run {cfg.series}: {why}"
                    else:
                        if lib is not None:
                            prior = env.get("LD_PRELOAD", os.environ.get("LD_PRELOAD", ""))
                            env["LD_PRELOAD"] = str(lib) + (":" + prior if prior else "")
                        rec = execute(cfg, exe, study.settings, env, found.help(cfg.kernel, cfg.runtime, cfg.compiler),
                                      omp_library=(expected_omp_library(cfg.runtime, tag), bool(tag)))
                db.store_run(con, row, rec)
                executed += 1
                if rec.status != "ok":
                    progress.console.print(
                        f"[red]FAILED[/] ({rec.status}) {label} round {row['round']}: {escape(rec.message or '')}"
                    )
                progress.advance(task, step)
    except KeyboardInterrupt:
        db.set_session_status(con, sid, "interrupted")
        raise
    if last_round is not None:
        _record_state(con, sid, -1, watcher, console, False)

    failed = con.execute(
        f"SELECT * FROM runs WHERE session_id = ? AND status IN ({','.join('?' * len(FAILED_STATUSES))}) ORDER BY id",
        (sid, *FAILED_STATUSES),
    ).fetchall()
    db.set_session_status(con, sid, "failed" if failed else "complete")
    return SweepResult(session_id=sid, resumed=resumed, executed=executed, total=total, failed=failed)
