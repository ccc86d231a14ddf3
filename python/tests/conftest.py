import stat
import sys
import textwrap
from pathlib import Path

import pytest

from plait_bench.registry import BinDirs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FAKE = HERE / "fake_bench.py"

# The tests that want the machine to themselves, marked `serial`: `make pytest` runs every other
# test in two processes (pytest-xdist) and then these alone, one at a time. They start their own
# load and read the machine's state (test_quiet), measure costs and refuse a busy machine
# (test_scale's calibration; its Ctrl-C timings), run the real binaries under their timeouts
# (test_e2e_real), or interrupt, kill or race a run against deadlines.
SERIAL = (
    "test_quiet.py",
    "test_scale.py",
    "test_e2e_real.py",
    "test_tour.py::test_tour_interrupted_resumes",
    "test_db.py::test_kill_minus_9_then_resume",
    "test_bad_input.py::test_threads_and_parameter_ranges",
    "test_bad_input.py::test_two_runs_of_one_study_both_complete",
    "test_bad_input.py::test_a_waiting_run_resumes_what_an_interrupted_one_left",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        nodeid = item.nodeid.split("/")[-1]
        if any(nodeid == s or nodeid.startswith(s + "::") or nodeid.startswith(s + "[") for s in SERIAL):
            item.add_marker(pytest.mark.serial)


def bench_text(kernel: str, runtimes: list[str], threads: str, params: str, extra: str = "") -> str:
    """One [[benchmark]] table of a study file; `threads` and `params` as TOML text, `extra` more lines."""
    rts = ", ".join(f'"{r}"' for r in runtimes)
    return f'[[benchmark]]\nkernel = "{kernel}"\nruntimes = [{rts}]\nthreads = {threads}\nparams = {params}\n{extra}'


def study_text(name: str, rounds: int, warmup: int, seed: int, *benchmarks: str, extra: str = "") -> str:
    """A study file's text: its [study] table (`extra`: more lines of it), then the benchmarks (bench_text)."""
    head = f'\n[study]\nname = "{name}"\nrounds = {rounds}\nwarmup = {warmup}\nseed = {seed}\n{extra}'
    return head + "".join("\n" + b for b in benchmarks)


def make_fake_bins(base: Path, kernels=("fib", "uts")) -> BinDirs:
    gcc, clang = base / "gcc-bin", base / "clang-bin"
    gcc.mkdir(parents=True, exist_ok=True)
    clang.mkdir(parents=True, exist_ok=True)
    # as the real trees: gcc builds every runtime but libomp, clang every runtime but gomp
    for k in kernels:
        for d, rts in ((gcc, ("serial", "plait", "tbb", "gomp")), (clang, ("serial", "plait", "tbb", "libomp"))):
            for rt in rts:
                p = d / f"{k}-{rt}"
                p.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{FAKE}" --as {k}-{rt} "$@"\n')
                p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return BinDirs(gcc, clang)


@pytest.fixture
def fake_bins(tmp_path):
    return make_fake_bins(tmp_path)


@pytest.fixture
def write_study(tmp_path):
    def _w(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(text))
        return p

    return _w


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for v in ("FAKE_BENCH_FAIL", "FAKE_BENCH_SLEEP", "FAKE_BENCH_IGNORE_PRELOAD", "PLAIT_BENCH_DB", "PLAIT_BENCH_GCC_BIN",
              "PLAIT_BENCH_CLANG_BIN", "PLAIT_BENCH_LIBOMP", "LD_PRELOAD"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("PLAIT_ROOT", str(REPO))
    # The tests of the report's mechanics run fake studies on whatever this machine is doing: the
    # machine's readings are stored but decide nothing (quiet.py). test_quiet.py turns the check on.
    monkeypatch.setenv("PLAIT_BENCH_QUIET_CHECK", "off")
