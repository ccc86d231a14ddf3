"""Tours: the studies of several papers, their traces and one report with verdicts, run as one job
(`make demo`: studies/tours/demo.toml; `make demo FULL=1`: studies/tours/full.toml).

A tour file::

    [tour]
    name = "demo"
    description = "..."

    [[part]]
    id = "002"                      # the study it reproduces: 000, 001, 002, 003, omp or mpi (verdicts.py)
    title = "..."                   # the report's section title
    studies = ["demo-002"]          # study files (studies/NAME.toml), run in order, one session each
    est_s = 20                      # expected seconds on this 2-core machine: the progress bar's weight
    [[part.trace]]                  # traced runs drawn as study 002's per-task timeline
    name = "mandel-plait"
    kernel = "mandel"
    runtime = "plait"               # plait (PLAIT_TRACE); libomp, gomp@plait or libomp@plait (the OMPT
                                    # tool, libplait-ompt.so: on libomp, or on libplait-omp preloaded)
    threads = 2
    params = { size = "small", variant = "taskloop-linear", grain = 256 }

The tour runs every part's studies (sweep.run_study: interleaved, shuffled rounds, each run stored as
it ends) and traces under one progress bar whose total is the sum of the parts' estimates, so the
remaining-time estimate holds across parts of very different run lengths. Its progress is kept in a
state file next to the results database (``tour-NAME.json``): the sessions and traces done so far,
at the commit they ran at. Interrupted (Ctrl-C), the same command resumes: finished studies and
traces are kept, an interrupted study resumes its session. A finished tour, another commit or another
tour file starts afresh (``--new`` too). The report (report_tour.py) is written at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Column
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .machine import git_state
from .registry import BinDirs, expected_omp_library, parse_runtime
from .runner import execute
from .study import Config, Study, StudySettings, load_study, resolve_study_path

PART_IDS = ("000", "001", "002", "003", "omp", "mpi")
TRACE_RUNTIMES = ("plait", "libomp", "gomp@plait", "libomp@plait")
# The traced runtimes whose timeline comes from the OMPT tool (tools/ompt) instead of Plait's tracer.
OMPT_TRACED = ("libomp", "gomp@plait", "libomp@plait")
TOUR_KEYS, PART_KEYS = {"name", "description"}, {"id", "title", "studies", "est_s", "trace"}
TRACE_KEYS = {"name", "kernel", "runtime", "threads", "params"}
TRACE_TIMEOUT_S = 120.0
TRACE_EST_S = 3.0  # progress weight of one traced run


class TourError(Exception):
    """A tour file that cannot be run: one line naming the problem (render())."""

    def __init__(self, path: Path, problem: str):
        self.path, self.problem = path, problem
        super().__init__(f"tour file {path}: {problem}")


@dataclass
class TraceSpec:
    name: str
    kernel: str
    runtime: str
    threads: int
    params: dict[str, str]

    def config(self) -> Config:
        rt, tag = parse_runtime(self.runtime)
        return Config(kernel=self.kernel, runtime=rt, compiler=tag, threads=self.threads,
                      params=tuple(sorted(self.params.items())), timeout_s=TRACE_TIMEOUT_S)

    def binary(self, bins: BinDirs) -> Path:
        rt, tag = parse_runtime(self.runtime)
        return bins.binary(self.kernel, rt, tag)


@dataclass
class Part:
    id: str
    title: str
    studies: list[Study]
    est_s: float
    traces: list[TraceSpec] = field(default_factory=list)


@dataclass
class Tour:
    path: Path
    name: str
    description: str
    parts: list[Part]
    text_hash: str

    @property
    def total_weight(self) -> float:
        return sum(p.est_s + TRACE_EST_S * len(p.traces) for p in self.parts)


def resolve_tour_path(spec: str, root: Path) -> Path:
    """``demo`` -> studies/tours/demo.toml; a path is taken as is."""
    p = Path(spec)
    if p.suffix == ".toml" or os.sep in spec:
        return p
    return root / "studies" / "tours" / f"{spec}.toml"


def load_tour(path: Path, root: Path, bins: BinDirs | None = None, np: int | None = None,
              check_binaries: bool = True) -> Tour:
    """Parse and check a tour file and every study it names. Raises TourError (one problem) or the
    study's StudyError (study.py)."""
    if not path.is_file():
        raise TourError(path, f"no such tour file (the tours are {', '.join(sorted(p.stem for p in (root / 'studies' / 'tours').glob('*.toml')))})")
    try:
        raw = path.read_bytes()
        doc = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise TourError(path, f"cannot read it as TOML: {e}") from None
    extra = set(doc) - {"tour", "part"}
    if extra:
        raise TourError(path, f"unknown table(s) {', '.join(sorted(extra))}; accepted: [tour], [[part]]")
    head = doc.get("tour")
    if not isinstance(head, dict) or not isinstance(head.get("name"), str) or not head["name"]:
        raise TourError(path, "[tour] needs a name (a non-empty string)")
    if set(head) - TOUR_KEYS:
        raise TourError(path, f"unknown key(s) in [tour]: {', '.join(sorted(set(head) - TOUR_KEYS))}; accepted: name, description")
    parts_raw = doc.get("part")
    if not isinstance(parts_raw, list) or not parts_raw:
        raise TourError(path, "no [[part]]: a tour runs at least one part")
    parts: list[Part] = []
    seen_traces: set[str] = set()
    for i, p in enumerate(parts_raw, 1):
        where = f"part {i}"
        if set(p) - PART_KEYS:
            raise TourError(path, f"{where}: unknown key(s) {', '.join(sorted(set(p) - PART_KEYS))}; accepted: {', '.join(sorted(PART_KEYS))}")
        pid = p.get("id")
        if pid not in PART_IDS:
            raise TourError(path, f"{where}: id {pid!r} is not one of {', '.join(PART_IDS)}")
        if any(q.id == pid for q in parts):
            raise TourError(path, f"{where}: id {pid} appears twice")
        names = p.get("studies")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise TourError(path, f"{where} ({pid}): studies must be a non-empty list of study names")
        est = p.get("est_s", 60)
        if isinstance(est, bool) or not isinstance(est, (int, float)) or not 0 < est <= 7 * 24 * 3600:
            raise TourError(path, f"{where} ({pid}): est_s must be a number of seconds in (0, 604800]")
        studies = [load_study(resolve_study_path(n, root), bins, np=np, check_binaries=check_binaries) for n in names]
        traces = []
        for j, t in enumerate(p.get("trace", []) or [], 1):
            tw = f"{where} ({pid}), trace {j}"
            if not isinstance(t, dict) or set(t) - TRACE_KEYS:
                raise TourError(path, f"{tw}: accepted keys are {', '.join(sorted(TRACE_KEYS))}")
            name = t.get("name")
            if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_." for c in name):
                raise TourError(path, f"{tw}: name must be letters, digits, '-', '_' or '.'")
            if name in seen_traces:
                raise TourError(path, f"{tw}: trace name {name} appears twice")
            seen_traces.add(name)
            kernel = t.get("kernel")
            if not isinstance(kernel, str) or not kernel or not all(c.isalnum() or c == "-" for c in kernel):
                raise TourError(path, f"{tw}: kernel must be a benchmark name such as mandel or amr")
            if check_binaries and bins is not None and t.get("runtime") in TRACE_RUNTIMES \
                    and not (exe := bins.binary(kernel, *parse_runtime(t["runtime"]))).is_file():
                raise TourError(path, f"{tw}: no binary {exe} (build it: make build)")
            if t.get("runtime") not in TRACE_RUNTIMES:
                raise TourError(path, f"{tw}: runtime {t.get('runtime')!r} cannot be traced; accepted: {', '.join(TRACE_RUNTIMES)}")
            th = t.get("threads", 2)
            if isinstance(th, bool) or not isinstance(th, int) or not 1 <= th <= 4096:
                raise TourError(path, f"{tw}: threads must be an integer in 1..4096")
            params = t.get("params", {})
            if not isinstance(params, dict) or not all(isinstance(v, (str, int, float, bool)) for v in params.values()):
                raise TourError(path, f"{tw}: params must be a table of plain values")
            traces.append(TraceSpec(name, t["kernel"], t["runtime"], th,
                                    {k: (("1" if v else "0") if isinstance(v, bool) else str(v)) for k, v in params.items()}))
        parts.append(Part(pid, str(p.get("title") or pid), studies, float(est), traces))
    h = hashlib.sha256(raw + b"".join(s.plan_hash().encode() for p in parts for s in p.studies)).hexdigest()[:16]
    return Tour(path, head["name"], str(head.get("description", "")), parts, h)


# ---- state ---------------------------------------------------------------------------------------


def state_path(db_path: Path, tour: str) -> Path:
    return Path(db_path).with_name(f"tour-{tour}.json")


def traces_dir(db_path: Path, tour: str) -> Path:
    return Path(db_path).parent / "traces" / tour


def load_state(path: Path) -> dict | None:
    try:
        st = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return st if isinstance(st, dict) and isinstance(st.get("sessions"), dict) else None


def save_state(path: Path, st: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(st, indent=1, sort_keys=True))
    os.replace(tmp, path)


@dataclass
class TourResult:
    state: dict
    failed_runs: int
    failed_traces: list[str]


def _session_done(con: sqlite3.Connection, sid) -> bool:
    row = con.execute("SELECT status FROM sessions WHERE id = ?", (sid,)).fetchone() if isinstance(sid, int) else None
    return row is not None and row["status"] in ("complete", "failed")


def run_tour(tour: Tour, con: sqlite3.Connection, bins: BinDirs, root: Path, db_path: Path, *,
             new: bool = False, keep_going: bool = False, console: Console | None = None,
             wait_quiet: float = 0.0) -> TourResult:
    """Run the tour (or resume it). KeyboardInterrupt leaves the state file for the next call."""
    from .sweep import run_study

    console = console or Console(stderr=True)
    git = git_state(root)
    spath = state_path(db_path, tour.name)
    st = None if new else load_state(spath)
    if st is not None and (st.get("complete") or st.get("commit") != git["commit"] or st.get("hash") != tour.text_hash):
        st = None
    if st is None:
        st = {"tour": tour.name, "commit": git["commit"], "hash": tour.text_hash, "complete": False,
              "sessions": {}, "traces": {}}
    else:
        console.print(f"resuming tour '{escape(tour.name)}': {len(st['sessions'])} studies and {len(st['traces'])} "
                      f"traces already done")
    save_state(spath, st)
    tdir = traces_dir(db_path, tour.name)
    failed_runs = 0
    failed_traces: list[str] = []
    with Progress(
        TextColumn(f"[bold]tour {escape(tour.name)}[/]"),
        BarColumn(bar_width=24),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis")),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("", total=tour.total_weight)
        for part in tour.parts:
            nruns = sum(len(s.plan()) for s in part.studies)
            step = part.est_s / max(nruns, 1)
            for study in part.studies:
                sid = st["sessions"].get(study.name)
                if sid is not None and _session_done(con, sid):
                    progress.advance(task, step * len(study.plan()))
                    failed_runs += _failed_count(con, sid)
                    continue
                res = run_study(study, con, bins, root, keep_going=keep_going, console=progress.console,
                                outer=(progress, task, step), wait_quiet=wait_quiet)
                st["sessions"][study.name] = res.session_id
                failed_runs += len(res.failed)
                save_state(spath, st)
            for t in part.traces:
                done = st["traces"].get(t.name)
                if done and done.get("status") == "ok" and Path(done["path"]).is_file():
                    progress.advance(task, TRACE_EST_S)
                    continue
                progress.update(task, description=f"trace {escape(t.name)}")
                st["traces"][t.name] = rec = _trace(t, bins, tdir)
                if rec["status"] != "ok":
                    failed_traces.append(t.name)
                    progress.console.print(f"[red]FAILED[/] trace {escape(t.name)}: {escape(rec['message'])}")
                save_state(spath, st)
                progress.advance(task, TRACE_EST_S)
        progress.update(task, description="done")
    st["complete"] = True
    save_state(spath, st)
    return TourResult(st, failed_runs, failed_traces)


def _failed_count(con: sqlite3.Connection, sid: int) -> int:
    from .runner import FAILED_STATUSES

    q = f"SELECT COUNT(*) FROM runs WHERE session_id = ? AND status IN ({','.join('?' * len(FAILED_STATUSES))})"
    return int(con.execute(q, (sid, *FAILED_STATUSES)).fetchone()[0])


def ompt_tool(bins: BinDirs) -> Path:
    """libplait-ompt.so of the clang tree (tools/ompt): build/clang-release/lib next to its bin/."""
    return bins.clang.parent / "lib" / "libplait-ompt.so"


def _trace(t: TraceSpec, bins: BinDirs, tdir: Path) -> dict:
    """One traced run (verified like any run) into tdir/NAME.json."""
    from .registry import binary_help

    cfg = t.config()
    exe = t.binary(bins)
    out = tdir / f"{t.name}.json"
    rec = {"status": "failed", "path": str(out), "message": "", "kernel": t.kernel, "runtime": t.runtime,
           "threads": t.threads, "params": t.params}
    if not exe.is_file():
        rec["message"] = f"no binary {exe} (make build)"
        return rec
    env = {"PLAIT_TRACE": str(out), "PLAIT_TRACE_PROGRAM": exe.name}
    if t.runtime in OMPT_TRACED:
        tool = ompt_tool(bins)
        if not tool.is_file():
            rec["message"] = f"no OMPT tool {tool} (cmake --build --preset clang-release --target plait-ompt)"
            return rec
        env["OMP_TOOL_LIBRARIES"] = str(tool)
    if cfg.compiler == "plait":  # gomp@plait, libomp@plait: the OpenMP binary on libplait-omp, preloaded
        lib, why = bins.omp_preload("plait")
        if lib is None:
            rec["message"] = why
            return rec
        env["LD_PRELOAD"] = str(lib)
    tdir.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    settings = StudySettings(name="tour-trace", binary_warmup=0, timeout_s=TRACE_TIMEOUT_S)
    r = execute(cfg, exe, settings, env, binary_help(exe),
                omp_library=(expected_omp_library(cfg.runtime, cfg.compiler if cfg.compiler == "plait" else ""),
                             cfg.compiler == "plait"))
    if r.status != "ok":
        rec["message"] = f"{r.status}: {r.message or ''}".strip()
    elif not out.is_file():
        rec["message"] = f"the run wrote no trace {out}"
    else:
        rec.update(status="ok", time_s=r.time_s, message="")
    return rec
