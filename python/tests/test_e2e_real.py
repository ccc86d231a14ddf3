"""End to end against the real benchmark binaries (build/gcc-release/bin): a tiny study in seconds.

Skipped only when build/gcc-release/bin does not exist at all (a bare checkout before `make build`);
`make test` builds the trees before pytest, and with PLAIT_BENCH_REQUIRE_BUILD=1 a missing build
fails instead of skipping.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, bench_text, study_text
from plait_bench.registry import BinDirs, find_root
from plait_bench.tour import PART_IDS, load_tour, resolve_tour_path

# PLAIT_E2E_GCC_BIN points the test at another build folder (for trying it against a private build).
GCC_BIN = Path(os.environ.get("PLAIT_E2E_GCC_BIN") or REPO / "build" / "gcc-release" / "bin")

if not GCC_BIN.is_dir():
    if os.environ.get("PLAIT_BENCH_REQUIRE_BUILD") == "1":
        pytest.fail(f"{GCC_BIN} does not exist but PLAIT_BENCH_REQUIRE_BUILD=1: build first (make build)", pytrace=False)
    pytest.skip(
        f"SKIPPED end-to-end test with real binaries: {GCC_BIN} does not exist (run `make build`; "
        "`make test` builds it before pytest, so this skip cannot happen there)",
        allow_module_level=True,
    )


def _cli(args, env):
    return subprocess.run([sys.executable, "-m", "plait_bench", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_tiny_study_on_real_binaries(tmp_path):
    for name in ("fib-serial", "fib-plait"):
        assert (GCC_BIN / name).is_file(), f"{GCC_BIN / name} missing: the gcc-release tree must build fib"
    has_uts = (GCC_BIN / "uts-serial").is_file() and (GCC_BIN / "uts-plait").is_file()
    study = tmp_path / "tiny.toml"
    benches = [bench_text("fib", ["serial", "plait"], '"1..2"', "{ n = 18, cutoff = 0 }")]
    if has_uts:
        benches.append(bench_text("uts", ["serial", "plait"], '"1..2"',
                                  '{ type = "binomial", b0 = 200, q = 0.12, m = 8, seed = 1 }', "sweep = { g = [1, 2] }\n"))
    study.write_text(study_text("tiny-real", 2, 1, 1, *benches, extra="timeout_s = 30\n"))
    dbp = tmp_path / "real.db"
    env = {"PLAIT_BENCH_GCC_BIN": str(GCC_BIN), "PLAIT_BENCH_DB": str(dbp)}
    cp = _cli(["run", str(study)], env)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    con = sqlite3.connect(dbp)
    con.row_factory = sqlite3.Row
    runs = con.execute("SELECT * FROM runs").fetchall()
    n_configs = 3 + (2 * 3 if has_uts else 0)
    assert len(runs) == n_configs * 3
    assert {r["status"] for r in runs} == {"ok"}, [dict(r) for r in runs if r["status"] != "ok"]
    fib = [r for r in runs if r["kernel"] == "fib"]
    for r in fib:
        assert r["verified"] == 1 and r["time_s"] > 0 and "fib(18) = 2584" in r["check_text"]
        assert json.loads(r["echo_params_json"])["n"] == "18"
        assert json.loads(r["stats_json"])["tasks"] > 0
    assert any("cpus 0" in r["pinning"] for r in runs)
    sess = con.execute("SELECT * FROM sessions").fetchone()
    assert sess["status"] == "complete"
    facts = json.loads(con.execute("SELECT facts_json FROM machines").fetchone()[0])
    assert facts["gcc"]

    cp = _cli(["report", "--out", str(tmp_path / "report")], env)
    assert cp.returncode == 0, cp.stderr
    assert (tmp_path / "report" / "index.md").is_file()
    assert (tmp_path / "report" / "fib_overhead.png").is_file()
    if has_uts:
        assert (tmp_path / "report" / "fig2_efficiency_kinstr.png").is_file()


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed (scripts/bootstrap.sh installs it)")
def test_instr_on_real_fib(tmp_path):
    dbp = tmp_path / "i.db"
    env = {"PLAIT_BENCH_GCC_BIN": str(GCC_BIN), "PLAIT_BENCH_CLANG_BIN": str(tmp_path / "none"), "PLAIT_BENCH_DB": str(dbp)}
    cp = _cli(["instr", "--kernel", "fib", "--build", "gcc"], env)
    assert cp.returncode == 0, cp.stderr
    row = sqlite3.connect(dbp).execute("SELECT unit, instr_per_unit FROM instr").fetchone()
    assert row[0] == "call" and 3 < row[1] < 2000


def test_bots_ci_study_on_real_binaries(tmp_path):
    """studies/bots-ci.toml (every kernel, runtime and cut-off at the smallest sizes, one round), limited
    to 1..2 threads, plus a short fib/steal Table 1 run: every run verifies and the report has the
    study-001 sections."""
    kernels = ("nqueens", "sort", "fft", "strassen", "sparselu", "health", "floorplan", "alignment", "fib", "steal")
    clang_bin = REPO / "build" / "clang-release" / "bin"
    missing = [f"{k}-{rt}" for k in kernels for rt in ("serial", "plait", "tbb", "gomp")
               if not (GCC_BIN / f"{k}-{rt}").is_file()]
    assert not missing, f"{GCC_BIN} lacks {missing}: the gcc-release tree must build the kernel suite"
    runtimes = '["serial", "plait", "gomp", "tbb"' + (', "libomp"]' if (clang_bin / "fib-libomp").is_file() else "]")
    text = (REPO / "studies" / "bots-ci.toml").read_text().replace('threads = "1..nproc"', 'threads = "1..2"')
    text = text.replace("[[benchmark]]\n", f"[[benchmark]]\nruntimes = {runtimes}\n")
    text += textwrap.dedent(f"""
        [[benchmark]]
        runtimes = {runtimes}
        kernel = "fib"
        threads = 1
        params = {{ n = 20, cutoff = 0 }}

        [[benchmark]]
        kernel = "steal"
        runtimes = ["plait", "tbb"]
        threads = 2
        params = {{ auto = true, seconds = 0.02 }}
    """)
    study = tmp_path / "bots-ci-2.toml"
    study.write_text(text)
    dbp = tmp_path / "bots.db"
    env = {"PLAIT_BENCH_GCC_BIN": str(GCC_BIN), "PLAIT_BENCH_CLANG_BIN": str(clang_bin), "PLAIT_BENCH_DB": str(dbp),
           "COLUMNS": "200"}
    cp = _cli(["run", str(study)], env)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    assert "Table 4: one-thread overhead" in cp.stdout and "study-001 targets" in cp.stdout
    con = sqlite3.connect(dbp)
    con.row_factory = sqlite3.Row
    runs = con.execute("SELECT * FROM runs").fetchall()
    assert {r["status"] for r in runs} == {"ok"}
    assert {r["kernel"] for r in runs} == set(kernels)
    steal = [json.loads(r["stats_json"]) for r in runs if r["kernel"] == "steal"]
    assert all("steal_cost_ns" in s and "tsc_ghz" in s for s in steal)
    assert all("--auto --threads" in r["command"] or "--auto" in r["command"].split() for r in runs if r["kernel"] == "steal")
    cp = _cli(["report", "--out", str(tmp_path / "report")], env)
    assert cp.returncode == 0, cp.stderr
    md = (tmp_path / "report" / "index.md").read_text()
    for s in ("### Table 1.", "### Table 4.", "### Targets (study 001)", "speedup_sort.png", "speedup_fib.png"):
        assert s in md, s
    for k in kernels[:-1]:
        assert (tmp_path / "report" / f"speedup_{k}.png").is_file(), k


def test_repository_tours_are_valid():
    """Every study of both tours loads against the built binaries (their --help checks every
    parameter) and every traced binary exists."""
    root = find_root()
    bins = BinDirs(GCC_BIN, GCC_BIN.parent.parent / "clang-release" / "bin")
    for name in ("demo", "full"):
        t = load_tour(resolve_tour_path(name, root), root, bins, np=2)
        assert [p.id for p in t.parts] == list(PART_IDS), name  # every study once, in order
        for p in t.parts:
            assert p.studies and all(s.configs for s in p.studies), (name, p.id)
        traces = {tr.name: tr for p in t.parts for tr in p.traces}
        # study 002's timelines on Plait and on libomp, study 003's of both AMR variants
        assert {"mandel-plait", "mandel-libomp", "amr-loop", "amr-task-2"} <= set(traces), name
        assert traces["mandel-libomp"].runtime == "libomp"
    demo = load_tour(resolve_tour_path("demo", root), root, bins, np=2)
    assert demo.total_weight < 400  # the quick tour's runs fit the 10-minute demo with the build


def test_ompt_tool_traces_one_binary_on_libomp_and_on_plait(tmp_path):
    """The project's OMPT tool (tools/ompt, clang tree) traces the same gcc-built binary on LLVM's libomp
    (preloaded: it implements the GOMP ABI) and on libplait-omp; the study tool reads both traces the
    same way: the same tasks, each run once, every worker's time split into tasks and idle."""
    from plait_bench.registry import LIBOMP_CANDIDATES
    from plait_bench.trace import analyse, load

    tool = REPO / "build" / "clang-release" / "lib" / "libplait-ompt.so"
    plait = GCC_BIN.parent / "libplait-omp.so.1"
    libomp = next((Path(c) for c in LIBOMP_CANDIDATES if Path(c).is_file()), None)
    exe = GCC_BIN / "mandel-gomp"
    for need in (tool, plait, exe):
        assert need.is_file(), f"{need} missing: make build builds it"
    assert libomp is not None, f"LLVM's libomp not found ({', '.join(LIBOMP_CANDIDATES)})"
    loaded = {}
    for name, lib in (("libomp", libomp), ("plait-omp", plait)):
        out = tmp_path / f"{name}.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "OMP_", "LD_PRELOAD"))}
        env.update(LD_PRELOAD=str(lib), OMP_TOOL_LIBRARIES=str(tool), PLAIT_TRACE=str(out))
        r = subprocess.run([str(exe), "--threads", "2", "--size", "test", "--variant", "taskloop-linear", "--grain", "64",
                            "--quiet"], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        rec = json.loads(r.stdout.strip().splitlines()[-1])
        assert rec["verified"] and Path(lib).name.split(".")[0] in rec["omp_library"], rec
        tr = load(out)
        loaded[name] = (tr, analyse(tr))
    (a_tr, a), (b_tr, b) = loaded["libomp"], loaded["plait-omp"]
    assert (a_tr.runtime, b_tr.runtime) == ("libomp", "plait-omp")
    assert a_tr.ntasks == b_tr.ntasks == 64  # a 64x64 image, 64 pixels per task
    assert not a_tr.has_steals and not b_tr.has_steals  # OMPT reports none on either
    for an in (a, b):
        assert len(an.workers) == 2 and all(0.0 <= w.utilisation <= 1.0 for w in an.workers)
