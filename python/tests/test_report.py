"""Report generation produces the expected files; summary, export and history work on a stored study."""

import csv
import io
import os
import subprocess
import sys

from plait_bench import db, sweep
from plait_bench.registry import find_root
from plait_bench.report import write_report
from plait_bench.study import load_study

STUDY = """
[study]
name = "rep"
rounds = 2
warmup = 1
seed = 3

[[benchmark]]
kernel = "uts"
runtimes = ["serial", "plait", "tbb", "gomp", "libomp"]
threads = "1..2"
cases = [{ tree = "T3", g = 1 }, { type = "binomial", b0 = 300, q = 0.12, m = 8, seed = 1, g = 4 }]

[[benchmark]]
kernel = "fib"
runtimes = ["serial", "plait", "gomp"]
threads = "1..2"
params = { n = 20 }
"""

EXPECTED = ["index.md", "fig2_efficiency_kinstr.png", "fig3_efficiency_us.png", "fig4_speedup_threads.png",
            "fig5_moved_rate.png", "fib_overhead.png"]


def test_report_files_and_content(tmp_path, write_study, fake_bins, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_FAIL", "gomp:2:unverified")
    st = load_study(write_study(STUDY), fake_bins, np=2)
    con = db.connect(tmp_path / "rep.db")
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert not res.clean
    mid = con.execute("SELECT id FROM machines").fetchone()[0]
    db.store_instr(con, kernel="uts", build="gcc", binary="uts-serial", commit_hash="(no commit)", commit_short="x",
                   machine_id=mid, unit="sha1_op", instr_per_unit=1750.0, instr_per_node=2100.0, details={})
    out = tmp_path / "report"
    files = write_report(con, res.session_id, out)
    assert sorted(f.name for f in files) == sorted(EXPECTED)
    for name in EXPECTED:
        p = out / name
        assert p.is_file() and p.stat().st_size > 1000, name
        if name.endswith(".png"):
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "index.md").read_text()
    assert "## UTS: parallel efficiency vs task granularity" in md
    assert "Table 3. Pearson correlation" in md and "(n=3)" in md  # gomp at P=2 failed every run
    assert "Table 2" in md and "| gcc serial (x) | 1.750 | 14.0 | 56.0 |" in md  # 1.75 k/op x 8 and 32 ops
    # failed runs are shown, not dropped: in the efficiency table and in the list of failures
    assert "**2 FAILED**" in md
    assert md.count("**unverified**") == 9  # gomp P=2: 2 uts problems + fib, warm-up + 2 rounds each
    assert "verification failed" in md
    # captions say how many runs, where and at which commit
    assert "measured runs (" in md and "failed) on " in md and "; commit " in md


def _cli(args, env):
    return subprocess.run([sys.executable, "-m", "plait_bench", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def test_cli_summary_export_history(tmp_path, write_study, fake_bins):
    path = write_study(STUDY.replace('runtimes = ["serial", "plait", "tbb", "gomp", "libomp"]', 'runtimes = ["serial", "plait", "tbb"]')
                       .replace("rounds = 2", "rounds = 1"))
    env = {"PLAIT_BENCH_GCC_BIN": str(fake_bins.gcc), "PLAIT_BENCH_CLANG_BIN": str(fake_bins.clang),
           "PLAIT_BENCH_DB": str(tmp_path / "c.db")}
    cp = _cli(["run", str(path)], env)
    assert cp.returncode == 0, cp.stderr
    assert "UTS parallel efficiency at P=2" in cp.stdout
    assert "×" in cp.stdout  # ratios to plait
    cp = _cli(["report", "--out", str(tmp_path / "r")], env)
    assert cp.returncode == 0, cp.stderr
    assert (tmp_path / "r" / "index.md").is_file()
    cp = _cli(["export", "-o", str(tmp_path / "runs.csv")], env)
    assert cp.returncode == 0, cp.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "runs.csv").read_text())))
    assert len(rows) == 2 * 5 * 2 + 5 * 2  # uts: 2 problems x 5 configs x (warm-up + 1 round); fib: 5 configs x 2
    assert {"status", "time_s", "stat_moved_tasks", "commit", "machine"} <= set(rows[0])
    cp = _cli(["history", "rep"], env)
    assert cp.returncode == 0, cp.stderr
    assert "history of study 'rep'" in cp.stdout
    cp = _cli(["history", "nope"], env)
    assert cp.returncode == 2
    cp = _cli(["sessions"], env)
    assert cp.returncode == 0 and "rep" in cp.stdout
    cp = _cli(["report", "--session", "99"], env)
    assert cp.returncode == 2 and "no session #99" in cp.stderr
