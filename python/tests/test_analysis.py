"""Arithmetic on known numbers: efficiency, speedup, Pearson r, medians, callgrind differences."""

import math

import pytest

from plait_bench.analysis import (
    Dataset, Run, Summary, UtsPoint, callgrind_total, efficiency, moved_rate, pearson, pearson_by_granularity,
    per_unit_from_two, speedup, uts_m, uts_points,
)
from plait_bench.instr import fib_calls


def test_efficiency_and_speedup():
    assert efficiency(10.0, 4, 3.125) == pytest.approx(0.8)
    assert efficiency(8.0, 2, 4.0) == pytest.approx(1.0)
    assert efficiency(1.0, 1, 2.0) == pytest.approx(0.5)
    assert speedup(10.0, 2.5) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        efficiency(1.0, 0, 1.0)


def test_pearson_known_values():
    assert pearson([1, 2, 3, 4], [2, 4, 6, 8]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # textbook example: r = 0.7745966692
    assert pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5]) == pytest.approx(0.7745966692, abs=1e-9)
    # speedups vs moved rates of four runtimes
    r = pearson([1.9, 1.5, 1.2, 0.9], [12000, 9000, 4000, 3000])
    assert r == pytest.approx(0.974735824, abs=1e-8)  # numpy.corrcoef gives the same
    assert pearson([1, 1, 1], [1, 2, 3]) is None  # constant series: undefined
    assert pearson([1], [2]) is None


def test_summary_median_min_max():
    s = Summary.of([3.0, 1.0, 2.0, 10.0])
    assert (s.median, s.lo, s.hi, s.n) == (2.5, 1.0, 10.0, 4)
    assert Summary.of([]) is None


def _run(i, runtime, threads, t, status="ok", g="1", stats=None):
    return Run(id=i, kernel="uts", runtime=runtime, series=runtime, threads=threads, params={"g": g, "tree": "T3"},
               base={"g": g, "tree": "T3"}, round=1, kind="measured", status=status, time_s=t if status == "ok" else None,
               stats=stats or {"nodes": 4112897, "tasks": 513863}, message=None)


def test_dataset_efficiency_uses_median_serial_time_of_same_problem():
    runs = [
        _run(1, "serial", 1, 8.0), _run(2, "serial", 1, 10.0), _run(3, "serial", 1, 12.0),  # median 10
        _run(4, "plait", 2, 5.0), _run(5, "plait", 2, 6.25), _run(6, "plait", 2, None, status="crashed"),
        _run(7, "serial", 1, 1.0, g="2"),  # another problem: must not be the baseline
    ]
    ds = Dataset(runs)
    c = ds.cell("uts", {"g": "1", "tree": "T3"}, "plait", 2)
    e = ds.efficiency(c)
    assert e.n == 2  # the crashed run has no efficiency ...
    assert (e.lo, e.hi) == pytest.approx((0.8, 1.0))
    assert e.median == pytest.approx(0.9)
    assert len(c.failed_runs) == 1  # ... but it is kept and counted as failed
    assert ds.speedup(c).median == pytest.approx(1.8)


def test_moved_rate_prefers_binary_value_then_computes():
    r = _run(1, "plait", 4, 2.0, stats={"moved_tasks": 8000})
    assert moved_rate(r) == pytest.approx(1000.0)  # 8000 / (4 threads * 2 s)
    r2 = _run(2, "plait", 4, 2.0, stats={"moved_tasks": 8000, "moved_per_thread_per_s": 7.0})
    assert moved_rate(r2) == 7.0


def test_uts_granularity_numbers():
    assert uts_m({"tree": "T3"}) == 8
    assert uts_m({"tree": "T3L"}) == 5
    assert uts_m({"m": "5", "tree": "T3"}) == 5
    p = UtsPoint(base={"g": "4"}, g=4, m=8, nodes=1_000_001, tasks=125_000, t_serial=0.8)
    assert p.ops_per_task == 32
    assert p.us_per_op == pytest.approx(0.2)  # 0.8 s / (1e6 nodes * 4)
    assert p.us_per_task_measured == pytest.approx(6.4)


def test_pearson_by_granularity_across_runtimes():
    runs = [_run(1, "serial", 1, 10.0)]
    speed = {"plait": (5.5, 12000), "tbb": (6.0, 9000), "libomp": (7.0, 5000), "gomp": (9.0, 2000)}
    for i, (rt, (t, moved)) in enumerate(speed.items()):
        runs.append(_run(10 + i, rt, 2, t, stats={"moved_per_thread_per_s": moved, "nodes": 4112897, "tasks": 513863}))
    ds = Dataset(runs)
    pts = uts_points(ds)
    [(p, r, n)] = pearson_by_granularity(ds, pts, 2)
    assert n == 4
    xs = [10 / 5.5, 10 / 6.0, 10 / 7.0, 10 / 9.0]
    assert r == pytest.approx(pearson(xs, [12000, 9000, 5000, 2000]))
    assert r > 0.9


def test_instruction_arithmetic(tmp_path):
    f = tmp_path / "callgrind.out"
    f.write_text("version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=main\n5 100\nsummary: 123456789\ntotals: 123456789\n")
    assert callgrind_total(f) == 123456789
    # 1000 nodes at g=1 and g=3: 999*2 more SHA-1 ops cost 3,596,400 more instructions -> 1800 per op
    assert per_unit_from_two(5_000_000, 999 * 1, 8_596_400, 999 * 3) == pytest.approx(1800.0)
    assert fib_calls(0) == 1 and fib_calls(1) == 1 and fib_calls(2) == 3 and fib_calls(20) == 21891
    with pytest.raises(ValueError):
        per_unit_from_two(1, 5, 2, 5)
    assert math.isclose(per_unit_from_two(100, fib_calls(18), 100 + 50 * (fib_calls(20) - fib_calls(18)), fib_calls(20)), 50)
