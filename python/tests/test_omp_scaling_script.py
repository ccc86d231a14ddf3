"""scripts/omp_scaling.py: its summary arithmetic, and bad arguments rejected with one line."""
import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "omp_scaling.py"


def load():
    spec = importlib.util.spec_from_file_location("omp_scaling", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_summary_speedups_and_paired_ratios():
    m = load()
    res = {
        "scaling": {
            # fib: over each series' own one-thread time
            "fib": {"serial/1": [0.001] * 3, "gomp@plait/1": [0.04, 0.04, 0.04], "gomp@plait/2": [0.02, 0.021, 0.019],
                    "gomp/1": [0.2] * 3, "gomp/2": [0.8] * 3, "gomp@libomp/1": [0.18] * 3, "gomp@libomp/2": [0.2] * 3},
            # uts: over the serial build
            "uts": {"serial/1": [0.2, 0.21, 0.19], "plait/2": [0.1, 0.1, 0.1], "gomp@plait/2": [0.11, 0.12, 0.1],
                    "gomp/2": [0.15, 0.1, 0.2], "gomp@libomp/2": [0.13, 0.14, 0.09]},
        }
    }
    s = m.summarise(res, ["fib", "uts"], [1, 2])
    fib = s["fib"]["rows"]
    assert abs(fib["gomp@plait/2"]["speedup"] - 2.0) < 1e-9          # 0.04 / 0.02
    assert abs(fib["gomp@plait/2"]["efficiency"] - 1.0) < 1e-9
    assert abs(fib["gomp/2"]["speedup"] - 0.25) < 1e-9
    uts = s["uts"]["rows"]
    assert abs(uts["plait/2"]["speedup"] - 2.0) < 1e-9               # serial median 0.2 / 0.1
    assert abs(uts["plait/2"]["efficiency"] - 1.0) < 1e-9
    # per round: gomp@plait over the faster of gomp and gomp@libomp in that round
    r = s["uts"]["plait_over_faster_peer"]["2"]
    ratios = sorted([0.11 / 0.13, 0.12 / 0.1, 0.1 / 0.09])
    assert r["n"] == 3 and abs(r["median"] - ratios[1]) < 1e-12
    assert (r["lo"], r["hi"]) == (None, None)  # below 6 values: no 95 % interval (plait_bench.stats)
    md = m.markdown({**res, "summary": s, "failures": []}, ["fib", "uts"], [1, 2])
    assert "| kernel | series | P = 1 | P = 2 |" in md and "2.00x (100 %)" in md
    assert f"{ratios[1]:.3f} [no 95 % interval: fewer than 6 values]" in md


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_bad_arguments_one_line_each():
    cases = [
        (["--workers", "0", "--out", "/tmp/x"], "--workers"),
        (["--workers", "two", "--out", "/tmp/x"], "--workers"),
        (["--kernels", "nope", "--out", "/tmp/x"], "accepted: fib, uts"),
        (["--overhead-n", "99", "--out", "/tmp/x"], "--overhead-n"),
        (["--bin", "/nonexistent/bin", "--out", "/tmp/x"], "missing /nonexistent/bin/fib-serial"),
    ]
    for args, needle in cases:
        p = run(*args)
        assert p.returncode != 0, args
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("omp_scaling: ") and needle in lines[0], (args, p.stderr)
        assert p.stdout == ""
