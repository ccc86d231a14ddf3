"""plait-bench calibrate / scale / simulate / validate / project and trace check's DAG, against the
real binaries (build/gcc-release/bin, with plait-dag): small sizes, seconds each.

Skipped only when build/gcc-release/bin does not exist at all (as test_e2e_real.py; with
PLAIT_BENCH_REQUIRE_BUILD=1 a missing build fails instead).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
from plait_bench import scale

GCC_BIN = Path(os.environ.get("PLAIT_E2E_GCC_BIN") or REPO / "build" / "gcc-release" / "bin")

if not GCC_BIN.is_dir():
    if os.environ.get("PLAIT_BENCH_REQUIRE_BUILD") == "1":
        pytest.fail(f"{GCC_BIN} does not exist but PLAIT_BENCH_REQUIRE_BUILD=1: build first (make build)", pytrace=False)
    pytest.skip(f"SKIPPED: {GCC_BIN} does not exist (run `make build`; `make test` builds it before pytest)",
                allow_module_level=True)


def _cli(args, tmp_path, extra_env=None):
    env = {**os.environ, "PLAIT_BENCH_GCC_BIN": str(GCC_BIN), "PLAIT_BENCH_DB": str(tmp_path / "r.db"), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "plait_bench", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=REPO)


@pytest.fixture(scope="module")
def fib_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("dag")
    t = d / "fib.json"
    subprocess.run([str(GCC_BIN / "fib-plait"), "--n", "30", "--cutoff", "14", "--threads", "1", "--quiet"], check=True,
                   env={**os.environ, "PLAIT_TRACE": str(t)}, capture_output=True)
    return t


@pytest.fixture(scope="module")
def costs(tmp_path_factory):
    """A real calibration (one round)."""
    out = tmp_path_factory.mktemp("cm") / "cost-model.json"
    # calibrate refuses a model measured on a busy machine; a burst of load from elsewhere gets
    # two more chances before the tests that need a model fail
    for attempt in range(3):
        try:
            m = scale.calibrate(type("B", (), {"gcc": GCC_BIN})(), out, rounds=1)
            return out, m
        except scale.ScaleError as e:
            if "busy machine" not in str(e) or attempt == 2:
                raise
            time.sleep(10)


def test_calibration_measures_and_writes_the_model(costs):
    path, m = costs
    on_disk = json.loads(path.read_text())
    assert on_disk == m
    for k in ("spawn_ns", "steal_ns", "trace_task_ns", "trace_ns"):
        assert m[k] >= 0, k
    assert m["steal_ns"] > 0 and m["trace_ns"] > 0  # a traced spawn costs something
    assert sorted(m["assumed"]) == ["spin_ns", "steal_fail_ns", "wake_ns"]
    assert m["measured"]["tasks"] > 100000


def test_trace_check_runs_the_dag_check(fib_trace, tmp_path):
    r = _cli(["trace", "check", str(fib_trace)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "DAG ok" in r.stdout and "0 tasks nobody joins" in r.stdout


def test_trace_check_reports_a_broken_dag(fib_trace, tmp_path):
    doc = json.loads(fib_trace.read_text())
    # Point one task's parent at a task that does not exist.
    for e in doc["traceEvents"]:
        if e.get("cat") == "task" and e["args"].get("parent"):
            e["args"]["parent"] = 12345
            break
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = _cli(["trace", "check", str(bad)], tmp_path)
    assert r.returncode == 1
    assert "DAG:" in r.stderr and "12345" in r.stderr and "no task of the trace" in r.stderr


def test_simulate_prints_a_row_per_worker_count_and_is_reproducible(fib_trace, tmp_path, costs):
    args = ["simulate", str(fib_trace), "--workers", "1..8", "--costs", str(costs[0]), "--seed", "3"]
    a, b = _cli(args, tmp_path), _cli(args, tmp_path)
    assert a.returncode == 0, a.stderr
    rows = [l.split() for l in a.stdout.splitlines() if l.strip()[:1].isdigit()]
    # The same seed gives the same simulation: every column but the simulator's own run time.
    assert [r[:-1] for r in rows] == [l.split()[:-1] for l in b.stdout.splitlines() if l.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["1", "2", "4", "8"]
    times = [float(r[1]) for r in rows]
    assert times[1] < times[0]  # a cut-off fib has parallelism to spare at 2 workers


def test_simulate_on_a_two_package_topology(fib_trace, tmp_path, costs):
    base = ["simulate", str(fib_trace), "--workers", "16", "--costs", str(costs[0])]
    near = _cli(base + ["--topology", "package:2 core:8", "--steal-ns-levels", "300,300"], tmp_path)
    far = _cli(base + ["--topology", "package:2 core:8", "--steal-ns-levels", "300,100000"], tmp_path)
    assert near.returncode == 0 and far.returncode == 0, near.stderr + far.stderr
    t = lambda r: float(next(l.split() for l in r.stdout.splitlines() if l.strip().startswith("16"))[1])
    assert t(far) > t(near)
    r = _cli(base + ["--topology", "package:2 core:8", "--steal-ns-levels", "300"], tmp_path)
    assert r.returncode == 2 and "one cost per --topology level" in r.stderr


def test_simulate_bad_input_is_one_line(fib_trace, tmp_path):
    for args, want in (
        (["simulate", str(fib_trace), "--workers", "0"], "--workers must be in 1..4096"),
        (["simulate", str(fib_trace), "--workers", "2", "--steal", "chunk:0"], "--steal must be"),
        (["simulate", str(tmp_path / "none.json"), "--workers", "2"], "No such file"),
        (["simulate", str(fib_trace), "--costs", str(tmp_path / "none.json")], "no such file"),
    ):
        r = _cli(args, tmp_path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and want in lines[0], (args, r.stderr)
        assert r.stdout == ""


def test_truncated_trace_and_trace_without_dag_are_refused(fib_trace, tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_bytes(fib_trace.read_bytes()[: fib_trace.stat().st_size // 2])
    r = _cli(["simulate", str(cut), "--workers", "2"], tmp_path)
    assert r.returncode == 2 and "truncated" in r.stderr
    old = tmp_path / "v1.json"
    old.write_text(json.dumps({"otherData": {"format": "plait-trace-1", "runtime": "libomp", "workers": 1}, "traceEvents": []}))
    r = _cli(["simulate", str(old), "--workers", "2"], tmp_path)
    assert r.returncode == 2 and "without DAG edges" in r.stderr


def test_validate_and_scale_on_small_workloads(tmp_path, costs, monkeypatch):
    bins = type("B", (), {"gcc": GCC_BIN})()
    monkeypatch.setitem(scale.WORKLOADS, "fib", ("fib", ["--n", "26", "--cutoff", "10"]))
    vs = scale.validate(bins, ["fib"], costs[0], rounds=1, workers=(1, 2))
    v = vs[0]
    assert set(v.measured) == {1, 2} and set(v.predicted) == {1, 2}
    assert all(t > 0 for t in v.measured.values()) and all(t > 0 for t in v.predicted.values())
    md = scale.validation_markdown(vs, "test")
    assert "| fib |" in md and "P=2" in md
    r = _cli(["scale", "fib", "--threads", "1,2", "--rounds", "1", "--costs", str(costs[0]), "-o", str(tmp_path / "f.png"),
              "--", "--n", "26", "--cutoff", "10"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "parallelism" in r.stdout and (tmp_path / "f.png").stat().st_size > 1000


def test_validate_refuses_unknown_kernels_and_missing_cost_model(tmp_path):
    r = _cli(["validate", "--kernels", "fib,nope", "--costs", str(tmp_path / "x.json")], tmp_path)
    assert r.returncode == 2 and "unknown nope" in r.stderr
    r = _cli(["project", "--g", "0"], tmp_path)
    assert r.returncode == 2 and "--g 0" in r.stderr


@pytest.mark.parametrize("args", [
    ["scale", "fib", "--threads", "1", "--rounds", "1", "-o", "{blocked}/f.png", "--", "--n", "20"],
    ["validate", "--kernels", "fib", "--workers", "1", "--rounds", "1", "--costs", "{costs}", "-o", "{blocked}/v.md"],
    ["project", "--g", "1", "--workers", "1,2", "--rounds", "1", "--costs", "{costs}", "-o", "{blocked}/proj"],
    ["calibrate", "--rounds", "1", "-o", "{blocked}/cost.json"],
])
def test_an_output_that_cannot_be_written_is_refused_before_measuring(tmp_path, costs, args):
    """A folder that cannot be made (a file is in the way): one line, exit 2, nothing run."""
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    r = _cli([a.format(blocked=blocked, costs=costs[0]) for a in args], tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write there" in lines[0] and "nothing was run" in lines[0], r.stderr
    assert blocked.read_text() == "not a folder"


def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path):
    """SIGINT while the modules load, and later inside a command with no handler of its own."""
    env = {**os.environ, "PLAIT_BENCH_GCC_BIN": str(GCC_BIN), "PLAIT_BENCH_DB": str(tmp_path / "r.db")}
    for delay in (0.02, 0.1, 0.3, 0.6, 1.2):
        p = subprocess.Popen([sys.executable, "-m", "plait_bench", "calibrate", "--rounds", "100", "-o",
                              str(tmp_path / "c.json")], env=env, cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        # The first few ms are the interpreter's own start (it reports a Ctrl-C there itself, as
        # for any Python program: "Fatal Python error: init_import_site", "init_sys_streams", ...,
        # or dies by the signal); from plait_bench's first line on: ours.
        if "Could not import runpy module" in err or "Fatal Python error: init_" in err or \
                p.returncode == -signal.SIGINT:
            assert "plait_bench" not in err, (delay, err)
            continue
        assert "Traceback" not in err, (delay, err)
        assert p.returncode == 130, (delay, p.returncode, err)
        assert err.strip().splitlines()[-1] == "plait-bench: interrupted", (delay, err)


@pytest.mark.parametrize("cost, says", [
    (9897077.0, r"steal cost measured 9897077 ns .*busy machine \(load average"),  # measured once, the machine loaded
    (-15.7, r"steal cost measured -15.7 ns .*not positive"),  # a noisy machine can measure a steal below zero
])
def test_calibration_refuses_a_steal_cost_out_of_range(tmp_path, monkeypatch, cost, says):
    """A steal cost that is not positive, or that a busy machine measured: no cost model, nothing written."""
    def fake_bench(binary, args, threads, reps=1, warmup=0, env=None, timeout=600):
        stats = {"tasks": 1000, "steal_cost_ns": cost}
        return [{"time_s": 0.01, "stats": stats}] * reps
    monkeypatch.setattr(scale, "run_bench", fake_bench)
    monkeypatch.setattr(scale, "run_dag", lambda bins, args: {"work_ns": 1e7, "leaf_work_ns": 1.0, "leaves": 1})
    out = tmp_path / "cost-model.json"
    with pytest.raises(scale.ScaleError, match=says):
        scale.calibrate(type("B", (), {"gcc": GCC_BIN})(), out, rounds=1)
    assert not out.exists()
