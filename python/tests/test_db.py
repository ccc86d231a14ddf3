"""Database schema, one transaction per run, resume after an interruption (soft and kill -9), failures kept."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from plait_bench import db, sweep
from plait_bench.registry import find_root
from plait_bench.study import load_study
from conftest import bench_text, study_text

STUDY = study_text("resume", 3, 1, 5, bench_text("uts", ["serial", "plait", "tbb"], '"1..2"',
                                                   "{ type = \"binomial\", b0 = 100, q = 0.12, m = 8, seed = 1 }",
                                                   "sweep = { g = [1, 4] }\n"), extra="timeout_s = 10\n")


def cli(args, env_extra=None, **kw):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "plait_bench", *args], capture_output=True, text=True, env=env, **kw)


def bins_env(bins, dbp):
    return {"PLAIT_BENCH_GCC_BIN": str(bins.gcc), "PLAIT_BENCH_CLANG_BIN": str(bins.clang), "PLAIT_BENCH_DB": str(dbp)}


def test_schema(tmp_path):
    con = db.connect(tmp_path / "x.db")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"machines", "sessions", "planned_runs", "runs", "run_stats", "instr"} <= tables
    cols = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
    assert {"status", "time_s", "wall_s", "verified", "message", "stats_json", "pinning", "command", "round", "kind"} <= cols
    scols = {r[1] for r in con.execute("PRAGMA table_info(sessions)")}
    assert {"commit_hash", "machine_id", "seed", "plan_hash", "status"} <= scols
    mcols = {r[1] for r in con.execute("PRAGMA table_info(machines)")}
    assert {"cpu_model", "logical_cpus", "kernel", "gcc", "clang", "libtbb", "libomp"} <= mcols
    assert con.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    # reopening an existing database is harmless
    db.connect(tmp_path / "x.db").close()


def interrupt_at(monkeypatch, n):
    """Make the n-th run of the study raise KeyboardInterrupt (as Ctrl-C would); returns the real
    sweep.execute, to be put back for the resume."""
    real = sweep.execute
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(sweep, "execute", flaky)
    return real


def test_resume_after_interrupt_no_loss_no_duplicates(tmp_path, write_study, fake_bins, monkeypatch):
    st = load_study(write_study(STUDY), fake_bins, np=2)
    total = len(st.plan())
    con = db.connect(tmp_path / "r.db")
    real = interrupt_at(monkeypatch, 7)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_study(st, con, fake_bins, find_root())
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 6
    assert con.execute("SELECT status FROM sessions").fetchone()[0] == "interrupted"

    monkeypatch.setattr(sweep, "execute", real)
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert res.resumed and res.executed == total - 6 and res.clean
    assert con.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == total
    assert con.execute("SELECT COUNT(DISTINCT planned_id) FROM runs").fetchone()[0] == total
    assert con.execute("SELECT COUNT(*) FROM planned_runs WHERE state = 'pending'").fetchone()[0] == 0
    assert con.execute("SELECT status FROM sessions").fetchone()[0] == "complete"
    # the stored order is the plan's: warm-ups first, then rounds 1..3 each holding every configuration once
    rounds = [r[0] for r in con.execute("SELECT p.round FROM runs r JOIN planned_runs p ON p.id = r.planned_id ORDER BY p.seq")]
    assert rounds == sorted(rounds)
    # counters and machine facts are stored
    assert con.execute("SELECT COUNT(*) FROM run_stats WHERE name = 'moved_tasks'").fetchone()[0] > 0
    m = json.loads(con.execute("SELECT facts_json FROM machines").fetchone()[0])
    assert m["cpu_model"] and m["logical_cpus"]
    # a new run of a finished study starts a new session
    res2 = sweep.run_study(st, con, fake_bins, find_root())
    assert not res2.resumed and res2.session_id != res.session_id


def test_resumed_runs_keep_their_compiler(tmp_path, write_study, fake_bins, monkeypatch):
    """A plait@clang configuration runs the clang tree's binary, also after an interrupted session
    resumes from the stored plan."""
    text = STUDY.replace('runtimes = ["serial", "plait", "tbb"]', 'runtimes = ["serial", "plait", "plait@clang"]')
    assert text != STUDY
    st = load_study(write_study(text), fake_bins, np=2)
    con = db.connect(tmp_path / "c.db")
    real = interrupt_at(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_study(st, con, fake_bins, find_root())
    monkeypatch.setattr(sweep, "execute", real)
    assert sweep.run_study(st, con, fake_bins, find_root()).resumed
    rows = con.execute("SELECT series, runtime, binary FROM runs").fetchall()
    clang = [r for r in rows if r["series"] == "plait@clang"]
    assert clang and all(r["runtime"] == "plait" and r["binary"] == str(fake_bins.clang / "uts-plait") for r in clang)
    assert all(r["binary"].startswith(str(fake_bins.gcc)) for r in rows if r["series"] != "plait@clang")


def test_kill_minus_9_then_resume(tmp_path, write_study, fake_bins):
    path = write_study(STUDY)
    dbp = tmp_path / "k.db"
    env = bins_env(fake_bins, dbp)
    p = subprocess.Popen([sys.executable, "-m", "plait_bench", "run", str(path)], env={**os.environ, **env, "FAKE_BENCH_SLEEP": "0.1"},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    n = 0
    while time.time() < deadline:
        time.sleep(0.1)
        if dbp.exists():
            try:
                n = sqlite3.connect(dbp).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            if n >= 4:
                break
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    con = sqlite3.connect(dbp)
    before = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert before >= 4
    total = con.execute("SELECT COUNT(*) FROM planned_runs").fetchone()[0]
    assert before < total
    cp = cli(["run", str(path), "--no-summary"], env)
    assert cp.returncode == 0, cp.stderr
    assert "resuming session #1" in cp.stderr
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == total
    assert con.execute("SELECT COUNT(DISTINCT planned_id) FROM runs").fetchone()[0] == total


def test_failed_runs_are_kept_and_exit_nonzero(tmp_path, write_study, fake_bins):
    path = write_study(STUDY.replace("timeout_s = 10", "timeout_s = 1.0").replace("rounds = 3", "rounds = 1"))
    dbp = tmp_path / "f.db"
    env = bins_env(fake_bins, dbp)
    env["FAKE_BENCH_FAIL"] = "plait:2:crash,tbb:1:unverified,tbb:2:hang"
    cp = cli(["run", str(path)], env)
    assert cp.returncode == 1
    assert "did not complete cleanly" in cp.stderr
    assert "killed by SIGSEGV" in cp.stderr
    assert "verification failed" in cp.stderr
    con = sqlite3.connect(dbp)
    st = dict(con.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall())
    # 2 g x 2 kinds (warm-up + 1 round) of each failing configuration
    assert st == {"ok": 8, "crashed": 4, "unverified": 4, "timeout": 4}
    msg = con.execute("SELECT message FROM runs WHERE status = 'unverified'").fetchone()[0]
    assert msg == "uts-tbb: error: verification failed: nodes = 41 (expected 42)"
    assert con.execute("SELECT status FROM sessions").fetchone()[0] == "failed"


def test_rounds_option_overrides_the_study_file(tmp_path, write_study, fake_bins):
    path = write_study(STUDY)  # rounds = 3 in the file
    dbp = tmp_path / "r.db"
    env = bins_env(fake_bins, dbp)
    cp = cli(["run", str(path), "--rounds", "1", "--no-summary"], env)
    assert cp.returncode == 0, cp.stderr
    con = sqlite3.connect(dbp)
    assert con.execute("SELECT rounds FROM sessions").fetchone()[0] == 1
    # 10 configurations (2 g x serial@1 + plait@1,2 + tbb@1,2): one warm-up and one measured run each
    assert con.execute("SELECT COUNT(*) FROM runs WHERE kind = 'measured'").fetchone()[0] == 10
    assert con.execute("SELECT MAX(round) FROM runs").fetchone()[0] == 1
    # the file's count again is another plan: a new session, not a resume of the 1-round one
    cp = cli(["run", str(path), "--no-summary"], env)
    assert cp.returncode == 0, cp.stderr
    assert [r[0] for r in con.execute("SELECT rounds FROM sessions ORDER BY id")] == [1, 3]
    for bad in ("0", "x", "1001"):
        cp = cli(["run", str(path), "--rounds", bad], env)
        assert cp.returncode == 2 and "--rounds" in cp.stderr and cp.stderr.strip().count("\n") <= 3, cp.stderr
    assert con.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2


def test_missing_binary_and_bad_study_exit_2(tmp_path, write_study, fake_bins):
    path = write_study(STUDY)
    dbp = tmp_path / "m.db"
    env = bins_env(fake_bins, dbp)
    (fake_bins.gcc / "uts-tbb").unlink()
    cp = cli(["run", str(path)], env)
    assert cp.returncode == 2
    assert "uts-tbb" in cp.stderr and "do not exist" in cp.stderr
    assert not dbp.exists() or sqlite3.connect(dbp).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    cp = cli(["run", str(path), "--keep-going", "--no-summary"], env)
    assert cp.returncode == 1
    con = sqlite3.connect(dbp)
    n_missing = con.execute("SELECT COUNT(*) FROM runs WHERE status = 'missing'").fetchone()[0]
    assert n_missing == 2 * 2 * 4  # 2 g x 2 thread counts x (warm-up + 3 rounds)
    assert con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0] == 2 * 3 * 4
    bad = write_study(STUDY.replace('runtimes = ["serial", "plait", "tbb"]', 'runtimes = ["serial", "openmp"]'), "bad.toml")
    cp = cli(["run", str(bad)], env)
    assert cp.returncode == 2
    assert "unknown runtime 'openmp'" in cp.stderr
    cp = cli(["run", "no-such-study"], env)
    assert cp.returncode == 2 and "no such study file" in cp.stderr
