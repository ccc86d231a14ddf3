"""The machine's state (quiet.py): readings with their fields; a fake load (busy processes started
here) makes a reading busy; a study run under load stores a reading per round, warns, and the tour's
verdicts of its rounds become "not decided"; --wait-quiet waits; the size check of the verdicts."""

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from plait_bench import quiet
from plait_bench.verdicts import Verdict, disturbed_rounds, machine_undecided, size_note
from conftest import bench_text, study_text
from test_tour import PART_IDS, STUDIES, _tour, _tour_files, tour_env  # noqa: F401 (fixture)

SMALL = study_text("small", 2, 0, 7, bench_text("fib", ["serial", "plait"], '"1..2"', "{ n = 10 }"))


@pytest.fixture
def load():
    """One CPU-bound process per CPU, and one more: the machine is busy while the fixture lives."""
    n = (os.cpu_count() or 1) + 1
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    time.sleep(0.5)
    yield n
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


@pytest.fixture
def check_on(monkeypatch):
    monkeypatch.delenv("PLAIT_BENCH_QUIET_CHECK", raising=False)


def test_a_reading_has_the_fields(check_on):
    w = quiet.Watcher()
    s = w.read()
    assert s.cpus_online and s.cpus_online >= 1
    assert s.others is not None and s.load1 is not None and s.probe_s and s.probe_s > 0
    assert w.best_probe == s.probe_s
    assert "CPUs online" in quiet.describe(s)


def test_a_fake_load_makes_the_machine_busy(check_on, load):
    w = quiet.Watcher()
    w.best_probe = quiet.probe() / 2  # whatever the machine did before: the probe is slower now
    s = w.read()
    why = quiet.busy(s, w.best_probe)
    assert why and "other thread" in why, (why, quiet.describe(s))


def test_the_check_can_be_turned_off(monkeypatch, load):
    monkeypatch.setenv("PLAIT_BENCH_QUIET_CHECK", "off")
    w = quiet.Watcher()
    assert quiet.busy(w.read(), w.best_probe) is None


def _states(*busy_by_round):
    return [{"round": r, "busy": b, "load1": 3.5 if b else 0.1, "steal_pct": 12.0 if b else 0.0}
            for r, b in busy_by_round]


def test_busy_readings_disturb_their_rounds_and_undecide_the_verdicts():
    states = _states((0, None), (1, None), (2, "1 other thread wanting a CPU"), (-1, None))
    rounds, busy = disturbed_rounds(states)
    assert rounds == {1, 2} and len(busy) == 1
    vs = [Verdict("001", "c", "m", "agrees"), Verdict("001", "c2", "m2", "no data")]
    out = machine_undecided(vs, states)
    assert out[0].verdict == "not decided" and out[1].verdict == "no data"
    assert "the machine was busy (load 3.5, steal 12 %" in out[0].note and "rounds 1, 2" in out[0].note
    # busy only before the warm-up round: the measured rounds are not touched
    assert machine_undecided(vs, _states((0, "x"), (1, None), (-1, None)))[0].verdict == "agrees"


def test_the_size_check():
    assert size_note([("plait", 3306645.0, 2200.0), ("libgomp", 34254434.0, 5200.0)]).startswith("6,587× in size (libgomp")
    assert size_note([("plait", 2500.0, 2200.0)]) == ""
    assert size_note([("libgomp", 4.0, 415.0)]).startswith("104× in size")


def test_a_study_under_load_stores_busy_readings_and_warns(tmp_path, write_study, fake_bins, check_on, load):
    from conftest import REPO

    dbp = tmp_path / "q.db"
    env = {**os.environ, "PLAIT_BENCH_GCC_BIN": str(fake_bins.gcc), "PLAIT_BENCH_CLANG_BIN": str(fake_bins.clang),
           "PLAIT_BENCH_DB": str(dbp), "PLAIT_ROOT": str(REPO)}
    env.pop("PLAIT_BENCH_QUIET_CHECK", None)
    cp = subprocess.run([sys.executable, "-m", "plait_bench", "run", str(write_study(SMALL)), "--no-summary",
                         "--wait-quiet", "1"], env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert "waiting for a quiet machine" in cp.stderr
    assert "warning: the machine is busy" in cp.stderr and "--wait-quiet" in cp.stderr
    con = sqlite3.connect(dbp)
    rows = con.execute("SELECT round, busy, others, probe_s FROM machine_states ORDER BY id").fetchall()
    # before each of the 2 rounds (no warm-up) and after the last
    assert [r[0] for r in rows] == [1, 2, -1]
    assert all(r[1] for r in rows) and all(r[2] >= 1 for r in rows) and all(r[3] > 0 for r in rows)
    # the study's report says so
    out = tmp_path / "rep"
    cp = subprocess.run([sys.executable, "-m", "plait_bench", "report", "--out", str(out)], env=env,
                        capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert "**busy** in 3 of 3 readings, disturbing rounds 1, 2" in (out / "index.md").read_text()


def test_a_tour_under_load_decides_nothing(tour_env, load):
    tmp, env = tour_env
    env = dict(env)
    env.pop("PLAIT_BENCH_QUIET_CHECK")
    out = tmp / "report"
    r = _tour([str(_tour_files(tmp)), "--out", str(out)], env, timeout=900)
    assert r.returncode == 0, r.stderr
    index = (out / "index.md").read_text()
    rows = [ln for ln in index.splitlines() if ln.startswith("| ") and ": " in ln.split("|")[1]]
    assert rows
    assert all("not decided" in ln or "no data" in ln for ln in rows), rows
    assert any("the machine was busy (load" in ln for ln in rows)
