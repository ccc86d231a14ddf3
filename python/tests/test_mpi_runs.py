"""MPI runs in plait-bench: the mpi runtime (one process per rank under mpirun; a run's P is its rank
count), the launcher found or a one-line error, and the runs stored and reported beside the others."""

import csv
import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap

import pytest

from conftest import FAKE, HERE, REPO, bench_text, make_fake_bins, study_text
from plait_bench.registry import parse_runtime

STUDY = study_text("mpi-runs", 2, 0, 4, bench_text("uts", ["serial", "plait", "mpi"], "[1, 2, 4]", '{ tree = "T3" }'),
                   extra='pin = "none"\n')


@pytest.fixture
def mpi_env(tmp_path):
    bins = make_fake_bins(tmp_path / "b", kernels=("uts",))
    exe = bins.gcc / "uts-mpi"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{FAKE}" --as uts-mpi "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_mpirun.py"}" "$@"\n')
    mpirun.chmod(mpirun.stat().st_mode | stat.S_IXUSR)
    study = tmp_path / "mpi.toml"
    study.write_text(textwrap.dedent(STUDY))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "FAKE_", "OMPI_"))}
    env["PLAIT_BENCH_QUIET_CHECK"] = "off"  # the report's mechanics, on whatever the machine is doing
    env.update(PLAIT_ROOT=str(REPO), PLAIT_BENCH_DB=str(tmp_path / "r.db"), PLAIT_BENCH_GCC_BIN=str(bins.gcc),
               PLAIT_BENCH_CLANG_BIN=str(bins.clang), PLAIT_BENCH_MPIRUN=str(mpirun),
               FAKE_MPIRUN_LOG=str(tmp_path / "mpirun.log"))
    return tmp_path, env, study


def _pb(args, env):
    return subprocess.run([sys.executable, "-m", "plait_bench", *args], env=env, capture_output=True, text=True)


def test_mpi_runs_go_through_mpirun_with_their_rank_count(mpi_env):
    tmp, env, study = mpi_env
    r = _pb(["run", str(study), "--no-summary"], env)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(tmp / "r.db")
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT * FROM runs WHERE series = 'mpi' ORDER BY threads").fetchall()
    assert [x["threads"] for x in rows] == [1, 1, 2, 2, 4, 4]
    for x in rows:
        assert x["status"] == "ok"
        cmd = x["command"]
        assert cmd.startswith(env["PLAIT_BENCH_MPIRUN"]) and f"-np {x['threads']} " in cmd and "--threads 1" in cmd
        assert json.loads(x["stats_json"])["ranks"] == x["threads"]
        assert "OMPI_MCA_mpi_yield_when_idle=0" in x["pinning"]
    log = [json.loads(ln) for ln in (tmp / "mpirun.log").read_text().splitlines()]
    assert {e["np"] for e in log} == {1, 2, 4} and all(e["yield"] == "0" for e in log)
    # reported next to the single-process runtimes: the efficiency table has an mpi row
    r = _pb(["report", "--out", str(tmp / "rep")], env)
    assert r.returncode == 0, r.stderr
    md = (tmp / "rep" / "index.md").read_text()
    assert "| mpi |" in md
    # the ranks × threads table: MPI at P ranks of one thread, Plait at one process of P threads
    assert "## Across ranks: ranks × threads" in md
    assert "| mpi | 4 | 4 × 1 |" in md and "| plait | 4 | 1 × 4 |" in md


def test_missing_mpirun_is_one_line_and_nothing_runs(mpi_env):
    tmp, env, study = mpi_env
    env["PLAIT_BENCH_MPIRUN"] = str(tmp / "no-such-mpirun")
    for verb in (["run", str(study)], ["plan", str(study)]):
        r = _pb(verb, env)
        assert r.returncode == 2, r.stderr
        assert "has 3 MPI configuration(s), but PLAIT_BENCH_MPIRUN=" in r.stderr and "no such executable" in r.stderr
        assert r.stderr.strip().count("\n") == 0 or verb[0] == "plan"
    assert not (tmp / "r.db").exists()


def test_mpi_is_built_by_gcc_only():
    assert parse_runtime("mpi") == ("mpi", "")
    with pytest.raises(ValueError, match="mpi is built only by gcc"):
        parse_runtime("mpi@clang")


GRID = study_text("hybrid-grid", 6, 0, 5,
                  bench_text("uts", ["serial", "plait", "mpi"], "[1, 2]", '{ tree = "T3" }',
                             "runtime_params = { mpi = { hybrid = [true] } }\nranks = [1, 2]\n"),
                  extra='pin = "none"\n')


def test_a_ranks_list_makes_a_ranks_by_threads_grid(mpi_env):
    """ranks × threads per rank for the MPI runs (P = their product), 1 × P for the others; each
    shape launched as R processes of T workers, stored as its own series, tabled, paired and drawn."""
    from plait_bench.sweep import config_of

    tmp, env, _ = mpi_env
    study = tmp / "grid.toml"
    study.write_text(textwrap.dedent(GRID))
    r = _pb(["run", str(study), "--no-summary"], env)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(tmp / "r.db")
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT * FROM runs WHERE runtime = 'mpi'").fetchall()
    shapes = {}
    for x in rows:
        assert x["status"] == "ok", x["message"]
        st = json.loads(x["stats_json"])
        shapes.setdefault((x["series"], x["threads"]), set()).add((st["ranks"], st["threads_per_rank"]))
        assert f"-np {st['ranks']} " in x["command"] and f"--threads {st['threads_per_rank']} " in x["command"]
        assert "--hybrid" in x["command"]
    assert shapes == {("mpi[hybrid=1]", 1): {(1, 1)}, ("mpi[hybrid=1]", 2): {(2, 1)},
                      ("mpi[hybrid=1,workers=2]", 2): {(1, 2)}, ("mpi[hybrid=1,workers=2]", 4): {(2, 2)}}
    assert all(len(x) == 1 for x in shapes.values())
    # a resumed session rebuilds each configuration, rank count included, from the database alone
    for p in con.execute("SELECT * FROM planned_runs").fetchall():
        assert config_of(p).key == p["config_key"]
    r = _pb(["report", "--out", str(tmp / "rep")], env)
    assert r.returncode == 0, r.stderr
    md = (tmp / "rep" / "index.md").read_text()
    assert "| mpi[hybrid=1,workers=2] | 2 | 1 × 2 |" in md and "| mpi[hybrid=1] | 2 | 2 × 1 |" in md
    assert "| mpi[hybrid=1,workers=2] | 4 | 2 × 2 |" in md and "| plait | 2 | 1 × 2 |" in md
    # the two shapes at P = 2 paired round by round (the fake's times are computed, so every round's
    # ratio is the same and the interval is a point)
    t21, t12 = (con.execute("SELECT MAX(time_s) FROM runs WHERE series = ? AND threads = 2", (s,)).fetchone()[0]
                for s in ("mpi[hybrid=1]", "mpi[hybrid=1,workers=2]"))
    want = t21 / t12
    line = next(ln for ln in md.splitlines() if "2 × 1 over 1 × 2" in ln)
    assert line == (f"| mpi[hybrid=1] | 2 | 2 × 1 over 1 × 2 | ×{want:.3f} | 6 | {want:.3f}–{want:.3f} | "
                    f"{'within' if abs(want - 1) < 0.09 else 'outside'} ±10 % |")
    assert (tmp / "rep" / "ranks_uts.png").stat().st_size > 1000 and "ranks_uts.png" in md
    # the CSV export names each run's shape
    r = _pb(["export"], env)
    assert r.returncode == 0, r.stderr
    shapes = {(row["series"], row["threads"], row["ranks"], row["threads_per_rank"])
              for row in csv.DictReader(r.stdout.splitlines())}
    assert ("mpi[hybrid=1,workers=2]", "4", "2", "2") in shapes and ("mpi[hybrid=1]", "2", "2", "1") in shapes
    assert ("plait", "2", "", "") in shapes and ("serial", "1", "", "") in shapes


def test_a_run_of_another_shape_than_asked_is_an_error(mpi_env):
    tmp, env, study = mpi_env
    env["FAKE_MPI_WRONG_RANKS"] = "1"
    r = _pb(["run", str(study), "--no-summary"], env)
    assert r.returncode == 1
    con = sqlite3.connect(tmp / "r.db")
    msgs = {m for (m,) in con.execute("SELECT message FROM runs WHERE runtime = 'mpi'")}
    assert msgs == {f"the run reports ranks = {p + 1}, not the {p} asked for" for p in (1, 2, 4)}


@pytest.mark.parametrize("change, expect", [
    ('runtimes = ["serial", "plait"]', "ranks: only MPI runs have ranks, and this benchmark's runtimes (serial, "
                                       "plait) have none"),
    ('ranks = "two"', "ranks: 'two' is not a rank list; accepted: an integer >= 1"),
    ("ranks = [0]", "ranks: [0] asks for 0 ranks; accepted: 1..4096"),
    ("ranks = [4096]", "4096 ranks × 2 threads is 8192 processing elements; accepted: at most 4096"),
])
def test_bad_ranks_are_one_line(mpi_env, change, expect):
    tmp, env, _ = mpi_env
    text = textwrap.dedent(GRID)
    key = change.split(" = ")[0]
    text = "\n".join(change if ln.startswith(key + " = ") else ln for ln in text.splitlines()
                     if key != "runtimes" or not ln.startswith("runtime_params"))  # no mpi: no mpi parameters
    study = tmp / "bad.toml"
    study.write_text(text)
    r = _pb(["plan", str(study)], env)
    assert r.returncode == 2
    assert expect in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr
    assert not (tmp / "r.db").exists()
