"""The same OpenMP binary on several runtimes: the gcc-built one on gomp (libgomp), gomp@libomp and
gomp@plait, the clang-built one on libomp and libomp@plait (the library preloaded), each run checked
for the library it reports."""

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
runtimes = ["gomp", "gomp@libomp", "gomp@plait", "plait", "libomp", "libomp@plait", "plait@clang"]
threads = [1, 2]
params = { n = 12 }
"""


def test_parse_and_label():
    assert parse_runtime("gomp@plait") == ("gomp", "plait")
    assert parse_runtime("gomp@libomp") == ("gomp", "libomp")
    assert parse_runtime("libomp@plait") == ("libomp", "plait")
    for bad, msg in (("plait@libomp", "only the OpenMP binaries"), ("libomp@libomp", "accepted: gomp@libomp, gomp@plait, "
                                                                                    "libomp@plait"),
                     ("tbb@plait", "only the OpenMP binaries"),
                     ("gomp@icc", "unknown compiler 'icc'.*OpenMP libraries libomp, plait")):
        with pytest.raises(ValueError, match=msg):
            parse_runtime(bad)
    assert [omp_lib_of(s) for s in ("gomp@plait[x=1]", "gomp@libomp", "gomp", "plait@clang", "libomp@plait")] == \
        ["plait", "libomp", "", "", "plait"]
    assert compiler_of("gomp@plait") == "gcc" and compiler_of("gomp@libomp") == "gcc"
    assert compiler_of("libomp@plait") == "clang"
    assert expected_omp_library("gomp", "plait") == "libplait-omp"
    assert expected_omp_library("libomp", "plait") == "libplait-omp"
    assert expected_omp_library("gomp") == "libgomp" and expected_omp_library("libomp") == "libomp"
    assert expected_omp_library("plait") is None
    # styles: the library's colour, gomp's marker
    assert series_style("gomp@plait")["color"] == series_style("plait")["color"]
    assert series_style("gomp@libomp")["color"] == series_style("libomp")["color"]
    assert series_style("gomp@plait")["marker"] == series_style("gomp")["marker"]
    assert series_style("libomp@plait")["color"] == series_style("plait")["color"]
    assert series_style("libomp@plait")["marker"] == series_style("libomp")["marker"]


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
    assert series == {"gomp", "gomp@libomp", "gomp@plait", "plait", "libomp", "libomp@plait", "plait@clang"}
    # all three gomp series run the one binary of the gcc tree, both libomp series the clang tree's
    assert {fake_bins.binary(c.kernel, c.runtime, c.compiler) for c in st.configs if c.runtime == "gomp"} == \
        {fake_bins.gcc / "fib-gomp"}
    assert {fake_bins.binary(c.kernel, c.runtime, c.compiler) for c in st.configs if c.runtime == "libomp"} == \
        {fake_bins.clang / "fib-libomp"}
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert res.clean, [r["message"] for r in res.failed]
    rows = con.execute("SELECT series, env_json FROM runs").fetchall()
    import json
    for r in rows:
        pre = json.loads(r["env_json"]).get("LD_PRELOAD", "")
        want = {"gomp@plait": str(plait_lib), "gomp@libomp": str(libomp), "libomp@plait": str(plait_lib)}.get(r["series"], "")
        assert pre.split(":")[0] == want, (r["series"], pre)


def test_a_preload_that_did_not_take_fails_the_run(tmp_path, write_study, fake_bins, monkeypatch):
    _libs(tmp_path, fake_bins, monkeypatch)
    monkeypatch.setenv("FAKE_BENCH_IGNORE_PRELOAD", "1")
    st = load_study(write_study(STUDY), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root(), keep_going=True)
    failed = {r["series"] for r in res.failed}
    assert failed == {"gomp@plait", "gomp@libomp", "libomp@plait"}
    assert all("not libplait-omp" in r["message"] or "not libomp" in r["message"] for r in res.failed)
    assert all(r["time_s"] is None for r in res.failed)


def test_a_missing_library_is_a_named_failure(tmp_path, write_study, fake_bins, monkeypatch):
    monkeypatch.setenv("PLAIT_BENCH_LIBOMP", str(tmp_path / "nowhere.so"))
    st = load_study(write_study(STUDY), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root(), keep_going=True)
    msgs = {r["series"]: r["message"] for r in res.failed}
    assert set(msgs) == {"gomp@plait", "gomp@libomp", "libomp@plait"}
    assert "libplait-omp.so.1 does not exist" in msgs["gomp@plait"]
    assert "libplait-omp.so.1 does not exist" in msgs["libomp@plait"]
    assert "PLAIT_BENCH_LIBOMP=" in msgs["gomp@libomp"] and "no such file" in msgs["gomp@libomp"]


def test_report_has_the_same_binary_section(tmp_path, write_study, fake_bins, monkeypatch):
    from plait_bench import report

    _libs(tmp_path, fake_bins, monkeypatch)
    text = STUDY.replace("rounds = 2", "rounds = 6").replace('runtimes = ["gomp"', 'runtimes = ["serial", "serial@clang", "gomp"')
    st = load_study(write_study(text), fake_bins, np=2)
    con = db.connect(tmp_path / "r.db")
    res = sweep.run_study(st, con, fake_bins, find_root())
    assert res.clean
    out = tmp_path / "rep"
    files = report.write_report(con, res.session_id, out)
    md = (out / "index.md").read_text()
    assert "## The OpenMP front door: the same binary on three runtimes" in md
    assert (out / "omp_same_binary.png") in files and (out / "omp_same_binary_clang.png") in files
    whole = md.split("## The OpenMP front door")[1].split("\n## ")[0]
    sec, clang = whole.split("### clang's binaries")
    assert "### gcc's binaries" in sec
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
    # the clang part: libomp against libomp@plait, native plait@clang beside them
    crows = [ln for ln in clang.splitlines() if ln.startswith("| fib |")]
    assert len(crows) == 2, clang
    # columns: kernel, params, P, libomp, libomp@plait, native, ratio to libomp, ratio to native
    assert all(r.split("|")[7].strip().endswith(": within") for r in crows), crows  # 9 ns against 60
    assert "`plait@clang`" in clang
    cov = [ln for ln in clang.splitlines() if "overhead per task over the serial recursion" in ln]
    assert len(cov) == 1 and "libomp 58.0" in cov[0] and cov[0].split("|")[3].strip().startswith("7.00"), cov
    # no section without gomp@plait runs
    st2 = load_study(write_study(STUDY.replace(', "gomp@plait"', "").replace(', "libomp@plait"', ""), "n.toml"),
                     fake_bins, np=2)
    res2 = sweep.run_study(st2, con, fake_bins, find_root())
    report.write_report(con, res2.session_id, tmp_path / "rep2")
    assert "OpenMP front door" not in (tmp_path / "rep2" / "index.md").read_text()
