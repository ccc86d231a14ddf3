"""The scripts' per-round intervals are plait-bench's: scripts/ab.py, bench_fib.py, omp_scaling.py and
uts_efficiency.py import plait_bench.stats, with the system's python3 as well as the venv's."""
import pathlib
import subprocess
import sys

from plait_bench.stats import interval_text, median_interval

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ("ab", "bench_fib", "omp_scaling", "uts_efficiency")


def test_every_script_takes_its_interval_from_the_stats_module():
    for name in SCRIPTS:
        text = (ROOT / "scripts" / f"{name}.py").read_text()
        assert "from plait_bench.stats import" in text, name
        assert "math.comb" not in text, f"{name} computes an interval of its own"


def test_the_scripts_import_with_a_bare_interpreter():
    # -I -S: no PYTHONPATH, no site-packages (the venv installs plait_bench there, editable): only
    # what the scripts put on sys.path themselves
    code = ("import sys; sys.path.insert(0, 'scripts'); import ab, bench_fib, omp_scaling, uts_efficiency; "
            "print(omp_scaling.interval_cell(omp_scaling.interval([float(x) for x in range(1, 12)]), '.1f'))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "6.0 [2.0, 10.0]"  # 11 rounds: the 2nd and 10th values


def test_too_few_values_say_so_instead_of_a_range():
    med, ci = median_interval([3.0, 1.0, 2.0])
    assert med == 2.0 and ci is None
    assert interval_text(ci) == "[no 95 % interval: fewer than 6 values]"
    assert interval_text((1.0, 3.0), ".1f") == "[1.0, 3.0]"
