"""The results database (SQLite).

One *session* is one execution of a study file at one commit on one machine. Its plan is written to
``planned_runs`` before the first run; every run is stored in its own transaction together with its
counters and the mark that its planned slot is done, so an interrupted sweep resumes at the first
slot not done and never runs a slot twice. Failed, crashed, timed-out and unverified runs are rows
like any other, with their status and stderr line.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS machines (
    id             INTEGER PRIMARY KEY,
    fingerprint    TEXT NOT NULL UNIQUE,
    hostname       TEXT,
    cpu_model      TEXT,
    logical_cpus   INTEGER,
    physical_cores INTEGER,
    kernel         TEXT,
    gcc            TEXT,
    clang          TEXT,
    libtbb         TEXT,
    libomp         TEXT,
    libgomp        TEXT,
    facts_json     TEXT NOT NULL,
    first_seen     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id            INTEGER PRIMARY KEY,
    study         TEXT NOT NULL,
    study_path    TEXT,
    study_text    TEXT,
    plan_hash     TEXT NOT NULL,
    seed          INTEGER NOT NULL,
    rounds        INTEGER NOT NULL,
    warmup        INTEGER NOT NULL,
    nproc         INTEGER,
    commit_hash   TEXT,
    commit_short  TEXT,
    dirty         INTEGER,
    machine_id    INTEGER REFERENCES machines(id),
    gcc_bin       TEXT,
    clang_bin     TEXT,
    settings_json TEXT,
    started_at    TEXT NOT NULL,
    finished_at   TEXT,
    status        TEXT NOT NULL DEFAULT 'running'  -- running | complete | failed | interrupted
);
CREATE TABLE IF NOT EXISTS planned_runs (
    id         INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    seq        INTEGER NOT NULL,
    round      INTEGER NOT NULL,          -- 0 = warm-up round
    kind       TEXT NOT NULL,             -- warmup | measured
    config_key TEXT NOT NULL,
    kernel     TEXT NOT NULL,
    runtime    TEXT NOT NULL,
    series     TEXT NOT NULL,
    threads    INTEGER NOT NULL,
    params_json TEXT NOT NULL,
    base_json  TEXT NOT NULL,             -- parameters every runtime shares (serial baseline match)
    timeout_s  REAL NOT NULL,
    state      TEXT NOT NULL DEFAULT 'pending',  -- pending | done
    UNIQUE (session_id, seq)
);
CREATE TABLE IF NOT EXISTS runs (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES sessions(id),
    planned_id   INTEGER NOT NULL UNIQUE REFERENCES planned_runs(id),
    kernel       TEXT NOT NULL,
    runtime      TEXT NOT NULL,
    series       TEXT NOT NULL,
    threads      INTEGER NOT NULL,
    params_json  TEXT NOT NULL,
    base_json    TEXT NOT NULL,
    echo_params_json TEXT,
    config_key   TEXT NOT NULL,
    round        INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,   -- ok | unverified | bad-input | error | crashed | timeout | missing | no-output
    exit_code    INTEGER,
    time_s       REAL,            -- the binary's own measurement (JSON time_s)
    wall_s       REAL,            -- the whole process, as seen from here
    verified     INTEGER NOT NULL DEFAULT 0,
    check_text   TEXT,
    message      TEXT,            -- the stderr line that names the problem, for failed runs
    stderr_tail  TEXT,
    stats_json   TEXT,
    command      TEXT NOT NULL,
    binary       TEXT NOT NULL,
    pinning      TEXT,
    env_json     TEXT,
    started_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_session ON runs(session_id);
CREATE TABLE IF NOT EXISTS run_stats (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name   TEXT NOT NULL,
    value  REAL,
    text   TEXT,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS instr (
    id             INTEGER PRIMARY KEY,
    kernel         TEXT NOT NULL,
    build          TEXT NOT NULL,     -- gcc | clang (which tree's serial binary)
    binary         TEXT NOT NULL,
    commit_hash    TEXT,
    commit_short   TEXT,
    machine_id     INTEGER REFERENCES machines(id),
    measured_at    TEXT NOT NULL,
    unit           TEXT NOT NULL,     -- what instr_per_unit counts: sha1_op (uts) | call (fib)
    instr_per_unit REAL NOT NULL,
    instr_per_node REAL,              -- all instructions of a g=1 run divided by its nodes (uts)
    details_json   TEXT NOT NULL      -- the measured runs: params, nodes, total instructions
);
"""


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def connect(path: Path | str) -> sqlite3.Connection:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(path), timeout=30, isolation_level=None)  # explicit transactions only
    con.row_factory = sqlite3.Row
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    ver = con.execute("PRAGMA user_version").fetchone()[0]
    if ver > SCHEMA_VERSION:
        raise RuntimeError(f"{path}: database schema version {ver} is newer than this plait-bench ({SCHEMA_VERSION})")
    con.executescript(SCHEMA)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return con


class Tx:
    """``with Tx(con): ...`` — BEGIN IMMEDIATE / COMMIT, ROLLBACK on error."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

    def __enter__(self) -> sqlite3.Connection:
        self.con.execute("BEGIN IMMEDIATE")
        return self.con

    def __exit__(self, et, ev, tb) -> None:
        if et is None:
            self.con.execute("COMMIT")
        else:
            self.con.execute("ROLLBACK")


def upsert_machine(con: sqlite3.Connection, facts: dict) -> int:
    stable = {k: v for k, v in facts.items() if k not in ("mem_total_kib",)}
    fp = hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:20]
    row = con.execute("SELECT id FROM machines WHERE fingerprint = ?", (fp,)).fetchone()
    if row:
        return int(row["id"])
    with Tx(con):
        cur = con.execute(
            "INSERT INTO machines (fingerprint, hostname, cpu_model, logical_cpus, physical_cores, kernel, gcc, clang,"
            " libtbb, libomp, libgomp, facts_json, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                fp, facts.get("hostname"), facts.get("cpu_model"), facts.get("logical_cpus"),
                facts.get("physical_cores"), facts.get("kernel"), facts.get("gcc"), facts.get("clang"),
                facts.get("libtbb"), facts.get("libomp"), facts.get("libgomp"), json.dumps(facts, sort_keys=True), now(),
            ),
        )
        return int(cur.lastrowid)


def find_resumable(con: sqlite3.Connection, study: str, plan_hash: str) -> sqlite3.Row | None:
    """The newest unfinished session of this study with the same plan, if any."""
    return con.execute(
        "SELECT * FROM sessions WHERE study = ? AND plan_hash = ? AND status IN ('running', 'interrupted')"
        " ORDER BY id DESC LIMIT 1",
        (study, plan_hash),
    ).fetchone()


def create_session(con: sqlite3.Connection, *, study, plan, plan_hash: str, git: dict, machine_id: int, bins, nproc: int) -> int:
    s = study.settings
    with Tx(con):
        cur = con.execute(
            "INSERT INTO sessions (study, study_path, study_text, plan_hash, seed, rounds, warmup, nproc, commit_hash,"
            " commit_short, dirty, machine_id, gcc_bin, clang_bin, settings_json, started_at, status)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'running')",
            (
                study.name, str(study.path), study.text, plan_hash, s.seed, s.rounds, s.warmup, nproc,
                git.get("commit"), git.get("short"), None if git.get("dirty") is None else int(git["dirty"]),
                machine_id, str(bins.gcc), str(bins.clang), json.dumps(s.__dict__, sort_keys=True), now(),
            ),
        )
        sid = int(cur.lastrowid)
        con.executemany(
            "INSERT INTO planned_runs (session_id, seq, round, kind, config_key, kernel, runtime, series, threads,"
            " params_json, base_json, timeout_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    sid, p.seq, p.round, p.kind, p.config.key, p.config.kernel, p.config.runtime, p.config.series,
                    p.config.threads, json.dumps(p.config.params_dict, sort_keys=True),
                    json.dumps(dict(p.config.base_params), sort_keys=True), p.config.timeout_s,
                )
                for p in plan
            ],
        )
    return sid


def set_session_status(con: sqlite3.Connection, sid: int, status: str) -> None:
    with Tx(con):
        con.execute(
            "UPDATE sessions SET status = ?, finished_at = CASE WHEN ? = 'running' THEN NULL ELSE ? END WHERE id = ?",
            (status, status, now(), sid),
        )


def pending_runs(con: sqlite3.Connection, sid: int) -> list[sqlite3.Row]:
    return con.execute(
        "SELECT * FROM planned_runs WHERE session_id = ? AND state = 'pending' ORDER BY seq", (sid,)
    ).fetchall()


@dataclass
class RunRecord:
    status: str
    exit_code: int | None
    time_s: float | None
    wall_s: float | None
    verified: bool
    check_text: str | None
    message: str | None
    stderr_tail: str | None
    stats: dict[str, Any]
    echo_params: dict[str, Any] | None
    command: str
    binary: str
    pinning: str
    env: dict[str, str]
    started_at: str


def store_run(con: sqlite3.Connection, planned: sqlite3.Row, rec: RunRecord) -> int:
    """One transaction: the run, its counters, and its planned slot marked done."""
    with Tx(con):
        cur = con.execute(
            "INSERT INTO runs (session_id, planned_id, kernel, runtime, series, threads, params_json, base_json,"
            " echo_params_json, config_key, round, kind, status, exit_code, time_s, wall_s, verified, check_text,"
            " message, stderr_tail, stats_json, command, binary, pinning, env_json, started_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                planned["session_id"], planned["id"], planned["kernel"], planned["runtime"], planned["series"],
                planned["threads"], planned["params_json"], planned["base_json"],
                json.dumps(rec.echo_params, sort_keys=True) if rec.echo_params is not None else None,
                planned["config_key"], planned["round"], planned["kind"], rec.status, rec.exit_code, rec.time_s,
                rec.wall_s, int(rec.verified), rec.check_text, rec.message, rec.stderr_tail,
                json.dumps(rec.stats, sort_keys=True), rec.command, rec.binary, rec.pinning,
                json.dumps(rec.env, sort_keys=True), rec.started_at,
            ),
        )
        rid = int(cur.lastrowid)
        rows = []
        for k, v in rec.stats.items():
            if isinstance(v, bool):
                rows.append((rid, k, float(v), None))
            elif isinstance(v, (int, float)):
                rows.append((rid, k, float(v), None))
            else:
                rows.append((rid, k, None, str(v)))
        con.executemany("INSERT INTO run_stats (run_id, name, value, text) VALUES (?,?,?,?)", rows)
        n = con.execute("UPDATE planned_runs SET state = 'done' WHERE id = ? AND state = 'pending'", (planned["id"],)).rowcount
        if n != 1:
            raise RuntimeError(f"planned run {planned['id']} was already done (another plait-bench on this database?)")
    return rid


def store_instr(con: sqlite3.Connection, **kw: Any) -> int:
    with Tx(con):
        cur = con.execute(
            "INSERT INTO instr (kernel, build, binary, commit_hash, commit_short, machine_id, measured_at, unit,"
            " instr_per_unit, instr_per_node, details_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                kw["kernel"], kw["build"], kw["binary"], kw.get("commit_hash"), kw.get("commit_short"),
                kw.get("machine_id"), now(), kw["unit"], kw["instr_per_unit"], kw.get("instr_per_node"),
                json.dumps(kw.get("details", {}), sort_keys=True),
            ),
        )
        return int(cur.lastrowid)


def latest_session(con: sqlite3.Connection, study: str | None = None) -> sqlite3.Row | None:
    if study:
        return con.execute("SELECT * FROM sessions WHERE study = ? ORDER BY id DESC LIMIT 1", (study,)).fetchone()
    return con.execute("SELECT * FROM sessions ORDER BY id DESC LIMIT 1").fetchone()


def session_runs(con: sqlite3.Connection, sid: int) -> list[sqlite3.Row]:
    return con.execute("SELECT * FROM runs WHERE session_id = ? ORDER BY id", (sid,)).fetchall()


def machine(con: sqlite3.Connection, mid: int | None) -> dict:
    if mid is None:
        return {}
    row = con.execute("SELECT facts_json FROM machines WHERE id = ?", (mid,)).fetchone()
    return json.loads(row["facts_json"]) if row else {}


def latest_instr(con: sqlite3.Connection, kernel: str, commit: str | None = None) -> list[sqlite3.Row]:
    """Newest instruction measurement per build, preferring the given commit."""
    out = []
    for build in ("gcc", "clang"):
        row = None
        if commit:
            row = con.execute(
                "SELECT * FROM instr WHERE kernel = ? AND build = ? AND commit_hash = ? ORDER BY id DESC LIMIT 1",
                (kernel, build, commit),
            ).fetchone()
        if row is None:
            row = con.execute(
                "SELECT * FROM instr WHERE kernel = ? AND build = ? ORDER BY id DESC LIMIT 1", (kernel, build)
            ).fetchone()
        if row is not None:
            out.append(row)
    return out


def rows_to_dicts(rows: Iterable[sqlite3.Row]) -> list[dict]:
    return [dict(r) for r in rows]
