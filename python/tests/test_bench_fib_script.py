"""scripts/bench_fib.py's per-round interval is the sign-test interval plait-bench uses."""
import importlib.util
import pathlib
import random

from plait_bench.suite import median_ci

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_bench_fib():
    spec = importlib.util.spec_from_file_location("bench_fib", ROOT / "scripts" / "bench_fib.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sign_interval_matches_median_ci():
    bf = load_bench_fib()
    rng = random.Random(7)
    for n in (6, 7, 9, 11, 15, 21, 25):
        values = [rng.uniform(9.0, 11.0) for _ in range(n)]
        med, lo, hi = bf.sign_interval(values)
        assert (lo, hi) == median_ci(values)
        assert lo <= med <= hi


def test_sign_interval_small_samples_give_the_range():
    bf = load_bench_fib()
    med, lo, hi = bf.sign_interval([3.0, 1.0, 2.0])
    assert (med, lo, hi) == (2.0, 1.0, 3.0)


def test_sign_interval_eleven_rounds_uses_second_and_tenth():
    bf = load_bench_fib()
    values = list(range(1, 12))  # 1..11
    assert bf.sign_interval(values) == (6, 2, 10)
