"""Study 002 (plait_bench.loops, plait_bench.report_loops): break-even grain, adaptive vs tuned, variance,
flatloop efficiency/targets, and the report section drawn from synthetic runs."""

from __future__ import annotations

import math

import pytest

from plait_bench.analysis import Dataset, Run
from plait_bench.loops import (
    adaptive_vs_tuned,
    break_even,
    cv,
    flatloop_rows,
    has_loops,
    lines,
)
from plait_bench.report_loops import loops_section

_id = [0]


def run(kernel, runtime, time_s, threads=2, base=None, status="ok", stats=None, **rp):
    """A measured run; rp are runtime-only parameters (variant, grain, steal ...)."""
    _id[0] += 1
    base = dict(base or {"size": "test"})
    params = {**base, **{k.replace("_", "-"): str(v) for k, v in rp.items()}}
    extra = ",".join(f"{k}={params[k]}" for k in sorted(params) if k not in base)
    series = runtime + (f"[{extra}]" if extra else "")
    return Run(id=_id[0], kernel=kernel, runtime=runtime, series=series, threads=1 if runtime == "serial" else threads,
               params=params, base=base, round=1, kind="measured", status=status, time_s=time_s,
               stats=dict(stats or {}), message=None)


def bathtub_runs():
    rs = [run("mandel", "serial", 1.0), run("mandel", "serial", 1.0)]
    # plait puretask-single, steal one: a bathtub with its floor at grain 64
    curve = {1: 2.0, 4: 1.0, 16: 0.60, 64: 0.52, 256: 0.55, 1024: 0.70}
    for g, t in curve.items():
        for k in range(3):
            rs.append(run("mandel", "plait", t * (1 + 0.01 * k), variant="puretask-single", grain=g, steal="one",
                          stats={"affinity": 0.5 if g < 64 else 0.9, "tasks": 1000 // g}))
    # same with half stealing: flat at small grains
    for g, t in {1: 0.56, 4: 0.55, 16: 0.54, 64: 0.53, 256: 0.55, 1024: 0.70}.items():
        rs.append(run("mandel", "plait", t, variant="puretask-single", grain=g, steal="half"))
    rs.append(run("mandel", "plait", 0.54, variant="adaptive", steal="one"))
    rs.append(run("mandel", "plait", 0.60, variant="adaptive", steal="half"))
    for g, t in {1: 3.0, 64: 0.6}.items():
        rs.append(run("mandel", "libomp", t, variant="puretask-single", grain=g))
    rs.append(run("mandel", "gomp", 0.7, variant="ws-dynamic", chunk=16))
    rs.append(run("mandel", "gomp", 0.9, variant="ws-dynamic", chunk=1))
    return rs


def test_break_even_is_smallest_grain_within_tolerance():
    med = {1: 2.0, 4: 1.0, 16: 0.57, 64: 0.52, 256: 0.55}
    be, best_x, best = break_even(med)
    assert (be, best_x, best) == (16, 64, 0.52)  # 0.57 <= 1.1 * 0.52 = 0.572
    assert break_even(med, tol=0.05)[0] == 64  # 0.55 is within 5 %, but 256 > 64 and 16 is not
    assert break_even({}) is None
    assert break_even({math.nan: 1.0}) is None


def test_cv():
    assert cv([1.0]) is None
    assert cv([2.0, 2.0, 2.0]) == 0
    assert cv([1.0, 3.0]) == pytest.approx(math.sqrt(2) / 2)


def test_lines_and_adaptive_vs_tuned():
    ds = Dataset(bathtub_runs())
    assert has_loops(ds)
    ls = lines(ds, "mandel", {"size": "test"}, 2)
    labels = [l.key.label for l in ls]
    assert "plait puretask-single steal=one" in labels
    assert "plait adaptive steal=half" in labels
    assert "gomp ws-dynamic steal= (chunk)" not in labels and "gomp ws-dynamic (chunk)" in labels
    one = next(l for l in ls if l.key.label == "plait puretask-single steal=one")
    assert sorted(one.points) == [1, 4, 16, 64, 256, 1024]
    assert one.medians()[64] == pytest.approx(0.52 * 1.01)
    rows = {(r.runtime, r.steal): r for r in adaptive_vs_tuned(ls)}
    r1 = rows[("plait", "one")]
    assert r1.best_label == "puretask-single grain 64"
    assert r1.ratio == pytest.approx(0.54 / (0.52 * 1.01))
    assert r1.meets  # 1.028 <= 1.05
    r2 = rows[("plait", "half")]
    assert r2.best_time == pytest.approx(0.53)
    assert not r2.meets  # 0.60 / 0.53 = 1.13


def flat_runs():
    base = {"n": "1000", "work-ns": "1000"}
    rs = [run("flatloop", "serial", 1.0, base=base, stats={"spin_steps": 1000}) for _ in range(3)]
    # plait half: K = 900 (calibrated lower), time 0.5 -> normalised 0.5/900 vs serial 1/1000 -> eff 0.9
    rs += [run("flatloop", "plait", 0.5, base=base, variant="puretask-single", grain=1, steal="half",
               stats={"spin_steps": 900, "affinity": 0.99}) for _ in range(3)]
    rs += [run("flatloop", "plait", 0.8, base=base, variant="puretask-single", grain=1, steal="one",
               stats={"spin_steps": 1000}) for _ in range(3)]
    rs += [run("flatloop", "libomp", 1.2, base=base, variant="puretask-single", grain=1,
               stats={"spin_steps": 1000}) for _ in range(3)]
    return rs


def test_flatloop_efficiency_is_normalised_by_spin_steps():
    rows = {r.label: r for r in flatloop_rows(Dataset(flat_runs()))}
    half = rows["plait puretask-single steal=half grain 1"]
    # serial: 1.0 s / 1000 steps; plait: 0.5 s / 900 steps at P=2 -> (1/1000) / (2 * 0.5/900) = 0.9
    assert half.efficiency.median == pytest.approx(0.9)
    # libomp: 1.2/1000 per step; plait half 0.5/900 -> 2.16x
    assert half.vs_libomp.median == pytest.approx((1.2 / 1000) / (0.5 / 900))
    assert half.target == "met"
    one = rows["plait puretask-single steal=one grain 1"]
    assert one.target == ""  # steal one carries no target
    lib = rows["libomp puretask-single grain 1"]
    assert lib.vs_libomp.median == pytest.approx(1.0)


def test_flatloop_target_missed_when_too_slow():
    rs = flat_runs()
    for r in rs:
        if r.runtime == "plait" and r.params.get("steal") == "half":
            r.time_s = 0.6  # efficiency 0.75
    rows = {r.label: r for r in flatloop_rows(Dataset(rs))}
    assert rows["plait puretask-single steal=half grain 1"].target == "missed"


def test_flatloop_target_names_the_part_that_is_missed():
    rs = flat_runs()
    for r in rs:
        if r.runtime == "libomp":
            r.time_s = 1.0  # Plait half: efficiency 0.9 (met), 1.8x libomp (missed)
    rows = {r.label: r for r in flatloop_rows(Dataset(rs))}
    assert rows["plait puretask-single steal=half grain 1"].target == "efficiency met, ×libomp missed"


def test_section_writes_figures_and_tables(tmp_path):
    ds = Dataset(bathtub_runs() + flat_runs())
    md, files = loops_section(ds, tmp_path, lambda n, f, extra="": f"{n} runs, {f} failed")
    text = "\n".join(md)
    names = {p.name for p in files}
    assert "loops_bathtub_mandel_size-test_p2.png" in names
    assert "loops_variance_mandel_size-test_p2.png" in names
    assert "loops_affinity_mandel_size-test_p2.png" in names
    for p in files:
        assert p.exists() and p.stat().st_size > 1000
    # grain 16: 0.606 > 1.1 * 0.5252 = 0.578, so the break-even is the best grain itself
    assert "| plait puretask-single steal=one | 64 | 64 |" in text
    assert "| plait puretask-single steal=half | 1 | 64 |" in text
    assert "flatloop: the target table" in text
    assert "| met" in text and "missed" in text


def test_failed_runs_do_not_count_as_times(tmp_path):
    rs = bathtub_runs()
    rs.append(run("mandel", "plait", None, status="verify_failed", variant="puretask-single", grain=4096, steal="one"))
    ds = Dataset(rs)
    one = next(l for l in lines(ds, "mandel", {"size": "test"}, 2) if l.key.label == "plait puretask-single steal=one")
    assert 4096 in one.points and 4096 not in one.medians()
    md, _ = loops_section(ds, tmp_path, lambda n, f, extra="": f"{n} runs, {f} failed")
    assert "| plait puretask-single steal=one | 64 | 64 |" in "\n".join(md)
