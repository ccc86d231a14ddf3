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


def test_every_refusal_names_its_entry_point():
    with open(os.path.join(ROOT, "src", "omp", "unimplemented.cpp")) as f:
        text = f.read()
    with open(os.path.join(ROOT, "src", "omp", "libgomp_abi.txt")) as f:
        abi = {line.split()[1] for line in f if line.strip()}
    stubs = [line for line in text.splitlines() if line.startswith("void ")]
    assert stubs, "no refusals generated"
    for line in stubs:
        name = line.split()[1].split("(")[0]
        assert name in abi
        assert f'"{name}"' in line  # the message names the entry point
