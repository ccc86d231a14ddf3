"""The same gcc-built OpenMP binary on three runtimes: gomp (libgomp), gomp@libomp and gomp@plait (the
library preloaded), each run checked for the library it reports."""

import pytest

from plait_bench import db, sweep
from plait_bench.plots import series_style
from plait_bench.registry import compiler_of, expected_omp_library, find_root, omp_lib_of, parse_runtime
from plait_bench.study import load_study

STUDY = """
[study]
name = "same-binary"
rounds = 2
warmup = 0
seed = 3

[[benchmark]]
kernel = "fib"
runtimes = ["gomp", "gomp@libomp", "gomp@plait", "plait"]
threads = [1, 2]
params = { n = 12 }
"""


def test_parse_and_label():
    assert parse_runtime("gomp@plait") == ("gomp", "plait")
    assert parse_runtime("gomp@libomp") == ("gomp", "libomp")
    for bad, msg in (("plait@libomp", "only the gcc-built OpenMP binaries"), ("libomp@plait", "only the gcc-built"),
                     ("gomp@icc", "unknown compiler 'icc'.*OpenMP libraries libomp, plait")):
        with pytest.raises(ValueError, match=msg):
            parse_runtime(bad)
    assert [omp_lib_of(s) for s in ("gomp@plait[x=1]", "gomp@libomp", "gomp", "plait@clang")] == ["plait", "libomp", "", ""]
    assert compiler_of("gomp@plait") == "gcc" and compiler_of("gomp@libomp") == "gcc"
    assert expected_omp_library("gomp", "plait") == "libplait-omp"
    assert expected_omp_library("gomp") == "libgomp" and expected_omp_library("libomp") == "libomp"
    assert expected_omp_library("plait") is None
    # styles: the library's colour, gomp's marker
    assert series_style("gomp@plait")["color"] == series_style("plait")["color"]
    assert series_style("gomp@libomp")["color"] == series_style("libomp")["color"]
    assert series_style("gomp@plait")["marker"] == series_style("gomp")["marker"]


def _libs(tmp_path, fake_bins, monkeypatch):
    plait_lib = fake_bins.gcc.parent / "libplait-omp.so.1"
    plait_lib.write_text("")
    libomp = tmp_path / "libomp.so.5"
    libomp.write_text("")
    monkeypatch.setenv("PLAIT_BENCH_LIBOMP", str(libomp))
    return plait_lib, libomp


def test_same_binary_three_runtimes(tmp_path, write_study, fake_bins, monkeypatch):
    plait_lib, libomp = _libs(tmp_path, fake_bins, monkeypatch)
    st = load_study(write_study(STUDY), fake_bins, np=2)
    series = {c.series for c in st.configs}
    assert series == {"gomp", "gomp@libomp", "gomp@plait", "plait"}
    # all three gomp series run the one binary of the gcc tree
    assert {fake_bins.binary(c.kernel, c.runtime, c.compiler) for c in st.configs if c.runtime == "gomp"} == \
        {fake_bins.gcc / "fib-gomp"}
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert res.clean, [r["message"] for r in res.failed]
    rows = con.execute("SELECT series, env_json FROM runs").fetchall()
    import json
    for r in rows:
        pre = json.loads(r["env_json"]).get("LD_PRELOAD", "")
        want = {"gomp@plait": str(plait_lib), "gomp@libomp": str(libomp)}.get(r["series"], "")
        assert pre.split(":")[0] == want, (r["series"], pre)


def test_a_preload_that_did_not_take_fails_the_run(tmp_path, write_study, fake_bins, monkeypatch):
    _libs(tmp_path, fake_bins, monkeypatch)
    monkeypatch.setenv("FAKE_BENCH_IGNORE_PRELOAD", "1")
    st = load_study(write_study(STUDY), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root(), keep_going=True)
    failed = {r["series"] for r in res.failed}
    assert failed == {"gomp@plait", "gomp@libomp"}
    assert all("not libplait-omp" in r["message"] or "not libomp" in r["message"] for r in res.failed)
    assert all(r["time_s"] is None for r in res.failed)


def test_a_missing_library_is_a_named_failure(tmp_path, write_study, fake_bins, monkeypatch):
    monkeypatch.setenv("PLAIT_BENCH_LIBOMP", str(tmp_path / "nowhere.so"))
    st = load_study(write_study(STUDY), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root(), keep_going=True)
    msgs = {r["series"]: r["message"] for r in res.failed}
    assert set(msgs) == {"gomp@plait", "gomp@libomp"}
    assert "libplait-omp.so.1 does not exist" in msgs["gomp@plait"]
    assert "PLAIT_BENCH_LIBOMP=" in msgs["gomp@libomp"] and "no such file" in msgs["gomp@libomp"]


def test_report_has_the_same_binary_section(tmp_path, write_study, fake_bins, monkeypatch):
    from plait_bench import report

    _libs(tmp_path, fake_bins, monkeypatch)
    text = STUDY.replace("rounds = 2", "rounds = 6").replace('runtimes = ["gomp"', 'runtimes = ["serial", "gomp"')
    st = load_study(write_study(text), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert res.clean
    out = tmp_path / "rep"
    files = report.write_report(con, res.session_id, out)
    md = (out / "index.md").read_text()
    assert "## The OpenMP front door: the same binary on three runtimes" in md
    assert (out / "omp_same_binary.png") in files
    sec = md.split("## The OpenMP front door")[1].split("\n## ")[0]
    rows = [ln for ln in sec.splitlines() if ln.startswith("| fib |")]
    assert len(rows) == 2  # P = 1 and 2
    # the fake gomp binary costs 150 ns per call on libgomp, 60 on libomp and 12 on libplait-omp;
    # native Plait 8: faster than both peers (within), 1.5x native (outside the 15 %)
    assert all(r.split("|")[8].strip().endswith(": within") for r in rows), rows
    assert all(r.split("|")[9].strip().endswith(": outside") for r in rows), rows
    assert "whole time per task at 1 thread" in sec and "speedup at 2 threads over 1" in sec
    # the target's row: the fake's 12 ns per call on libplait-omp less the serial 2 ns, round by
    # round (libgomp 148, libomp 58 beside it)
    ov = [ln for ln in sec.splitlines() if "overhead per task over the serial recursion" in ln]
    assert len(ov) == 1, sec
    cells = [c.strip() for c in ov[0].split("|")]
    assert cells[3].startswith("10.00 [10.00–10.00]") and "gomp 148.0" in cells[3] and "gomp@libomp 58.0" in cells[3], cells
    assert cells[4] == "within", cells  # the interval's top, 10.00, at the limit (≤ 10)
    # no section without gomp@plait runs
    st2 = load_study(write_study(STUDY.replace(', "gomp@plait"', ""), "n.toml"), fake_bins, np=2)
    res2 = sweep.run_study(st2, con, fake_bins, find_root())
    report.write_report(con, res2.session_id, tmp_path / "rep2")
    assert "OpenMP front door" not in (tmp_path / "rep2" / "index.md").read_text()
