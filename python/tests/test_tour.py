"""Tours (`make demo`): the repository's tour files, and a whole tour on fake binaries -- one verdict
row and one section per study, timelines drawn, Ctrl-C resumed without losing or repeating work."""

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import FAKE, HERE, REPO, make_fake_bins
from plait_bench.registry import find_root
from plait_bench.tour import PART_IDS, TourError, load_tour, resolve_tour_path
from plait_bench.verdicts import STUDIES

KERNELS = ("fib", "uts", "steal", "sparselu", "health", "mandel", "amr")


def _study(path, name, body):
    path.write_text(textwrap.dedent(f"""
        [study]
        name = "{name}"
        rounds = 2
        warmup = 0
        seed = 1
        timeout_s = 30
        pin = "none"
        """) + textwrap.dedent(body))
    return path


def _tour_files(tmp_path):
    s = {
        "000": _study(tmp_path / "t000.toml", "t000", """
            [[benchmark]]
            kernel = "uts"
            runtimes = ["serial", "plait", "gomp", "libomp", "tbb"]
            threads = [1, 2]
            cases = [{ tree = "T3", g = 1 }, { type = "binomial", b0 = 200, q = 0.12, m = 8, seed = 1, g = 8 }]
            """),
        "001": _study(tmp_path / "t001.toml", "t001", """
            [[benchmark]]
            kernel = "fib"
            runtimes = ["serial", "plait", "gomp", "libomp", "tbb"]
            threads = [1, 2]
            params = { n = 15 }
            sweep = { cutoff = [8, 0] }
            [[benchmark]]
            kernel = "steal"
            runtimes = ["plait", "gomp", "libomp", "tbb"]
            threads = 2
            params = { auto = true }
            [[benchmark]]
            kernel = "health"
            runtimes = ["serial", "plait", "gomp", "libomp", "tbb"]
            threads = [1, 2]
            params = { size = "ci" }
            sweep = { cutoff = ["coarse", "fine"] }
            """),
        "002": _study(tmp_path / "t002.toml", "t002", """
            [[benchmark]]
            kernel = "mandel"
            runtimes = ["serial"]
            threads = 1
            params = { size = "small" }
            [[benchmark]]
            kernel = "mandel"
            runtimes = ["plait"]
            threads = 2
            params = { size = "small" }
            runtime_params.plait = { variant = ["taskloop-linear"], steal = ["one", "half"], grain = [1, 256, 262144] }
            [[benchmark]]
            kernel = "mandel"
            runtimes = ["gomp", "libomp"]
            threads = 2
            params = { size = "small" }
            runtime_params.gomp = { variant = ["taskloop-linear"], grain = [1, 256, 262144] }
            runtime_params.libomp = { variant = ["taskloop-linear"], grain = [1, 256, 262144] }
            """),
        "003": _study(tmp_path / "t003.toml", "t003", """
            [[benchmark]]
            kernel = "amr"
            runtimes = ["plait", "gomp"]
            threads = [1, 2]
            params = { preset = "small" }
            sweep = { variant = ["loop", "task-2"] }
            [[benchmark]]
            kernel = "amr"
            runtimes = ["serial"]
            threads = 1
            params = { preset = "small" }
            """),
        "mpi": _study(tmp_path / "tmpi.toml", "tmpi", """
            [[benchmark]]
            kernel = "uts"
            runtimes = ["serial", "plait", "mpi"]
            threads = [1, 2]
            params = { tree = "T3" }
            [[benchmark]]
            kernel = "uts"
            runtimes = ["mpi"]
            ranks = [1, 2]
            threads = [1, 2]
            params = { tree = "T3" }
            runtime_params = { mpi = { hybrid = [true] } }
            [[benchmark]]
            kernel = "amr"
            runtimes = ["mpi"]
            threads = 2
            params = { preset = "small" }
            sweep = { variant = ["loop", "task-2"] }
            """),
        "omp": _study(tmp_path / "tomp.toml", "tomp", """
            [[benchmark]]
            kernel = "sparselu"
            runtimes = ["serial", "gomp", "gomp@libomp", "gomp@plait", "plait", "libomp", "libomp@plait"]
            threads = [1, 2]
            params = { size = "ci" }
            """),
    }
    tour = tmp_path / "tour.toml"

    def trace(name, kernel, runtime, params):
        return (f'{{ name = "{name}", kernel = "{kernel}", runtime = "{runtime}", threads = 2, '
                f'params = {{ {params} }} }},')

    traces = {
        "002": [trace(n, "mandel", rt, 'size = "small"')
                for n, rt in (("m-plait", "plait"), ("m-libomp", "libomp"), ("m-libomp-on-plait", "libomp@plait"))],
        "003": [trace(n, "amr", rt, f'variant = "{v}"')
                for n, rt, v in (("amr-loop", "plait", "loop"), ("amr-task-2", "plait", "task-2"),
                                 ("amr-task-2-libomp", "libomp", "task-2"),
                                 ("amr-task-2-libomp-on-plait", "libomp@plait", "task-2"))],
    }
    titles = {"000": "uts", "001": "suite", "002": "loops", "003": "amr", "omp": "same binary", "mpi": "ranks"}
    text = '[tour]\nname = "t"\ndescription = "a test tour"\n'
    for pid, title in titles.items():
        text += (f'[[part]]\nid = "{pid}"\ntitle = "{title}"\nstudies = ["{s[pid]}"]\n'
                 f'est_s = {2 if pid in ("000", "001") else 1}\n')
        if pid in traces:
            text += "trace = [\n" + "\n".join(traces[pid]) + "\n]\n"
    tour.write_text(text)
    return tour


@pytest.fixture
def tour_env(tmp_path):
    bins = make_fake_bins(tmp_path / "b", kernels=KERNELS)
    for k in ("uts", "amr"):  # the MPI builds, run by a fake mpirun
        exe = bins.gcc / f"{k}-mpi"
        exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{FAKE}" --as {k}-mpi "$@"\n')
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_mpirun.py"}" "$@"\n')
    mpirun.chmod(mpirun.stat().st_mode | stat.S_IXUSR)
    (bins.gcc.parent / "libplait-omp.so.1").write_text("")
    libomp = tmp_path / "libomp.so.5"
    libomp.write_text("")
    (bins.clang.parent / "lib").mkdir()
    (bins.clang.parent / "lib" / "libplait-ompt.so").write_text("")  # the fake writes its trace itself
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "FAKE_BENCH"))}
    env.update(PLAIT_ROOT=str(REPO), PLAIT_BENCH_DB=str(tmp_path / "r.db"), PLAIT_BENCH_GCC_BIN=str(bins.gcc),
               PLAIT_BENCH_CLANG_BIN=str(bins.clang), PLAIT_BENCH_LIBOMP=str(libomp), COLUMNS="200",
               PLAIT_BENCH_MPIRUN=str(mpirun), PLAIT_BENCH_QUIET_CHECK="off")
    return tmp_path, env


def _tour(args, env, **kw):
    return subprocess.run([sys.executable, "-m", "plait_bench", "tour", *args], env=env, capture_output=True,
                          text=True, **kw)


def test_tour_on_fake_binaries(tour_env):
    tmp, env = tour_env
    tour = _tour_files(tmp)
    out = tmp / "report"
    r = _tour([str(tour), "--out", str(out)], env)
    assert r.returncode == 0, r.stderr
    index = (out / "index.md").read_text()
    assert index.index("## Verdicts") < index.index("## 000:")  # the report opens with the verdicts
    verdict_lines = [ln for ln in index.splitlines() if ln.startswith("| ") and ": " in ln.split("|")[1]]
    for pid in PART_IDS:
        rows = [ln for ln in verdict_lines if ln.startswith(f"| {pid}: {STUDIES[pid]}")]
        assert rows, pid  # a verdict row per study ...
        assert all(any(w in ln for w in ("agrees", "partly", "disagrees", "tie")) for ln in rows), rows
        assert f"\n## {pid}: " in index  # ... and a section
    # the fakes' models: study 003's Task-2 beats Loop and keeps the workers busier (dense trace)
    assert "| 003: " in index and "Fig 3: under Task-2" in index
    # the OpenMP part: one verdict per compiler
    omp_rows = [ln for ln in verdict_lines if ln.startswith("| omp: ")]
    assert any("gcc-built" in ln for ln in omp_rows) and any("clang-built" in ln and "libomp@plait / libomp" in ln
                                                              for ln in omp_rows), omp_rows
    row3 = next(ln for ln in verdict_lines if "Fig 3: under Task-2" in ln)
    assert "Task-2 100 %, Loop 51 %" in row3  # no main task in the fakes: every worker counts and "agrees" in row3
    # the same clang binary's utilisation on both runtimes, from one OMPT tool's timelines
    row_ompt = next(ln for ln in verdict_lines if "Fig 3 through one OMPT tool" in ln)
    assert "traced by tools/ompt" in row_ompt and "Plait" in row_ompt and "libomp" in row_ompt
    for name in ("m-plait", "m-libomp", "m-libomp-on-plait", "amr-loop", "amr-task-2", "amr-task-2-libomp",
                 "amr-task-2-libomp-on-plait"):
        assert (out / "timelines" / f"{name}.png").stat().st_size > 0
        assert f"timelines/{name}.png" in index
    # the clang binary on libplait-omp, traced by the OMPT tool: preloaded, the tool given
    assert "Timeline: mandel-libomp@plait" in index
    for s in ("t000", "t001", "t002", "t003", "tomp", "tmpi"):
        assert (out / s / "index.md").is_file()
    assert "Verdicts: tour 't'" in r.stdout  # the terminal prints the same table
    # --report-only redraws from the stored runs, and a finished tour starts afresh next time
    r2 = _tour([str(tour), "--out", str(tmp / "again"), "--report-only"], env)
    assert r2.returncode == 0, r2.stderr
    assert (tmp / "again" / "index.md").read_text().split("## Verdicts")[1].split("\n## ")[0] == \
        index.split("## Verdicts")[1].split("\n## ")[0]


def test_tour_interrupted_resumes(tour_env):
    tmp, env = tour_env
    tour = _tour_files(tmp)
    slow = dict(env, FAKE_BENCH_SLEEP="0.05")
    p = subprocess.Popen([sys.executable, "-m", "plait_bench", "tour", str(tour), "--out", str(tmp / "rep")],
                         env=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    con = None
    deadline = time.time() + 60
    while time.time() < deadline:  # until the second study has stored runs
        time.sleep(0.2)
        if (tmp / "r.db").exists():
            con = sqlite3.connect(tmp / "r.db")
            try:
                n = con.execute("SELECT COUNT(*) FROM runs r JOIN sessions s ON s.id = r.session_id "
                                "WHERE s.study = 't001'").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            con.close()
            if n >= 3:
                break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "again to resume" in err
    st = json.loads((tmp / "tour-t.json").read_text())
    assert list(st["sessions"]) == ["t000"] and not st["complete"]
    r = _tour([str(tour), "--out", str(tmp / "rep")], env)
    assert r.returncode == 0, r.stderr
    assert "resuming tour 't': 1 studies" in r.stderr and "resuming session" in r.stderr
    con = sqlite3.connect(tmp / "r.db")
    per_study = dict(con.execute("SELECT study, COUNT(*) FROM sessions GROUP BY study").fetchall())
    assert per_study == {"t000": 1, "t001": 1, "t002": 1, "t003": 1, "tomp": 1, "tmpi": 1}  # nothing run twice
    total = con.execute("SELECT COUNT(*) FROM planned_runs").fetchone()[0]
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == total  # each planned run once
    assert con.execute("SELECT COUNT(DISTINCT planned_id) FROM runs").fetchone()[0] == total


@pytest.mark.parametrize("text, msg", [
    ("[tour]\nname = 'x'\n", "no \\[\\[part\\]\\]"),
    ("[tour]\nname = 'x'\n[[part]]\nid = '004'\nstudies = ['quick']\n", "id '004' is not one of 000, 001, 002, 003, omp"),
    ("[tour]\nname = 'x'\n[[part]]\nid = '000'\nstudies = []\n", "studies must be a non-empty list"),
    ("[tour]\nname = 'x'\n[[part]]\nid = '000'\nstudies = ['quick']\nest_s = -1\n", "est_s must be"),
    ("[tour]\nname = 'x'\n[[part]]\nid = '000'\nstudies = ['quick']\ntrace = [{ name = 'a', kernel = 'uts', runtime = 'gomp' }]\n",
     "cannot be traced; accepted: plait, libomp"),
    ("[tour]\nname = 'x'\n[[part]]\nid = '000'\nstudies = ['quick']\n[[part]]\nid = '000'\nstudies = ['quick']\n", "appears twice"),
    ("[tour\n", "cannot read it as TOML"),
    ("[tour]\nname = 'x'\nrounds = 3\n[[part]]\nid = '000'\nstudies = ['quick']\n", "unknown key\\(s\\) in \\[tour\\]: rounds"),
])
def test_bad_tour_files(tmp_path, text, msg):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(TourError, match=msg):
        load_tour(p, find_root(), np=2, check_binaries=False)


def test_bad_tour_cli_one_line(tour_env):
    tmp, env = tour_env
    r = _tour(["no-such-tour"], env)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no such tour file" in r.stderr and "demo, full" in r.stderr
    r = _tour(["demo", "--full"], env)
    assert r.returncode == 2 and "not both" in r.stderr
    assert not (tmp / "r.db").exists()  # nothing written


def _cell(series, times):
    from plait_bench.analysis import Cell, Run

    c = Cell("k", {}, series, series, 2)
    c.runs = [Run(i, "k", series, series, 2, {}, {}, i + 1, "measured", "ok", t, {}, None) for i, t in enumerate(times)]
    return c


@pytest.mark.parametrize("mine, ref, word", [
    ([0.90, 0.91, 0.92], [1.0, 1.0, 1.0], "better"),       # every round faster, median beyond 3 %
    ([1.10, 1.20, 1.15], [1.0, 1.0, 1.0], "worse"),
    ([0.90, 1.05, 0.80], [1.0, 1.0, 1.0], "tie"),          # the rounds disagree: a quick tour's noise
    ([0.99, 0.98, 0.99], [1.0, 1.0, 1.0], "tie"),          # all faster, but within 3 %
    ([0.9] * 5 + [1.2] * 4, [1.0] * 9, "tie"),             # 9 rounds: the 95 % interval holds 1
    ([0.9] * 8 + [1.2], [1.0] * 9, "better"),              # ... or lies below it
])
def test_compare_pairs_rounds(mine, ref, word):
    from plait_bench.verdicts import compare

    w, r, n = compare(_cell("a", mine), [_cell("b", ref)])
    assert (w, n) == (word, len(mine))


@pytest.mark.parametrize("ratios, word", [
    ([1.02, 0.98, 1.05], "in"),     # a quick tour: every round inside ±10 %
    ([1.02, 1.15, 1.05], "tie"),    # one round outside: it cannot tell
    ([1.2, 1.3, 1.25], "out"),      # every round outside
    # 9 rounds: the 95 % interval of the median is [x_(2), x_(8)], so one outlier does not decide
    ([1.01, 1.02, 0.99, 1.03, 1.00, 1.04, 1.3, 1.02, 1.01], "in"),
    ([1.01, 1.02, 0.99, 1.03, 1.00, 1.04, 1.3, 1.2, 1.01], "tie"),
    ([], "no data"),
])
def test_within_band(ratios, word):
    from plait_bench.verdicts import within

    assert within(ratios, 1 / 1.1, 1.1) == word


@pytest.mark.parametrize("plait, libomp, word", [
    (0.85, 0.80, "agrees"),      # beyond 3 points higher on Plait
    (0.81, 0.80, "tie"),         # within 3 points
    (0.70, 0.80, "disagrees"),
    (None, 0.80, "no data"),     # a timeline missing
])
def test_amr_ompt_utilisation_verdict(plait, libomp, word):
    from plait_bench.verdicts import AMR_OMPT_TRACES, Dataset, PartData, _verdict_003_ompt

    util = {AMR_OMPT_TRACES[0]: libomp}
    if plait is not None:
        util[AMR_OMPT_TRACES[1]] = plait
    v = _verdict_003_ompt(PartData(Dataset([]), util))
    assert v.verdict == word
