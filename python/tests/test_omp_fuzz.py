"""The OpenMP differential tester (tools/omp-fuzz/omp_fuzz.py) on its own: its verdicts, its reducer
(delta debugging over blocks, then over each block's simplifications), the generator's determinism
(one seed, one program) and that what it generates compiles; and on a real fault: a library that
gives a wrong answer is caught, reduced and reported with exit status 1."""

import importlib.util
import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

spec = importlib.util.spec_from_file_location("omp_fuzz", REPO / "tools" / "omp-fuzz" / "omp_fuzz.py")
fz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fz)

THREADS = (1, 2, 3, 8)


def outs(plait="a", gomp="a", omp="a", per_thread=None):
    o = {}
    for t in THREADS:
        for rt, v in (("libgomp", gomp), ("libomp", omp), ("plait", plait)):
            o[(rt, t)] = v
    if per_thread:
        o.update(per_thread)
    return o


def test_verdicts():
    assert fz.verdict(outs()) == "pass"
    assert fz.verdict(outs(plait="b")) == "plait"
    assert fz.verdict(outs(plait="b", per_thread={("plait", 1): "a"})) == "plait"  # wrong at some counts
    assert fz.verdict(outs(omp="exit -11\n")) == "reference"  # Plait agrees with libgomp
    assert fz.verdict(outs(gomp="timeout", plait="a")) == "reference"
    # Plait differs from both references, one of which is consistent: Plait's fault
    assert fz.verdict(outs(plait="c", omp="exit -11\n")) == "plait"
    # no runtime gives one answer at every thread count: the program is not deterministic
    nd = {(rt, t): f"{t}" for rt in ("libgomp", "libomp", "plait") for t in THREADS}
    assert fz.verdict(nd) == "generator"
    # only Plait and libgomp ran (a known reference fault skipped libomp)
    two = {k: v for k, v in outs(plait="b").items() if k[0] != "libomp"}
    assert fz.verdict(two) == "plait"
    # libgomp alone (libomp skipped) hangs at one thread and agrees with Plait elsewhere: its fault
    hang = {k: v for k, v in outs(per_thread={("libgomp", 1): "timeout after 10 s"}).items() if k[0] != "libomp"}
    assert fz.verdict(hang) == "reference"
    # ... but a reference whose answers differ from one another is not a hang: no one answer
    vary = {k: v for k, v in outs(per_thread={("libgomp", 1): "x", ("libgomp", 2): "timeout"}).items()
            if k[0] != "libomp"}
    assert fz.verdict(vary) == "generator"


def test_the_generator_is_deterministic_and_covers_every_kind():
    a, b = fz.make_program(123, "c"), fz.make_program(123, "c")
    assert a == b and fz.render(a) == fz.render(b)
    kinds = {bl["kind"] for s in range(400) for bl in fz.make_program(s, "cxx")["blocks"]}
    assert kinds == set(fz.BLOCKS)


def test_the_reducer_keeps_only_what_fails():
    prog = fz.make_program(7, "c")
    prog["blocks"] = [fz.BLOCKS["for"].make(fz.random.Random(i)).to_json() for i in range(6)]
    prog["blocks"][3] = {"kind": "detach", "n": 9, "by": "mixed", "seed": 5}

    def fails(p):  # fails while a detach block with n >= 2 is there
        return any(b["kind"] == "detach" and b["n"] >= 2 for b in p["blocks"])

    small = fz.reduce_program(prog, None, fails, lambda *m: None)
    assert [b["kind"] for b in small["blocks"]] == ["detach"]
    assert small["blocks"][0]["n"] == 2 and small["blocks"][0]["by"] == "self"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_generated_programs_compile_and_a_wrong_runtime_is_caught(tmp_path):
    # A "library" that answers otherwise: a preload whose constructor prints an extra line.
    shim = tmp_path / "wrong.c"
    shim.write_text('#include <stdio.h>\n__attribute__((constructor)) static void f(void) { printf("surprise\\n"); }\n')
    lib = tmp_path / "libwrong.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(shim), "-o", str(lib)], check=True)
    work = tmp_path / "work"
    cp = subprocess.run([sys.executable, str(REPO / "tools" / "omp-fuzz" / "omp_fuzz.py"), "--seed", "3",
                         "--programs", "2", "--threads", "1,2", "--plait", str(lib), "--libomp", "none",
                         "--work", str(work), "--quiet"], capture_output=True, text=True, timeout=600)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "1 Plait faults" in cp.stdout
    found = list(work.glob("plait-fault-*.json"))
    assert len(found) == 1
    rec = json.loads(found[0].read_text())
    assert rec["verdict"] == "plait" and len(rec["program"]["blocks"]) == 1  # reduced to one block
    assert rec["outputs"]["plait@1"].startswith("surprise")


def test_bad_input_is_one_line(tmp_path):
    cp = subprocess.run([sys.executable, str(REPO / "tools" / "omp-fuzz" / "omp_fuzz.py"), "--plait",
                         str(tmp_path / "nope.so")], capture_output=True, text=True)
    assert cp.returncode == 2 and cp.stderr.count("\n") == 1 and "--plait" in cp.stderr
