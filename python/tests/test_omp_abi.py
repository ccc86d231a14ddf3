"""The OpenMP front door's generated files (version script, refusals) match their sources."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_generated_files_are_current():
    cp = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_omp_abi.py"), "--check"],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr


def _gen():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_omp_abi", os.path.join(ROOT, "scripts", "gen_omp_abi.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stubs(text):
    return [line for line in text.splitlines() if line.startswith("void ")]


def test_every_refusal_names_its_entry_point():
    """The refusals on disk are exactly the entry points no source defines (none today), and an
    entry point left undefined gets a stub whose message names it."""
    gen = _gen()
    abi, defined = gen.read_abi(), gen.defined_functions()
    with open(os.path.join(ROOT, "src", "omp", "unimplemented.cpp")) as f:
        on_disk = _stubs(f.read())
    assert sorted(line.split()[1].split("(")[0] for line in on_disk) == sorted({n for _, n in abi} - defined)
    # take two implemented entry points away: each gets a refusal naming it
    gone = {"GOMP_target_ext", "omp_get_thread_num_"}
    assert gone <= defined
    _, cpp = gen.render(abi, defined - gone)
    stubs = _stubs(cpp)
    assert sorted(line.split()[1].split("(")[0] for line in stubs) == sorted(gone)
    for line in stubs:
        name = line.split()[1].split("(")[0]
        assert f'"{name}"' in line and "is not implemented" in line  # the message names the entry point
