"""Bad input of every kind ends in one line naming the problem and exit status 2 (never a traceback),
and leaves the results database as it was: study files (binary bytes, values out of range, no
[[benchmark]]), binaries' directories that do not exist, corrupt or foreign databases, read-only
folders, and two runs of one study at once."""

import ctypes
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from plait_bench import db, report
from plait_bench.cli import main
from conftest import bench_text, study_text

SMALL = study_text("small", 1, 0, 7, bench_text("fib", ["serial", "plait"], '"1..2"', "{ n = 10 }"))


def env_for(bins, dbp) -> dict:
    return {"PLAIT_BENCH_GCC_BIN": str(bins.gcc), "PLAIT_BENCH_CLANG_BIN": str(bins.clang), "PLAIT_BENCH_DB": str(dbp)}


def pb(args, env=None):
    """plait-bench in this process (faster than a new interpreter); `run` installs a SIGTERM
    handler, which is put back."""
    term = signal.getsignal(signal.SIGTERM)
    try:
        return CliRunner().invoke(main, [str(a) for a in args], env=env)
    finally:
        signal.signal(signal.SIGTERM, term)


def one_line_error(r, *words, code=2):
    """Exit status `code`, no traceback, and exactly one line on stderr holding every word."""
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("plait-bench: error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def stored(tmp_path, write_study, fake_bins):
    """A database holding one complete session of SMALL (3 runs): (study path, database, env)."""
    path = write_study(SMALL, "small.toml")
    dbp = tmp_path / "results" / "plait.db"
    env = env_for(fake_bins, dbp)
    # in a process of its own, so that every row is in the database file when it ends
    cp = subprocess.run([sys.executable, "-m", "plait_bench", "run", str(path), "--no-summary"], capture_output=True,
                        text=True, env={**os.environ, **env})
    assert cp.returncode == 0, cp.stderr
    return path, dbp, env


# ---- study files ------------------------------------------------------------------------------


def test_binary_garbage_as_study_file(tmp_path, fake_bins):
    p = tmp_path / "garbage.toml"
    p.write_bytes(b"\x97\xff\x00\x13binary" + bytes(range(256)))
    dbp = tmp_path / "g.db"
    for verb in ("plan", "run"):
        one_line_error(pb([verb, p], env_for(fake_bins, dbp)), str(p), "not a text file", "byte 0x97 at offset 0",
                       "UTF-8")
    assert not dbp.exists()


def test_seed_out_of_range_fails_at_plan(tmp_path, write_study, fake_bins):
    dbp = tmp_path / "s.db"
    env = env_for(fake_bins, dbp)
    bad = write_study(SMALL.replace("seed = 7", "seed = 99999999999999999999999"), "bad.toml")
    for verb in ("plan", "run"):
        one_line_error(pb([verb, bad], env), "study.seed: 99999999999999999999999 is out of range",
                       "accepted: an integer in 0..9223372036854775807")
    assert not dbp.exists()
    # the largest accepted seed is stored with its session
    top = write_study(SMALL.replace("seed = 7", f"seed = {2**63 - 1}"), "top.toml")
    r = pb(["run", top, "--no-summary"], env)
    assert r.exit_code == 0, r.stderr
    assert sqlite3.connect(dbp).execute("SELECT seed FROM sessions").fetchone()[0] == 2**63 - 1


def test_threads_and_parameter_ranges(tmp_path, write_study, fake_bins):
    env = env_for(fake_bins, tmp_path / "r.db")
    big = write_study(SMALL.replace('threads = "1..2"', 'threads = "1..100000"'), "t.toml")
    one_line_error(pb(["plan", big], env), "benchmark[1] (fib).threads: '1..100000' asks for 100000 threads",
                   "accepted: 1..4096")
    # a range is checked before it is expanded: this one would not fit in memory
    t0 = time.monotonic()
    huge = write_study(SMALL.replace('threads = "1..2"', 'threads = "1..99999999999999"'), "h.toml")
    one_line_error(pb(["plan", huge], env), "asks for 99999999999999 threads")
    assert time.monotonic() - t0 < 30
    neg = write_study(SMALL.replace("n = 10", "n = -5"), "n.toml")
    one_line_error(pb(["plan", neg], env), "benchmark[1] (fib): parameter n: -5 is out of range",
                   "accepted: 0..50 (fib-serial --help)")
    # without binaries the built-in ranges of fib and uts apply
    none = {"PLAIT_BENCH_GCC_BIN": str(tmp_path / "none"), "PLAIT_BENCH_CLANG_BIN": str(tmp_path / "none"),
            "PLAIT_BENCH_DB": str(tmp_path / "r.db")}
    one_line_error(pb(["plan", neg], none), "parameter n: -5 is out of range; accepted: 0..50 (built-in list)")


def test_no_benchmark_tables_named_literally(write_study, fake_bins, tmp_path):
    env = env_for(fake_bins, tmp_path / "x.db")
    one_line_error(pb(["plan", write_study("[study]\nname = 'x'\n", "x.toml")], env),
                   "no [[benchmark]] tables: a study needs at least one")
    r = pb(["plan", write_study("study = 3\nenv = 2\n" + SMALL[SMALL.index("[[benchmark]]"):], "y.toml")], env)
    assert r.exit_code == 2 and "[study] must be a table" in r.stderr and "[env] must be a table" in r.stderr


def test_binaries_directory_that_does_not_exist(tmp_path, write_study, fake_bins):
    gone = tmp_path / "nonexistent"
    env = {**env_for(fake_bins, tmp_path / "b.db"), "PLAIT_BENCH_GCC_BIN": str(gone)}
    nq = write_study(SMALL.replace('kernel = "fib"', 'kernel = "nqueens"').replace("params = { n = 10 }", ""), "nq.toml")
    line = one_line_error(pb(["plan", nq], env), f"PLAIT_BENCH_GCC_BIN={gone}: no such directory")
    assert "unknown benchmark" not in line
    fib = write_study(SMALL, "fib.toml")
    one_line_error(pb(["plan", fib], env), "benchmark binaries missing", f"PLAIT_BENCH_GCC_BIN={gone}: no such directory")
    one_line_error(pb(["run", fib], env), "needs benchmark binaries from a directory that does not exist",
                   f"PLAIT_BENCH_GCC_BIN={gone}: no such directory")
    one_line_error(pb(["run", "--gcc-bin", gone, fib], env_for(fake_bins, tmp_path / "b.db")),
                   f"--gcc-bin {gone}: no such directory")
    assert sqlite3.connect(tmp_path / "b.db").execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    # a directory the study does not need may be missing (a gcc-only study, no clang tree)
    r = pb(["plan", fib], {**env_for(fake_bins, tmp_path / "b.db"), "PLAIT_BENCH_CLANG_BIN": str(gone)})
    assert r.exit_code == 0, r.stderr


# ---- the results database ---------------------------------------------------------------------

READ_VERBS = [["sessions"], ["summary"], ["export"], ["history", "small"]]


def test_corrupt_database_every_verb(stored, tmp_path):
    path, dbp, env = stored
    con = sqlite3.connect(dbp)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'run_stats'").fetchone()[0]
    con.close()
    raw = bytearray(dbp.read_bytes())
    # garbage over the run_stats table, which sessions, summary and export never read
    raw[(root - 1) * page:root * page] = bytes((i * 37 + 11) % 256 for i in range(page))
    dbp.write_bytes(bytes(raw))
    before = digest(dbp)
    for args in READ_VERBS + [["report", "--out", tmp_path / "rep"], ["run", path], ["instr", "--kernel", "fib"]]:
        one_line_error(pb(args, env), f"results database {dbp} is corrupt", "left as it is")
    assert digest(dbp) == before
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("make, words", [
    (lambda c: c.execute("CREATE TABLE notes (x)"), ["is an SQLite database but not a plait-bench results database",
                                                     "its tables: notes"]),
    (lambda c: c.executescript("CREATE TABLE sessions (id INTEGER PRIMARY KEY, study TEXT); CREATE TABLE runs (id);"),
     ["results schema version 0 is older than this plait-bench's (1)"]),
    (lambda c: c.executescript("CREATE TABLE sessions (id); CREATE TABLE runs (id); PRAGMA user_version = 1;"),
     ["not the plait-bench results schema version 1"]),
    (lambda c: c.executescript("CREATE TABLE t (x); PRAGMA user_version = 7;"),
     ["results schema version 7 is newer than this plait-bench's (1)"]),
    (None, ["is not an SQLite database"]),
])
def test_foreign_or_other_schema_is_left_alone(tmp_path, write_study, fake_bins, make, words):
    dbp = tmp_path / "other.db"
    if make is None:
        dbp.write_text("hostname\n")
    else:
        con = sqlite3.connect(dbp)
        make(con)
        con.commit()
        con.close()
    before = digest(dbp)
    env = env_for(fake_bins, dbp)
    for args in READ_VERBS[:3] + [["run", write_study(SMALL)]]:
        one_line_error(pb(args, env), str(dbp), *words)
    assert digest(dbp) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("other")) == ["other.db"]


def test_store_run_refuses_a_slot_stored_by_another_process(stored):
    """Slots are taken before a run is written: the same slot stored through a second connection
    is refused by name and writes nothing."""
    _, dbp, _ = stored
    a, b = db.connect(dbp), db.connect(dbp)
    planned = a.execute("SELECT * FROM planned_runs ORDER BY id LIMIT 1").fetchone()
    rec = db.RunRecord(status="ok", exit_code=0, time_s=1.0, wall_s=1.0, verified=True, check_text="", message=None,
                       stderr_tail=None, stats={}, echo_params=None, command="x", binary="x", pinning="", env={},
                       started_at=db.now())
    with pytest.raises(db.SlotTaken, match="already stored"):
        db.store_run(b, planned, rec)
    assert a.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3


# ---- read-only folders ------------------------------------------------------------------------


def _obey_permissions() -> None:
    """preexec_fn: a root process gives up CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (dropped from
    the bounding set, they are gone after exec), so that permission bits bind it as they bind a
    user. Raises when that fails, so that no test passes without its folder really being read-only."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def pb_user(args, env):
    """plait-bench in a process that cannot write read-only folders, even as root."""
    return subprocess.run([sys.executable, "-m", "plait_bench", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **env}, preexec_fn=_obey_permissions)


@pytest.fixture
def read_only():
    made: list[Path] = []

    def _ro(d: Path) -> Path:
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o555)
        made.append(d)
        probe = subprocess.run([sys.executable, "-c", f"open({str(d / 'probe')!r}, 'w')"], capture_output=True,
                               preexec_fn=_obey_permissions)
        assert probe.returncode != 0, f"{d} could not be made read-only for the processes under test"
        return d

    yield _ro
    for d in made:
        d.chmod(0o755)


class _Cp:
    """A CompletedProcess seen through one_line_error."""

    def __init__(self, cp):
        self.exit_code, self.stdout, self.stderr, self.exception = cp.returncode, cp.stdout, cp.stderr, None


def test_read_only_results_folder_does_not_block_reading(stored, tmp_path, read_only):
    path, dbp, env = stored
    read_only(dbp.parent)
    listing = sorted(p.name for p in dbp.parent.iterdir())
    before = digest(dbp)
    for args in READ_VERBS:
        cp = pb_user(args, env)
        assert cp.returncode == 0, (args, cp.stderr)
    assert "small" in pb_user(["sessions"], env).stdout
    assert len(pb_user(["export"], env).stdout.splitlines()) == 1 + 3
    cp = pb_user(["export", "-o", tmp_path / "runs.csv"], env)
    assert cp.returncode == 0 and len((tmp_path / "runs.csv").read_text().splitlines()) == 1 + 3, cp.stderr
    cp = pb_user(["report", "--out", tmp_path / "report"], env)
    assert cp.returncode == 0 and (tmp_path / "report" / "index.md").is_file(), cp.stderr
    # writing is refused in one line
    one_line_error(_Cp(pb_user(["run", path, "--no-summary"], env)), f"cannot write results database {dbp}")
    assert sorted(p.name for p in dbp.parent.iterdir()) == listing
    assert digest(dbp) == before


def test_report_and_export_into_read_only_folder(stored, tmp_path, read_only):
    _, dbp, env = stored
    ro = read_only(tmp_path / "ro")
    for out in (ro, ro / "sub"):
        one_line_error(_Cp(pb_user(["report", "--out", out], env)), f"cannot write the report into {out}",
                       "nothing written")
    one_line_error(_Cp(pb_user(["export", "-o", ro / "runs.csv"], env)), f"cannot write {ro / 'runs.csv'}",
                   "nothing written")
    assert list(ro.iterdir()) == []


def test_report_is_whole_or_not_written(stored, tmp_path, monkeypatch):
    """A failure while the report is drawn leaves the folder as it was: the old report stays."""
    _, dbp, env = stored
    out = tmp_path / "report"
    r = pb(["report", "--out", out], env)
    assert r.exit_code == 0, r.stderr
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    real = report.write_report

    def half(con, sid, out_dir):
        real(con, sid, out_dir)
        (out_dir / "index.md").write_text("half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "write_report", half)
    one_line_error(pb(["report", "--out", out], env), f"cannot write the report into {out}: No space left on device",
                   "nothing written")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old


# ---- two runs of one study at once ------------------------------------------------------------


def _start_run(path, env, log: Path, sleep: str):
    return subprocess.Popen([sys.executable, "-m", "plait_bench", "run", str(path), "--no-summary"],
                            env={**os.environ, **env, "FAKE_BENCH_SLEEP": sleep}, stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"))


def _wait_for(pred, what: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _sessions(dbp):
    try:
        return sqlite3.connect(dbp).execute("SELECT id, status FROM sessions ORDER BY id").fetchall()
    except sqlite3.OperationalError:
        return []


def _two_runs(tmp_path, write_study, fake_bins, first_sleep: str):
    """Starts a run of SMALL (its benchmarks sleeping first_sleep s), waits for its session, then starts a
    second run of the same study into the same database: (first, second, the database); their
    stderr goes to tmp_path/a.log and b.log."""
    path = write_study(SMALL)
    dbp = tmp_path / "c.db"
    env = env_for(fake_bins, dbp)
    a = _start_run(path, env, tmp_path / "a.log", first_sleep)
    _wait_for(lambda: _sessions(dbp), "the first run's session")
    return a, _start_run(path, env, tmp_path / "b.log", "0"), dbp


def test_two_runs_of_one_study_both_complete(tmp_path, write_study, fake_bins):
    """The second waits while the first runs the session, then runs the study again, as if it had
    been started afterwards: two complete sessions, no slot run twice."""
    a, b, dbp = _two_runs(tmp_path, write_study, fake_bins, "1")
    assert a.wait(120) == 0, (tmp_path / "a.log").read_text()
    assert b.wait(120) == 0, (tmp_path / "b.log").read_text()
    assert "waiting: session #1 of 'small' is being run by another plait-bench process" in (tmp_path / "b.log").read_text()
    assert _sessions(dbp) == [(1, "complete"), (2, "complete")]
    con = sqlite3.connect(dbp)
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT planned_id) FROM runs").fetchone() == (6, 6)


def test_a_waiting_run_resumes_what_an_interrupted_one_left(tmp_path, write_study, fake_bins):
    a, b, dbp = _two_runs(tmp_path, write_study, fake_bins, "2")
    _wait_for(lambda: "waiting:" in (tmp_path / "b.log").read_text(), "the second run to wait")
    a.send_signal(signal.SIGTERM)
    assert a.wait(60) == 130
    assert b.wait(120) == 0, (tmp_path / "b.log").read_text()
    assert "resuming session #1" in (tmp_path / "b.log").read_text()
    assert _sessions(dbp) == [(1, "complete")]
    con = sqlite3.connect(dbp)
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT planned_id) FROM runs").fetchone() == (3, 3)
