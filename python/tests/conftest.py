import stat
import sys
import textwrap
from pathlib import Path

import pytest

from plait_bench.registry import BinDirs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FAKE = HERE / "fake_bench.py"


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
