"""plait-bench: run benchmark studies, keep every run in SQLite, and redraw study 000 from fresh data.

Exit status: 0 study completed cleanly; 1 the study ran but some runs failed (crash, verification,
timeout, missing binary with --keep-going); 2 bad input (study file, unknown names, values out of range,
missing binaries, no such session, a results database that is corrupt, not ours or not writable, an
output that cannot be written), on one line; 130 interrupted (run the same command again to resume).
"""

from __future__ import annotations

import csv
import functools
import json
import os
import signal
import sqlite3
import sys
import tempfile
from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__, db
from .registry import ENV_CLANG_BIN, ENV_GCC_BIN, MPI_RUNTIMES, BinDirs, find_root
from .study import StudyError, load_study, missing_binaries, mpi_problem, nproc, ranks_of, resolve_study_path

EXIT_OK, EXIT_FAILED_RUNS, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

err = Console(stderr=True)
out = Console()


def die(msg: str, code: int = EXIT_BAD_INPUT) -> None:
    """The message as it is (no markup: names such as [[benchmark]] stay), never wrapped."""
    err.print(f"[bold red]plait-bench: error:[/] {escape(msg)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def common(f):
    """--db, --gcc-bin, --clang-bin on every verb."""

    @click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), envvar="PLAIT_BENCH_DB",
                  help="SQLite results database [env PLAIT_BENCH_DB; default: <repo>/results/plait.db].")
    @click.option("--gcc-bin", type=click.Path(file_okay=False, path_type=Path), envvar=ENV_GCC_BIN,
                  help=f"Binaries of serial/plait/tbb/gomp [env {ENV_GCC_BIN}; default build/gcc-release/bin].")
    @click.option("--clang-bin", type=click.Path(file_okay=False, path_type=Path), envvar=ENV_CLANG_BIN,
                  help=f"Binaries of libomp [env {ENV_CLANG_BIN}; default build/clang-release/bin].")
    @functools.wraps(f)
    def wrapper(*args, db_path=None, gcc_bin=None, clang_bin=None, **kw):
        root = find_root()
        click_ctx = click.get_current_context()
        origin = {}
        for tree, name, var in (("gcc", "gcc_bin", ENV_GCC_BIN), ("clang", "clang_bin", ENV_CLANG_BIN)):
            src = click_ctx.get_parameter_source(name)
            origin[tree] = var if src == ParameterSource.ENVIRONMENT else f"--{tree}-bin" if src == ParameterSource.COMMANDLINE else ""
        ctx = {
            "root": root,
            "db_path": db_path or root / "results" / "plait.db",
            "bins": BinDirs.resolve(root, gcc_bin, clang_bin, origin),
        }
        try:
            return f(ctx, *args, **kw)
        except db.DatabaseProblem as e:
            die(str(e))
        except sqlite3.DatabaseError as e:  # met after the checks at opening (a disk error, a lock held too long)
            if getattr(e, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                die(str(db.corrupt(ctx["db_path"], str(e))))
            die(f"results database {ctx['db_path']}: {e}")

    return wrapper


def open_db(ctx, write: bool = False):
    """The results database, checked (db.connect); opened read-only unless the verb stores something."""
    try:
        return db.connect(Path(ctx["db_path"]), write=write)
    except db.DatabaseProblem as e:
        die(str(e))


def study_name(ctx, spec: str | None) -> str | None:
    """A study given as a name or as a study file: the name its sessions are stored under."""
    if not spec:
        return spec
    path = resolve_study_path(spec, ctx["root"])
    if path.is_file():
        try:
            import tomllib

            return str(tomllib.loads(path.read_text()).get("study", {}).get("name", path.stem))
        except (OSError, ValueError, RecursionError):  # the file is not TOML: the name as given
            return spec
    return spec


def pick_session(con, study: str | None, session: int | None):
    if session is not None:
        row = con.execute("SELECT * FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            die(f"no session #{session} in the database (see: plait-bench sessions)")
        return row
    row = db.latest_session(con, study)
    if row is None:
        die(f"no sessions of study '{study}' in the database" if study else "the database holds no sessions yet")
    return row


def load(ctx, study_spec: str, rounds: int | None = None):
    path = resolve_study_path(study_spec, ctx["root"])
    try:
        st = load_study(path, ctx["bins"])
    except StudyError as e:
        die(e.render())
    if rounds is not None:
        # stored with the session (sessions.rounds) and part of the plan hash, so a session run
        # with another count is never resumed by mistake
        st.settings.rounds = rounds
    return st


ROUNDS_OPTION = click.option(
    "--rounds", type=click.IntRange(1, 1000), default=None,
    help="Measured rounds instead of the study file's (1..1000); stored with the session.")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="plait-bench")
def main() -> None:
    """Study tool for the Plait benchmark suite.

    \b
    Typical session:
      plait-bench plan quick        validate studies/quick.toml, list what would run
      plait-bench instr             count instructions per SHA-1 op / fib call (valgrind)
      plait-bench run quick         run the study (resumes an interrupted one), print a summary
      plait-bench report            write report/index.md and the figures of study 000
      plait-bench history quick     compare the study across commits
      plait-bench export -o r.csv   every run as CSV

    Binaries come from build/gcc-release/bin (serial, plait, tbb, gomp) and build/clang-release/bin
    (libomp); results go to results/plait.db. See docs/plait-bench.md.
    """


@main.command()
@click.argument("study")
@click.option("--new", "new_session", is_flag=True, help="Start a new session even if an unfinished one of this study could be resumed.")
@click.option("--keep-going", is_flag=True, help="Run even if some binaries are missing; their runs are stored as failed ('missing').")
@click.option("--no-summary", is_flag=True, help="Do not print the summary table at the end.")
@click.option("--wait-quiet", type=click.FloatRange(0, 86400), default=0, metavar="SECONDS",
              help="Wait up to SECONDS for a quiet machine before the first run (no other thread wanting a CPU, "
                   "no steal, the probe at its usual speed); then run anyway, with a warning.")
@ROUNDS_OPTION
@common
def run(ctx, study: str, new_session: bool, keep_going: bool, no_summary: bool, rounds: int | None,
        wait_quiet: float) -> None:
    """Run STUDY (a name in studies/ or a path to a .toml file).

    Every configuration (benchmark x runtime x threads x parameters) gets its warm-up run(s), then one
    run per round; the order is shuffled anew every round with the study's seed, so drift hits every
    runtime alike. Runs are pinned to CPUs 0..P-1, get an unlimited stack (and OMP_STACKSIZE), and are
    killed after the study's timeout. Each run is stored in its own transaction; an interrupted study
    resumes where it stopped when run again (same study file, same commit). The machine's state is
    read before the first run and between rounds (load, other runnable threads, steal, a calibration
    probe) and stored; a busy machine is a warning here and makes the report's verdicts of the
    rounds it disturbed "not decided". Exit status 1 if any run failed, 2 for a bad study file or
    missing binaries, 130 if interrupted.
    """
    from .summary import print_summary
    from .sweep import MissingBinaries, run_study

    st = load(ctx, study, rounds)
    if (why := mpi_problem(st)) is not None:
        die(why)
    con = open_db(ctx, write=True)

    def _term(signum, frame):  # SIGTERM stops like Ctrl-C: the running benchmark is killed, the session resumable
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        res = run_study(st, con, ctx["bins"], ctx["root"], new_session=new_session, keep_going=keep_going, console=err,
                        wait_quiet=wait_quiet)
    except MissingBinaries as e:
        gone = ctx["bins"].missing_dirs(e.paths)
        if gone:
            die(f"study '{st.name}' needs benchmark binaries from a directory that does not exist: {'; '.join(gone)}")
        lines = "\n".join(f"  - {p}" for p in e.paths)
        die(f"study '{st.name}' needs benchmark binaries that do not exist:\n{lines}\n"
            "build them (make build) or point --gcc-bin/--clang-bin at them; --keep-going runs the rest "
            "and stores these runs as failed")
    except db.SlotTaken as e:
        die(str(e))
    except KeyboardInterrupt:
        err.print(f"\n[yellow]interrupted[/]: completed runs are in {escape(str(ctx['db_path']))}; "
                  f"run `plait-bench run {escape(study)}` again to resume", soft_wrap=True)
        sys.exit(EXIT_INTERRUPTED)
    if not no_summary:
        print_summary(con, res.session_id, out)
    if res.failed:
        err.print(f"[bold red]study '{escape(st.name)}' did not complete cleanly:[/] {len(res.failed)} failed run(s):")
        for r in res.failed[:20]:
            err.print(escape(f"  run {r['id']} {r['kernel']}-{r['series']} P={r['threads']} {r['params_json']}: "
                             f"{r['status']}: {r['message']}"), highlight=False)
        if len(res.failed) > 20:
            err.print(f"  ... and {len(res.failed) - 20} more (plait-bench export --failed)")
        sys.exit(EXIT_FAILED_RUNS)
    err.print(escape(f"study '{st.name}' complete: session #{res.session_id}, {res.total} runs, results in {ctx['db_path']}"))


@main.command()
@click.argument("study")
@ROUNDS_OPTION
@common
def plan(ctx, study: str, rounds: int | None) -> None:
    """Validate STUDY and list its configurations and runs without running anything."""
    st = load(ctx, study, rounds)
    p = st.plan()
    t = Table(title=escape(f"study '{st.name}' ({st.path}): {len(st.configs)} configurations, {len(p)} runs, nproc={nproc()}"))
    for c in ("benchmark", "runtime", "P", "params", "binary"):
        t.add_column(c)
    found = st.binaries_in(ctx["bins"])
    for c in sorted(st.configs, key=lambda c: c.key):
        exe = found.path(c.kernel, c.runtime, c.compiler)
        shape = " = {}×{}".format(*c.mpi_shape) if c.runtime in MPI_RUNTIMES else ""  # ranks × threads per rank
        t.add_row(c.kernel, escape(c.series), f"{c.threads}{shape}", escape(" ".join(f"{k}={v}" for k, v in c.params)),
                  escape(str(exe)) if exe.is_file() else f"[red]MISSING {escape(str(exe))}[/]")
    out.print(t)
    s = st.settings
    out.print(f"rounds {s.rounds} ({s.order}), warm-up {s.warmup}, seed {s.seed}, timeout {s.timeout_s:g} s, pin {s.pin}, "
              f"stack {s.stack}, OMP_STACKSIZE {s.omp_stacksize}")
    miss = missing_binaries(st, ctx["bins"])
    if miss:
        gone = ctx["bins"].missing_dirs(miss)
        die(f"{len(miss)} benchmark binaries missing (listed above)" + (f": {'; '.join(gone)}" if gone else ""))
    if (why := mpi_problem(st)) is not None:
        die(why)


@main.command()
@click.option("--study", help="Study name or file (default: the newest session's study).")
@click.option("--session", type=int, help="Session id (default: the newest session of the study).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help="Output folder [default: <repo>/report].")
@common
def report(ctx, study, session, out_dir) -> None:
    """Write report/index.md and PNG figures redrawing study 000 (Olivier 2020).

    Efficiency vs granularity in kilo-instructions and in µs per task (Figs 2-3), speedup vs threads at
    the coarsest granularity (Fig 4), moved tasks per thread per second (Fig 5) with Pearson r per
    granularity (Table 3), time and instructions per SHA-1 op and per task (Tables 1-2), fib spawn
    overhead. For the kernel suite (studies bots, bots-ci, microbench: study 001): Table 1 (inlined
    spawn/join and 2-core steal cost, ns and cycles), Table 4 (one-thread overhead over serial), a
    speedup-vs-threads figure per kernel (coarse and fine cut-off) and the study-001 targets table.
    For the loop benchmarks (studies loops, loops-ci, flatloop: study 002): time vs grain per variant,
    runtime and steal policy, break-even grain, run-to-run variance, task affinity, adaptive vs the
    best hand-tuned grain, and the flatloop efficiency target table (docs/loops.md).
    Medians with min-max bars; failed runs are drawn and listed, never dropped.
    """
    from .report import write_report_into

    con = open_db(ctx)
    sess = pick_session(con, study_name(ctx, study), session)
    out_dir = out_dir or ctx["root"] / "report"
    try:
        files = write_report_into(con, int(sess["id"]), out_dir)
    except OSError as e:
        where = Path(e.filename) if e.filename else out_dir
        named = "" if where == out_dir or where.name.startswith(".report-") else f" ({where})"  # not the scratch folder
        die(f"cannot write the report into {out_dir}: {e.strerror or e}{named}; nothing written")
    err.print(escape(f"report of session #{sess['id']} ({sess['study']}, {sess['status']}) written: "
                     + ", ".join(str(f) for f in files)), soft_wrap=True)


@main.command()
@click.option("--study", help="Study name or file (default: the newest session's study).")
@click.option("--session", type=int, help="Session id.")
@common
def summary(ctx, study, session) -> None:
    """Print the summary tables of a session (efficiency per runtime and granularity, ratios to Plait;
    for the kernel suite: Tables 1 and 4, speedup at the largest thread count, the study-001 targets)."""
    from .summary import print_summary

    con = open_db(ctx)
    sess = pick_session(con, study_name(ctx, study), session)
    print_summary(con, int(sess["id"]), out)


@main.command()
@click.argument("study")
@click.option("--threads", type=int, help="Only this thread count (serial runs always shown).")
@click.option("--last", type=int, default=6, show_default=True, help="How many commits to show.")
@common
def history(ctx, study, threads, last) -> None:
    """Compare STUDY across commits: median time per configuration, newest session per commit."""
    from .summary import history_table

    con = open_db(ctx)
    study = study_name(ctx, study)
    t = history_table(con, study, threads, last)
    if t is None:
        die(f"no sessions of study '{study}' in {ctx['db_path']}")
    out.print(t)


@main.command()
@common
def sessions(ctx) -> None:
    """List the sessions in the database."""
    con = open_db(ctx)
    t = Table(title=escape(f"sessions in {ctx['db_path']}"))
    for c in ("id", "study", "commit", "started", "status", "runs", "failed", "pending"):
        t.add_column(c)
    for s in con.execute("SELECT * FROM sessions ORDER BY id"):
        n = con.execute("SELECT COUNT(*) FROM runs WHERE session_id = ?", (s["id"],)).fetchone()[0]
        f = con.execute("SELECT COUNT(*) FROM runs WHERE session_id = ? AND status != 'ok'", (s["id"],)).fetchone()[0]
        p = con.execute("SELECT COUNT(*) FROM planned_runs WHERE session_id = ? AND state = 'pending'", (s["id"],)).fetchone()[0]
        t.add_row(str(s["id"]), escape(s["study"]), s["commit_short"], s["started_at"], s["status"], str(n), str(f), str(p))
    out.print(t)


EXPORT_COLUMNS = [
    "run_id", "session_id", "study", "commit", "machine", "kernel", "runtime", "series", "threads", "ranks",
    "threads_per_rank", "params",
    "round", "kind", "status", "exit_code", "time_s", "wall_s", "verified", "check", "message", "pinning",
    "command", "started_at", "stats",
]


@main.command()
@click.option("--study", help="Only this study.")
@click.option("--session", type=int, help="Only this session.")
@click.option("--failed", is_flag=True, help="Only failed runs.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="CSV file [default: stdout].")
@common
def export(ctx, study, session, failed, output) -> None:
    """Write runs as CSV: one row per run, configuration, outcome, counters (stats as JSON and one column each)."""
    con = open_db(ctx)
    q = ("SELECT r.*, s.study, s.commit_hash, m.cpu_model FROM runs r JOIN sessions s ON s.id = r.session_id "
         "LEFT JOIN machines m ON m.id = s.machine_id WHERE 1=1")
    args: list = []
    if study:
        q += " AND s.study = ?"
        args.append(study)
    if session is not None:
        q += " AND r.session_id = ?"
        args.append(session)
    if failed:
        q += " AND r.status != 'ok'"
    rows = con.execute(q + " ORDER BY r.id", args).fetchall()
    stat_names = sorted({k for r in rows for k in json.loads(r["stats_json"] or "{}")})

    def write(fh) -> None:
        w = csv.writer(fh)
        w.writerow(EXPORT_COLUMNS + [f"stat_{k}" for k in stat_names])
        for r in rows:
            st = json.loads(r["stats_json"] or "{}")
            # an MPI run's shape as launched (P = ranks × threads per rank); empty for one process
            ranks = ranks_of(r["runtime"], r["series"], r["threads"])
            w.writerow([
                r["id"], r["session_id"], r["study"], r["commit_hash"], r["cpu_model"], r["kernel"], r["runtime"],
                r["series"], r["threads"], ranks or "", r["threads"] // ranks if ranks else "", r["params_json"], r["round"], r["kind"], r["status"], r["exit_code"],
                r["time_s"], r["wall_s"], r["verified"], r["check_text"], r["message"], r["pinning"], r["command"],
                r["started_at"], r["stats_json"], *[st.get(k, "") for k in stat_names],
            ])

    if not output:
        write(sys.stdout)
        return
    tmp = None
    try:
        if output.exists() and not output.is_file():  # a pipe or a terminal (-o /dev/stdout): written as it is
            with open(output, "w", newline="") as fh:
                write(fh)
        else:
            # a file is written beside its target and renamed onto it: an old one stays whole until then
            target = Path(os.path.realpath(output))
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "w", newline="") as fh:
                write(fh)
            os.replace(tmp, target)
    except OSError as e:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        die(f"cannot write {output}: {e.strerror or e}; nothing written")
    err.print(escape(f"{len(rows)} runs written to {output}"))


@main.command()
@click.option("--kernel", "kernels", multiple=True, type=click.Choice(["uts", "fib"]),
              help="Benchmark(s) to measure [default: every one whose serial binary exists].")
@click.option("--build", type=click.Choice(["gcc", "clang", "all"]), default="all", show_default=True,
              help="Which tree's serial binary.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Override a parameter of the small measured problem (uts default: type=binomial b0=500 q=0.12 m=8 seed=1).")
@common
def instr(ctx, kernels, build, params) -> None:
    """Count instructions with valgrind --tool=callgrind on small serial runs and store them.

    uts: the same small tree at g=1 and g=3; instructions per SHA-1 op = difference / ((nodes-1) * 2),
    and instructions per node of the g=1 run. fib: fib(18) and fib(20); instructions per call. The
    report uses these for the kilo-instructions axis and Table 2.
    """
    from rich.progress import Progress

    from .instr import InstrError, measure
    from .machine import git_state, machine_facts

    over: dict[str, str] = {}
    for p in params:
        if "=" not in p:
            die(f"--param {p!r}: expected NAME=VALUE")
        k, v = p.split("=", 1)
        over[k.strip()] = v.strip()
    bins: BinDirs = ctx["bins"]
    todo = []
    for k in kernels or ("uts", "fib"):
        found = [(lbl, p) for lbl, p in bins.serial_binaries(k) if build in ("all", lbl)]
        if not found:
            if kernels:
                gone = bins.missing_dirs() if build == "all" else [m for m in [bins.missing_dir(build)] if m]
                die(f"no {k}-serial binary in {bins.gcc} or {bins.clang} (build it: make build)"
                    + (f": {'; '.join(gone)}" if gone else ""))
            continue
        todo += [(k, lbl, p) for lbl, p in found]
    if not todo:
        gone = bins.missing_dirs() if build == "all" else [m for m in [bins.missing_dir(build)] if m]
        die(f"no serial benchmark binaries (uts-serial, fib-serial) in {bins.gcc} or {bins.clang}"
            + (f": {'; '.join(gone)}" if gone else ""))
    con = open_db(ctx, write=True)
    mid = db.upsert_machine(con, machine_facts())
    git = git_state(ctx["root"])
    bad = 0
    with Progress(console=err) as prog:
        task = prog.add_task("callgrind", total=len(todo))
        for k, lbl, exe in todo:
            prog.update(task, description=f"callgrind {exe.name} ({lbl})")
            try:
                res = measure(k, exe, over if k == "uts" else None)
            except InstrError as e:
                prog.console.print(f"[red]FAILED[/] {escape(str(exe))}: {escape(str(e))}")
                bad += 1
                prog.advance(task)
                continue
            db.store_instr(con, kernel=k, build=lbl, binary=str(exe), commit_hash=git["commit"],
                           commit_short=git["short"], machine_id=mid, **res)
            unit = "SHA-1 op" if res["unit"] == "sha1_op" else "call"
            extra = f", {res['instr_per_node']:.0f} per node at g=1" if res.get("instr_per_node") else ""
            prog.console.print(f"{exe.name} ({lbl}): {res['instr_per_unit']:.1f} instructions per {unit}{extra}")
            prog.advance(task)
    if bad:
        sys.exit(EXIT_FAILED_RUNS)


@main.command()
@click.argument("name", required=False, default=None)
@click.option("--full", is_flag=True, help="The full-size studies (studies/tours/full.toml) instead of the quick tour.")
@click.option("--new", "new_tour", is_flag=True, help="Start the tour afresh even if an interrupted one could be resumed.")
@click.option("--keep-going", is_flag=True, help="Run even if some binaries are missing; their runs are stored as failed.")
@click.option("--report-only", is_flag=True, help="Only (re)write the report of the last tour run (finished or not).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help="Report folder [default: <repo>/report].")
@click.option("--wait-quiet", type=click.FloatRange(0, 86400), default=0, metavar="SECONDS",
              help="Before each study, wait up to SECONDS for a quiet machine (as plait-bench run --wait-quiet).")
@common
def tour(ctx, name: str | None, full: bool, new_tour: bool, keep_going: bool, report_only: bool, out_dir: Path | None,
         wait_quiet: float) -> None:
    """Run a tour: the studies of all four papers (and the OpenMP front door) as one job, then
    report/index.md opening with a verdict table per study (`make demo`).

    NAME is a tour in studies/tours/ (default: demo; --full: full) or a path to a tour file. One
    progress bar covers the whole tour, with the time left. Ctrl-C stops it; the same command
    resumes where it stopped (finished studies and traces are kept). Exit status 0 when every run
    and trace succeeded, 1 when some failed (the report lists them), 2 bad input, 130 interrupted.
    """
    from .report_tour import verdict_rows, write_tour_report
    from .sweep import MissingBinaries
    from .tour import TourError, load_state, load_tour, resolve_tour_path, run_tour, state_path

    if name is not None and full:
        die("give a tour NAME or --full, not both")
    spec = name or ("full" if full else "demo")
    try:
        t = load_tour(resolve_tour_path(spec, ctx["root"]), ctx["root"], ctx["bins"])
    except TourError as e:
        die(str(e))
    except StudyError as e:
        die(e.render())
    if not report_only:
        for part in t.parts:
            for s in part.studies:
                if (why := mpi_problem(s)) is not None:
                    die(why)
    con = open_db(ctx, write=not report_only)
    if report_only:
        st = load_state(state_path(ctx["db_path"], t.name))
        if st is None:
            die(f"no run of tour '{t.name}' recorded next to {ctx['db_path']} (run: plait-bench tour {spec})")
        failed_runs, failed_traces = 0, []
    else:
        def _term(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, _term)
        try:
            res = run_tour(t, con, ctx["bins"], ctx["root"], ctx["db_path"], new=new_tour, keep_going=keep_going,
                           console=err, wait_quiet=wait_quiet)
        except MissingBinaries as e:
            lines = "\n".join(f"  - {p}" for p in e.paths)
            die(f"tour '{t.name}' needs benchmark binaries that do not exist:\n{lines}\nbuild them (make build)")
        except db.SlotTaken as e:
            die(str(e))
        except KeyboardInterrupt:
            err.print(f"\n[yellow]interrupted[/]: run `plait-bench tour {escape(spec)}` (or `make demo`) again to resume",
                      soft_wrap=True)
            sys.exit(EXIT_INTERRUPTED)
        st, failed_runs, failed_traces = res.state, res.failed_runs, res.failed_traces
    out_dir = out_dir or ctx["root"] / "report"
    try:
        files, verdicts = write_tour_report(con, t, st, out_dir)
    except OSError as e:
        die(f"cannot write the report into {out_dir}: {e.strerror or e}; nothing written")
    table = Table(title=f"Verdicts: tour '{escape(t.name)}' (report: {escape(str(files[0]))})", show_lines=True)
    for col, w in (("study", 18), ("the paper's claim", 40), ("measured here", 50), ("verdict", 12)):
        table.add_column(col, max_width=w, overflow="fold")
    for row in verdict_rows(verdicts):
        table.add_row(*(escape(c) for c in row))
    out.print(table)
    if failed_runs or failed_traces:
        err.print(f"[bold red]tour '{escape(t.name)}' did not complete cleanly:[/] {failed_runs} failed run(s)"
                  + (f", failed traces: {', '.join(failed_traces)}" if failed_traces else "")
                  + f"; {escape(str(files[0]))} lists them")
        sys.exit(EXIT_FAILED_RUNS)
    err.print(escape(f"tour '{t.name}' complete: report in {files[0]}"))


# ---- past the machine: work/span, calibration, simulation (scale.py, docs/scaling.md) ----

def _check_output(path: Path, option: str, directory: bool = False) -> Path:
    """Makes sure an output can be written before anything is measured: its folder (or, for a
    directory output, the directory itself) is created and a file can be made there; else one line,
    exit 2, nothing run. (The commands that measure for minutes wrote only at the end.)"""
    folder = path if directory else path.parent
    if not directory and path.exists() and path.is_dir():
        die(f"{option} {path}: is a directory; expected a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".plait-bench-probe.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        die(f"{option} {path}: cannot write there ({e.strerror or e}); nothing was run")
    return path


def _costs_path(ctx, costs: Path | None, required: bool = False) -> Path | None:
    from .scale import default_cost_model_path

    if costs is not None:
        if not costs.is_file():
            die(f"--costs {costs}: no such file (write one with: plait-bench calibrate)")
        return costs
    p = default_cost_model_path(ctx["root"])
    if p.is_file():
        return p
    if required:
        die(f"no cost model at {p} (write it with: plait-bench calibrate)")
    return None


def _scale_call(fn, *a, **kw):
    from .scale import ScaleError

    try:
        return fn(*a, **kw)
    except ScaleError as e:
        die(str(e))


@main.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cost model file [default: results/cost-model.json].")
@click.option("--rounds", type=click.IntRange(1, 100), default=5, help="Interleaved rounds (medians are kept).")
@common
def calibrate(ctx, output: Path | None, rounds: int) -> None:
    """Measure the simulator's cost model on this machine (spawn, steal and tracing cost) and write it."""
    from .scale import calibrate as do, default_cost_model_path

    out = _check_output(output or default_cost_model_path(ctx["root"]), "--output")
    m = _scale_call(do, ctx["bins"], out, rounds)
    out_msg = ", ".join(f"{k} {m[k]}" for k in ("spawn_ns", "steal_ns", "trace_task_ns", "trace_ns", "steal_fail_ns", "wake_ns"))
    err.print(escape(f"cost model: {out_msg} (assumed: {', '.join(m['assumed'])}); wrote {out}"))


@main.command()
@click.argument("kernel", type=click.Choice(["uts", "fib", "sparselu", "health", "amr"]))
@click.option("--threads", "threads", type=str, default=None, help="Measured thread counts, e.g. 1,2 [default: 1..the CPUs].")
@click.option("--rounds", type=click.IntRange(1, 100), default=3, help="Interleaved rounds of the measured runs.")
@click.option("--costs", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cost model [default: results/cost-model.json if it exists].")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Figure [default: report/scale/KERNEL.png].")
@click.argument("params", nargs=-1)
@common
def scale(ctx, kernel: str, threads: str | None, rounds: int, costs: Path | None, output: Path | None, params) -> None:
    """Work, span, parallelism and burdened span of KERNEL (its validation workload, or PARAMS after --),
    from a one-worker trace; the speed-up bounds plot with the measured speed-ups."""
    import tempfile

    from .scale import WORKLOADS, measured_speedups, plot_bounds, trace_run, workspan

    cpath = _costs_path(ctx, costs)
    kname, args = WORKLOADS[kernel]
    if params:
        args = list(params)
    ps = _parse_int_list(threads, "--threads", 4096) if threads else list(range(1, (os.cpu_count() or 1) + 1))
    fig = _check_output(output or ctx["root"] / "report" / "scale" / f"{kernel}.png", "--output")
    with tempfile.TemporaryDirectory() as td:
        tr = _scale_call(trace_run, ctx["bins"], kname, args, Path(td) / "t.json")
        ws = _scale_call(workspan, ctx["bins"], tr, cpath)
    meas = _scale_call(measured_speedups, ctx["bins"], kname, args, ps, rounds)
    out.print(f"{kernel} {' '.join(args)}: {ws['tasks']} tasks")
    out.print(f"  work {ws['work_ns'] / 1e6:.3f} ms, span {ws['span_ns'] / 1e6:.3f} ms, parallelism {ws['parallelism']:.1f}")
    out.print(f"  burdened span {ws['burdened_span_ns'] / 1e6:.3f} ms ({ws['burden_ns']:.0f} ns per spawn), "
              f"burdened parallelism {ws['burdened_parallelism']:.1f}"
              + ("" if cpath else " (no cost model: tracing cost not removed; run plait-bench calibrate)"))
    for r in ws["regions"]:
        out.print(f"  region {r['label']}: {r['instances']} instances, work {r['work_ns'] / 1e6:.3f} ms, "
                  f"span {r['span_ns'] / 1e6:.3f} ms, parallelism {r['parallelism']:.1f}")
    t1 = meas.get(1) or min(meas.values())
    for p in sorted(meas):
        out.print(f"  measured P={p}: {meas[p] * 1e3:.3f} ms, speed-up {t1 / meas[p]:.2f}")
    plot_bounds(ws, meas, f"{kernel} {' '.join(args)}", fig)
    out.print(f"wrote {fig}")


def _parse_int_list(s: str, option: str, hi: int) -> list[int]:
    """A comma-separated list of integers 1..hi (sorted, unique), or one line naming `option`."""
    try:
        ps = sorted({int(x) for x in s.split(",")})
    except ValueError:
        die(f"{option} {s}: expected a comma-separated list of integers 1..{hi}")
    if not ps or ps[0] < 1 or ps[-1] > hi:
        die(f"{option} {s}: the values must be in 1..{hi}")
    return ps


@main.command("simulate")
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--workers", default="1..64", show_default=True, help="1,2,4 or a range A..B (powers of two between).")
@click.option("--steal", default="one", show_default=True, help="one, half, adaptive or chunk:K.")
@click.option("--cores", type=click.IntRange(1, 4096), default=None, help="Workers share this many cores [default: one each].")
@click.option("--seed", type=click.IntRange(0, 10**12), default=1, show_default=True)
@click.option("--costs", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cost model [default: results/cost-model.json if it exists].")
@click.option("--topology", default=None, help='A machine shape, outermost level first, e.g. "package:2 numa:2 core:16".')
@click.option("--steal-ns-levels", default=None, help="Steal cost per topology distance (one per level, near to far), e.g. 300,600,2000.")
@common
def simulate_cmd(ctx, trace: Path, workers: str, steal: str, cores: int | None, seed: int, costs: Path | None,
                 topology: str | None, steal_ns_levels: str | None) -> None:
    """Replay TRACE's task DAG on simulated workers: time, speed-up, efficiency, steals, moved tasks."""
    from .scale import simulate

    cpath = _costs_path(ctx, costs)
    r = _scale_call(simulate, ctx["bins"], trace, workers, steal, cpath, cores, seed, topology, steal_ns_levels)
    c = r["costs"]
    out.print(f"{trace}: {r['tasks']} tasks, work {r['work_ns'] / 1e6:.3f} ms; steal {r['steal']}; costs from {c['source']} "
              f"(spawn {c['spawn_ns']:.1f} ns, steal {c['steal_ns']:.0f} ns; tracing's {c['trace_task_ns']:.0f} ns per task and "
              f"{c['trace_ns']:.0f} ns per spawn removed)")
    t = Table(box=None)
    for h in ("workers", "time ms", "speed-up", "efficiency", "steals", "moved/thread/s", "sim s"):
        t.add_column(h, justify="right")
    for row in r["rows"]:
        t.add_row(str(row["workers"]), f"{row['time_ns'] / 1e6:.3f}", f"{row['speedup']:.2f}", f"{row['efficiency'] * 100:.1f} %",
                  str(row["steals"]), f"{row['moved_per_thread_per_s']:.0f}", f"{row['sim_s']:.2f}")
    out.print(t)


@main.command()
@click.option("--kernels", default="uts,fib,sparselu,health,amr", show_default=True)
@click.option("--workers", "workers", default="1,2,4,8,16", show_default=True, help="Thread counts (above the CPUs: oversubscribed).")
@click.option("--rounds", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--costs", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cost model [default: results/cost-model.json, required].")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Markdown table [default: report/scale/validation.md]; the numbers go next to it as .json.")
@common
def validate(ctx, kernels: str, workers: str, rounds: int, costs: Path | None, output: Path | None) -> None:
    """The simulator against real runs: each kernel traced at 1 worker, simulated at every P
    (P above the CPUs sharing them), and run untraced at every P; predicted vs measured with the error."""
    from .scale import WORKLOADS, validate as do, validation_markdown

    ks = [k.strip() for k in kernels.split(",") if k.strip()]
    bad = [k for k in ks if k not in WORKLOADS]
    if bad or not ks:
        die(f"--kernels {kernels}: unknown {', '.join(bad) or 'empty list'} (accepted: {', '.join(WORKLOADS)})")
    cpath = _costs_path(ctx, costs, required=True)
    ps = _parse_int_list(workers, "--workers", 4096)
    fig = _check_output(output or ctx["root"] / "report" / "scale" / "validation.md", "--output")
    vs = _scale_call(do, ctx["bins"], ks, cpath, rounds, ps)
    md = validation_markdown(vs, f"cost model {cpath}, {os.cpu_count()} CPUs, {rounds} interleaved rounds (medians)")
    fig.write_text(md)
    fig.with_suffix(".json").write_text(json.dumps([{"kernel": v.kernel, "args": v.args, "measured_s": v.measured,
                                                      "predicted_s": v.predicted} for v in vs], indent=1) + "\n")
    out.print(md)
    out.print(f"wrote {fig}")


@main.command()
@click.option("--g", "gs", default="1,2,5,10,20", show_default=True, help="UTS T3 granularities (SHA-1 ops per node).")
@click.option("--workers", default="1,2,4,8,16,32,48,64", show_default=True, help="Simulated worker counts.")
@click.option("--rounds", type=click.IntRange(1, 100), default=3, show_default=True, help="Rounds of the measured runs.")
@click.option("--costs", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cost model [default: results/cost-model.json, required].")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory of the figures [default: report/scale].")
@click.option("--topology", default=None, help='Simulate a machine of this shape, e.g. "package:2 numa:2 core:16".')
@click.option("--steal-ns-levels", default=None, help="Steal cost per topology distance, near to far, e.g. 300,600,2000.")
@common
def project(ctx, gs: str, workers: str, rounds: int, costs: Path | None, out_dir: Path | None,
            topology: str | None, steal_ns_levels: str | None) -> None:
    """Study 000's Figs. 4 and 2 for Plait projected to many workers: UTS T3 traced at each
    granularity, simulated with the cost model, next to the runs measured here and the seed's numbers."""
    from .scale import plot_projection, project as do

    glist = _parse_int_list(gs, "--g", 1000000)
    cpath = _costs_path(ctx, costs, required=True)
    d = _check_output(out_dir or ctx["root"] / "report" / "scale", "--output", directory=True)
    data = _scale_call(do, ctx["bins"], cpath, glist, workers, rounds, None, topology, steal_ns_levels)
    figs = plot_projection(data, d)
    (d / "projection.json").write_text(json.dumps(data, indent=1) + "\n")
    for g, r in data["g"].items():
        row = r["simulated"][-1]
        out.print(f"g = {g}: projected {row['workers']} workers speed-up {row['speedup']:.1f} "
                  f"(efficiency {row['efficiency'] * 100:.0f} %, {row['moved_per_thread_per_s']:.0f} moved tasks/thread/s)")
    out.print("wrote " + ", ".join(str(f) for f in figs))


from .trace import trace_cli  # noqa: E402  (plait-bench trace view|summary|check)

main.add_command(trace_cli)


if __name__ == "__main__":
    main()
