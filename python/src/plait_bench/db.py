"""The results database (SQLite).

One *session* is one execution of a study file at one commit on one machine. Its plan is written to
``planned_runs`` before the first run; every run is stored in its own transaction together with its
counters and the mark that its planned slot is done, so an interrupted sweep resumes at the first
slot not done and never runs a slot twice. Failed, crashed, timed-out and unverified runs are rows
like any other, with their status and stderr line.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import sqlite3
import urllib.parse
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
CREATE TABLE IF NOT EXISTS machine_states (
    id               INTEGER PRIMARY KEY,
    session_id       INTEGER NOT NULL REFERENCES sessions(id),
    round            INTEGER NOT NULL,  -- the round that follows the reading (-1: after the last)
    taken_at         TEXT NOT NULL,
    load1            REAL,
    load5            REAL,
    others           REAL,              -- threads wanting a CPU besides the reader (quiet.py)
    steal_pct        REAL,
    cpus_online      INTEGER,
    governor         TEXT,
    turbo            TEXT,
    mem_available_mb REAL,
    cpu_pressure     REAL,
    mem_pressure     REAL,
    probe_s          REAL,              -- the calibration probe's time
    busy             TEXT               -- what disturbed the reading, NULL: quiet
);
CREATE INDEX IF NOT EXISTS machine_states_session ON machine_states(session_id);
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


SQLITE_MAGIC = b"SQLite format 3\x00"
# Every table and column the tool reads or writes: a file at our schema version must have them all,
# but the tables added to version 1 later (ADDED_TABLES), which a write connection creates in a file
# that lacks them and readers take as empty.
ADDED_TABLES = ("machine_states",)
REQUIRED = {
    t: {ln.split()[0] for ln in body.splitlines() if ln.strip() and not ln.split()[0].startswith(("UNIQUE", "PRIMARY"))}
    for t, body in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\n\);", SCHEMA, re.S)
    if t not in ADDED_TABLES
}


class DatabaseProblem(Exception):
    """A results database that cannot be used as asked (not SQLite, corrupt, another schema, not
    writable). The message is one line and names the file; the file is left as it was."""


def _uri(path: Path, **params: str) -> str:
    return f"file:{urllib.parse.quote(str(path.resolve()))}?" + "&".join(f"{k}={v}" for k, v in params.items())


def _open(path: Path, write: bool) -> sqlite3.Connection:
    """A connection that has read the schema. A read-only one never creates or changes a file.

    Reading a database in WAL mode needs its -shm file, which SQLite cannot create in a folder it may
    not write. When there is no -wal file either, every committed row is in the database file itself,
    and the file is opened as immutable (no locks, no shared memory)."""
    if write:
        con = sqlite3.connect(str(path), timeout=30, isolation_level=None)  # explicit transactions only
        con.execute("PRAGMA schema_version").fetchone()
        return con
    con = sqlite3.connect(_uri(path, mode="ro"), uri=True, timeout=30, isolation_level=None)
    try:
        con.execute("PRAGMA schema_version").fetchone()
        return con
    except sqlite3.OperationalError as e:
        con.close()
        if e.sqlite_errorname != "SQLITE_READONLY_DIRECTORY" or Path(f"{path}-wal").exists():
            raise
    con = sqlite3.connect(_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None)
    con.execute("PRAGMA schema_version").fetchone()
    return con


def check_schema(con: sqlite3.Connection, path: Path) -> bool:
    """True when the database holds nothing yet (no tables, user_version 0), False when it has our
    schema; raises DatabaseProblem for anything else (a foreign, older or newer schema)."""
    ver = con.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables and ver == 0:
        return True
    if ver > SCHEMA_VERSION:
        raise DatabaseProblem(f"{path}: results schema version {ver} is newer than this plait-bench's "
                              f"({SCHEMA_VERSION}); use the plait-bench that wrote it")
    if not {"sessions", "runs"} <= tables:
        raise DatabaseProblem(f"{path} is an SQLite database but not a plait-bench results database (no sessions and "
                              f"runs tables; its tables: {', '.join(sorted(tables)) or 'none'}); give another --db")
    if ver < SCHEMA_VERSION:
        raise DatabaseProblem(f"{path}: results schema version {ver} is older than this plait-bench's "
                              f"({SCHEMA_VERSION}) and is not converted; give another --db")
    for t, cols in REQUIRED.items():
        have = {r[1] for r in con.execute(f"PRAGMA table_info({t})")}
        lack = sorted(cols - have)
        if lack:
            what = f"no table {t}" if not have else f"table {t} lacks {', '.join(lack)}"
            raise DatabaseProblem(f"{path}: not the plait-bench results schema version {SCHEMA_VERSION} ({what}); "
                                  f"give another --db")
    return False


def _problem(e: sqlite3.DatabaseError, path: Path, write: bool) -> DatabaseProblem:
    if getattr(e, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return corrupt(path, str(e))
    return DatabaseProblem(f"cannot {'write' if write else 'read'} results database {path}: {e}")


def corrupt(path: Path | str, detail: str) -> DatabaseProblem:
    return DatabaseProblem(f"results database {path} is corrupt ({' '.join(detail.split())[:300]}); left as it "
                           f"is: restore a copy, or give another --db")


def connect(path: Path | str, write: bool = True) -> sqlite3.Connection:
    """Opens the results database after checking it, before anything is written: an SQLite file,
    intact (``PRAGMA quick_check``, which reads every page) and holding our schema, or nothing yet.

    ``write=False`` opens it read-only: nothing is created, converted or written, so a database in a
    folder the user may not write can still be read. ``write=True`` creates a missing database (and
    its folder), makes sure the file can be written, and creates the schema of an empty database in
    one transaction. Raises DatabaseProblem."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        if not write:
            raise DatabaseProblem(f"no results database at {path} (run a study first: plait-bench run quick)") from None
        head = b""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DatabaseProblem(f"cannot create results database {path}: {e.strerror or e}") from None
    except OSError as e:
        raise DatabaseProblem(f"cannot read results database {path}: {e.strerror or e}") from None
    if head and head != SQLITE_MAGIC:
        raise DatabaseProblem(f"{path} is not an SQLite database, so not a plait-bench results database; "
                              f"give another --db")
    try:
        con = _open(path, write)
    except sqlite3.DatabaseError as e:
        raise _problem(e, path, write) from None
    try:
        bad = [r[0] for r in con.execute("PRAGMA quick_check(5)")]
        if bad != ["ok"]:
            raise corrupt(path, "PRAGMA quick_check: " + "; ".join(bad))
        empty = check_schema(con, path)
        con.row_factory = sqlite3.Row
        con.execute("PRAGMA foreign_keys = ON")
        if not write:
            if empty:
                raise DatabaseProblem(f"{path} is an empty SQLite database: no results yet (run a study first)")
            return con
        # a file SQLite could only open read-only fails here, not at the first run stored
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = NORMAL")
        if empty:
            con.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")
        else:
            # tables added to the schema later: created in a file that lacks them (IF NOT EXISTS)
            added = "\n".join(stmt + ";" for stmt in SCHEMA.split(";")
                              if any(f"EXISTS {t} " in stmt or f"ON {t}(" in stmt for t in ADDED_TABLES))
            con.executescript(f"BEGIN IMMEDIATE;\n{added}\nCOMMIT;")
        return con
    except sqlite3.DatabaseError as e:
        con.close()
        raise _problem(e, path, write) from None
    except DatabaseProblem:
        con.close()
        raise


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
        # another plait-bench may have stored the same machine since the look-up above
        con.execute(
            "INSERT INTO machines (fingerprint, hostname, cpu_model, logical_cpus, physical_cores, kernel, gcc, clang,"
            " libtbb, libomp, libgomp, facts_json, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (fingerprint) DO NOTHING",
            (
                fp, facts.get("hostname"), facts.get("cpu_model"), facts.get("logical_cpus"),
                facts.get("physical_cores"), facts.get("kernel"), facts.get("gcc"), facts.get("clang"),
                facts.get("libtbb"), facts.get("libomp"), facts.get("libgomp"), json.dumps(facts, sort_keys=True), now(),
            ),
        )
        return int(con.execute("SELECT id FROM machines WHERE fingerprint = ?", (fp,)).fetchone()[0])


def find_resumable(con: sqlite3.Connection, study: str, plan_hash: str) -> sqlite3.Row | None:
    """The newest unfinished session of this study with the same plan, if any."""
    return con.execute(
        "SELECT * FROM sessions WHERE study = ? AND plan_hash = ? AND status IN ('running', 'interrupted')"
        " ORDER BY id DESC LIMIT 1",
        (study, plan_hash),
    ).fetchone()


class SessionLocks:
    """Which sessions a live process is running: POSIX record locks on one byte per session id of a
    file beside the database (``<db>-lock``). The kernel drops a process's locks when it ends, also
    by ``kill -9``, so a session whose lock can be taken is one that nobody runs any more. Locks of
    one process never conflict with each other (and closing any descriptor of the file would drop
    them all), so the file is opened once per process."""

    _fds: dict[str, int] = {}

    def __init__(self, con: sqlite3.Connection):
        path = con.execute("PRAGMA database_list").fetchone()[2]  # "" for an in-memory database
        self.path = Path(f"{path}-lock") if path else None
        self.fd = -1
        if self.path is not None:
            key = str(self.path.resolve())
            if key not in self._fds:
                try:
                    self._fds[key] = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
                except OSError as e:
                    raise DatabaseProblem(f"cannot create {self.path} (marks the sessions being run): "
                                          f"{e.strerror or e}") from None
            self.fd = self._fds[key]

    def try_hold(self, sid: int) -> bool:
        if self.fd < 0:
            return True
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, sid)
            return True
        except (BlockingIOError, PermissionError):
            return False

    def wait(self, sid: int) -> None:
        """Blocks until the process running the session ends or finishes it; the lock is then ours."""
        if self.fd >= 0:
            fcntl.lockf(self.fd, fcntl.LOCK_EX, 1, sid)

    def release(self, sid: int) -> None:
        if self.fd >= 0:
            fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, sid)


class SessionBusy(Exception):
    """The session to resume is being run by a live process (its row is ``row``)."""

    def __init__(self, row: sqlite3.Row):
        self.row = row
        super().__init__(f"session #{row['id']} is being run by another plait-bench")


class SlotTaken(RuntimeError):
    """A planned run already stored: another process ran the same session's slot."""


def claim_resumable(con: sqlite3.Connection, locks: SessionLocks, study: str, plan_hash: str) -> sqlite3.Row | None:
    """The newest unfinished session of this plan (find_resumable), locked for this process, or None.
    Raises SessionBusy when a live process runs it."""
    with Tx(con):  # one process at a time looks and locks, so two never both take a session
        row = find_resumable(con, study, plan_hash)
        if row is None or locks.try_hold(int(row["id"])):
            return row
    raise SessionBusy(row)


def create_session(con: sqlite3.Connection, *, study, plan, plan_hash: str, git: dict, machine_id: int, bins, nproc: int,
                   locks: SessionLocks | None = None) -> int:
    """Stores the session and its plan; with ``locks`` the new session is locked for this process
    before another one can see it."""
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
        if locks is not None and not locks.try_hold(sid):
            raise RuntimeError(f"session #{sid} was locked by another process before it existed")
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
    """One transaction: the run, its counters, and its planned slot marked done. The slot is taken
    first, so a slot another process stored already raises SlotTaken and nothing is written."""
    with Tx(con):
        n = con.execute("UPDATE planned_runs SET state = 'done' WHERE id = ? AND state = 'pending'", (planned["id"],)).rowcount
        if n != 1:
            raise SlotTaken(f"planned run {planned['id']} of session #{planned['session_id']} was already stored "
                            f"(by another plait-bench on this database?)")
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


def store_machine_state(con: sqlite3.Connection, session_id: int, round_: int, state: dict, busy: str | None) -> None:
    cols = ["load1", "load5", "others", "steal_pct", "cpus_online", "governor", "turbo", "mem_available_mb",
            "cpu_pressure", "mem_pressure", "probe_s"]
    con.execute("BEGIN IMMEDIATE")
    con.execute(
        f"INSERT INTO machine_states (session_id, round, taken_at, {', '.join(cols)}, busy) "
        f"VALUES (?, ?, ?, {', '.join('?' * len(cols))}, ?)",
        (session_id, round_, now(), *[state.get(c) for c in cols], busy))
    con.execute("COMMIT")


def machine_states(con: sqlite3.Connection, session_ids: list[int]) -> list[sqlite3.Row]:
    """The readings of these sessions in order; none from a file older than the table."""
    if not session_ids:
        return []
    if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'machine_states'").fetchone() is None:
        return []
    return con.execute(
        f"SELECT * FROM machine_states WHERE session_id IN ({','.join('?' * len(session_ids))}) ORDER BY id",
        list(session_ids)).fetchall()


def best_probe(con: sqlite3.Connection, machine_id: int) -> float | None:
    """The fastest calibration probe ever read on this machine (the probe's reference speed)."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'machine_states'").fetchone() is None:
        return None
    row = con.execute("SELECT MIN(m.probe_s) FROM machine_states m JOIN sessions s ON s.id = m.session_id "
                      "WHERE s.machine_id = ? AND m.probe_s > 0", (machine_id,)).fetchone()
    return row[0] if row and row[0] else None
