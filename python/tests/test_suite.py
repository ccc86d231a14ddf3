"""Study 001 (kernel suite): Table 1 (spawn/join, steal cost), Table 4 (one-thread overhead), speedup
figures and the study-001 targets, on synthetic runs with known numbers and on the fake benchmark."""

import shlex
import subprocess
import sys

import pytest

from plait_bench import db, sweep
from plait_bench.analysis import Dataset, Run
from plait_bench.registry import find_root
from plait_bench.report import write_report
from plait_bench.study import StudyError, load_study
from plait_bench.suite import (
    clock_ghz,
    cost_table,
    cpuinfo_ghz,
    cutoff_class,
    has_suite,
    overhead_table,
    serial_spread,
    suite_problems,
    targets,
)

from conftest import make_fake_bins

_ids = iter(range(1, 10**6))


def run(kernel, runtime, threads, base, time_s, status="ok", **stats):
    return Run(id=next(_ids), kernel=kernel, runtime=runtime, series=runtime, threads=threads, params=dict(base),
               base={k: str(v) for k, v in base.items()}, round=1, kind="measured", status=status,
               time_s=time_s if status == "ok" else None, stats=stats, message=None if status == "ok" else "boom")


def by_target(tg, word):
    return [t for t in tg if word in t.target]


# ---- cut-off classes ----------------------------------------------------------------------------


def test_cutoff_classes():
    ds = Dataset([
        run("sort", "serial", 1, {"size": "test", "cutoff": "coarse"}, 1.0),
        run("sort", "serial", 1, {"size": "test", "cutoff": "fine"}, 1.0),
        run("sparselu", "serial", 1, {"size": "test"}, 1.0),
        run("fib", "serial", 1, {"n": 40, "cutoff": 25}, 1.0),
        run("fib", "serial", 1, {"n": 40, "cutoff": 12}, 1.0),
        run("fib", "serial", 1, {"n": 32, "cutoff": 0}, 1.0),
        run("nqueens", "serial", 1, {"n": 12, "cutoff": 3}, 1.0),
        run("nqueens", "serial", 1, {"n": 12, "cutoff": 12}, 1.0),
        run("health", "serial", 1, {"size": "test", "cutoff": 2}, 1.0),
    ])
    assert cutoff_class(ds, "sort", {"size": "test", "cutoff": "coarse"}) == "coarse"
    assert cutoff_class(ds, "sort", {"size": "test", "cutoff": "fine"}) == "fine"
    assert cutoff_class(ds, "sparselu", {"size": "test"}) == "none"
    assert cutoff_class(ds, "fib", {"n": "40", "cutoff": "25"}) == "coarse"  # fib: n < cutoff is serial
    assert cutoff_class(ds, "fib", {"n": "40", "cutoff": "12"}) == "fine"
    assert cutoff_class(ds, "fib", {"n": "32", "cutoff": "0"}) == "0"  # the spawn microbenchmark
    assert cutoff_class(ds, "nqueens", {"n": "12", "cutoff": "3"}) == "coarse"  # depth: larger is finer
    assert cutoff_class(ds, "nqueens", {"n": "12", "cutoff": "12"}) == "fine"
    assert cutoff_class(ds, "health", {"size": "test", "cutoff": "2"}) == "2"  # alone: its own class
    probs = suite_problems(ds)
    assert [(p.kernel, p.cut) for p in probs][:3] == [("nqueens", "coarse"), ("nqueens", "fine"), ("sort", "coarse")]
    assert ("fib", "0") not in [(p.kernel, p.cut) for p in probs]  # fib cut-off 0 is Table 1, not Table 4
    assert has_suite(ds)
    # quick.toml's fib with a task per call alone keeps the study-000 report
    assert not has_suite(Dataset([run("fib", "serial", 1, {"n": 30, "cutoff": 0}, 1.0)]))


# ---- Table 1 ------------------------------------------------------------------------------------


def test_spawn_and_steal_cost_arithmetic():
    fb = {"n": 30, "cutoff": 0}
    runs = [run("fib", "serial", 1, fb, 0.010, tasks=1_000_000)]
    runs += [run("fib", "plait", 1, fb, t, tasks=1_000_000) for t in (0.016, 0.017, 0.018)]  # 6, 7, 8 ns
    runs += [run("fib", "tbb", 1, fb, 0.110, tasks=1_000_000), run("fib", "tbb", 1, fb, None, status="crashed")]
    runs += [run("fib", "plait", 2, fb, 0.009, tasks=1_000_000)]  # P=2 is not Table 1
    runs += [run("steal", "plait", 2, {"auto": "1"}, 0.3, steal_cost_ns=400.0, steal_cost_cycles=1000.0, tsc_ghz=2.5),
             run("steal", "plait", 2, {"auto": "1"}, 0.3, steal_cost_ns=600.0, steal_cost_cycles=1500.0, tsc_ghz=2.5,
                 auto_converged=0),
             run("steal", "gomp", 2, {"auto": "1"}, 0.3, steal_cost_ns=900.0, steal_cost_cycles=2250.0, tsc_ghz=2.5)]
    ds = Dataset(runs)
    ghz, src = clock_ghz(ds, fallback=lambda: 99.0)
    assert ghz == 2.5 and "steal binary" in src
    rows = {r.series: r for r in cost_table(ds, ghz)}
    assert list(rows) == ["plait", "tbb", "gomp"]
    p = rows["plait"]
    assert p.spawn_ns.median == pytest.approx(7.0) and p.spawn_ns.lo == pytest.approx(6.0)
    assert p.spawn_ns.hi == pytest.approx(8.0) and p.spawn_ns.n == 3
    assert p.spawn_cycles.median == pytest.approx(17.5)  # 7 ns x 2.5 GHz
    assert p.steal_ns.median == pytest.approx(500.0) and p.steal_cycles.median == pytest.approx(1250.0)
    assert p.unconverged == 1
    assert rows["tbb"].spawn_ns.median == pytest.approx(100.0)
    assert rows["tbb"].failed == 1  # the crashed run is counted, not dropped
    assert rows["gomp"].spawn_cell is None and rows["gomp"].steal_ns.median == 900.0
    tg = targets(ds, ghz)
    assert by_target(tg, "spawn/join")[0].verdict == "met"
    st = by_target(tg, "steal")[0]
    assert st.verdict == "met" and "1250" in st.plait and "gomp 2250" in st.reference
    # no steal runs: the clock comes from the fallback (the report machine's /proc/cpuinfo)
    ds2 = Dataset([r for r in runs if r.kernel == "fib"])
    ghz2, src2 = clock_ghz(ds2, fallback=lambda: 4.0)
    assert ghz2 == 4.0 and "/proc/cpuinfo" in src2
    assert cost_table(ds2, ghz2)[0].spawn_cycles.median == pytest.approx(28.0)
    assert by_target(targets(ds2, ghz2), "spawn/join")[0].verdict == "not met"  # 28 cycles > 20
    assert by_target(targets(ds2, ghz2), "steal")[0].verdict == "no data"


def test_steal_and_spawn_targets_carry_a_paired_interval():
    """The steal row pairs Plait with the peer of the lowest median, round by round; the spawn row
    takes Plait's fib run minus the same round's serial run. Both say what the 95 % interval of
    that median says about the target."""
    fb = {"n": 30, "cutoff": 0}
    runs = []
    # 9 rounds; Plait's steal cost is below gomp's in every round, by a factor 0.5-0.7;
    # tbb is slower still, so gomp is the closest peer. Round 5's serial fib is slow: the paired
    # spawn cost of that round is low, not negative.
    for rnd in range(1, 10):
        plait_c, gomp_c = 800.0 + 10 * rnd, 1400.0 + 60 * rnd
        serial_t = 0.012 if rnd == 5 else 0.010
        for r in (run("steal", "plait", 2, {"auto": "1"}, 0.3, steal_cost_cycles=plait_c, steal_cost_ns=plait_c / 2.5,
                      tsc_ghz=2.5),
                  run("steal", "gomp", 2, {"auto": "1"}, 0.3, steal_cost_cycles=gomp_c, steal_cost_ns=gomp_c / 2.5,
                      tsc_ghz=2.5),
                  run("steal", "tbb", 2, {"auto": "1"}, 0.3, steal_cost_cycles=3000.0, steal_cost_ns=1200.0, tsc_ghz=2.5),
                  run("fib", "serial", 1, fb, serial_t, tasks=1_000_000),
                  run("fib", "plait", 1, fb, serial_t + 0.004 + 0.0001 * rnd, tasks=1_000_000)):
            r.round = rnd
            runs.append(r)
    ds = Dataset(runs)
    tg = targets(ds, 2.5)
    st = by_target(tg, "steal")[0]
    ratios = sorted((800.0 + 10 * k) / (1400.0 + 60 * k) for k in range(1, 10))
    assert st.verdict == "met" and st.interval == "within"
    assert f"paired plait ×{ratios[4]:.3f} over gomp's steal cost (9 rounds; 95 % interval " \
           f"{ratios[1]:.3f}–{ratios[7]:.3f}: within the target)" in st.reference
    assert f"paired ×{ratios[4]:.2f} over gomp" in st.brief
    sp = by_target(tg, "spawn/join")[0]
    cyc = sorted((0.004 + 0.0001 * k) / 1e6 * 1e9 * 2.5 for k in range(1, 10))  # 10.25 ... 12.25 cycles
    assert sp.verdict == "met" and sp.interval == "within"
    assert f"{cyc[4]:.1f} cycles, 95 % interval {cyc[1]:.1f}–{cyc[7]:.1f} (9 rounds: within the target)" in sp.reference
    # Plait's steal cost above the closest peer's in every round: outside, and not met
    for r in runs:
        if r.kernel == "steal" and r.runtime == "plait":
            r.stats["steal_cost_cycles"] *= 3
    ds = Dataset(runs)
    st = by_target(targets(ds, 2.5), "steal")[0]
    assert st.verdict == "not met" and st.interval == "outside"
    # fewer than 6 rounds: no interval, undecided
    few = Dataset([r for r in runs if r.round <= 5])
    sp = by_target(targets(few, 2.5), "spawn/join")[0]
    assert sp.interval == "undecided" and "no 95 % interval below 6 rounds" in sp.reference


def test_serial_spread_is_the_hosts_noise_per_kernel():
    """Slowest over fastest serial run per kernel, widest first; a kernel with one serial run or
    several cut-offs is listed once."""
    runs = [run("health", "serial", 1, {"size": "small", "cutoff": "coarse"}, t) for t in (0.2, 0.5, 1.0)]
    runs += [run("health", "serial", 1, {"size": "small", "cutoff": "fine"}, t) for t in (0.3, 0.33)]
    runs += [run("sort", "serial", 1, {"size": "small", "cutoff": "coarse"}, t) for t in (0.30, 0.33)]
    runs += [run("fft", "serial", 1, {"size": "small", "cutoff": "coarse"}, 0.4)]
    runs += [run("sort", "plait", 1, {"size": "small", "cutoff": "coarse"}, t) for t in (0.1, 0.9)]
    sp = serial_spread(Dataset(runs))
    assert [(k, n) for k, _, n in sp] == [("health", 3), ("sort", 2)]
    assert sp[0][1] == pytest.approx(5.0) and sp[1][1] == pytest.approx(1.1)


def test_cpuinfo_ghz(tmp_path):
    f = tmp_path / "cpuinfo"
    f.write_text("processor\t: 0\ncpu MHz\t\t: 2596.128\nprocessor\t: 1\ncpu MHz\t\t: 3000.000\n")
    assert cpuinfo_ghz(str(f)) == pytest.approx(3.0)
    assert cpuinfo_ghz(str(tmp_path / "none")) is None


# ---- Table 4 and targets 3-4 --------------------------------------------------------------------


def _kernel_runs(kernel, cut, t_serial, one, two, fail=None):
    """serial + every runtime at P=1 (t_serial x one[rt]) and P=2 (two[rt] seconds)."""
    b = {"size": "small", "cutoff": cut} if cut else {"size": "small"}
    out = [run(kernel, "serial", 1, b, t_serial)]
    for rt in ("plait", "tbb", "gomp", "libomp"):
        for P, t in ((1, t_serial * one[rt]), (2, two[rt])):
            st = "unverified" if fail == (rt, P) else "ok"
            out += [run(kernel, rt, P, b, t * f, status=st) for f in (0.99, 1.0, 1.01)]
    return out


def test_overhead_table_and_targets():
    one_ok = {"plait": 1.04, "tbb": 1.10, "gomp": 1.20, "libomp": 1.15}
    one_bad = {"plait": 1.08, "tbb": 1.02, "gomp": 1.20, "libomp": 1.15}
    fast = {"plait": 0.5, "tbb": 0.6, "gomp": 0.7, "libomp": 0.55}
    slow = {"plait": 0.8, "tbb": 0.6, "gomp": 0.7, "libomp": 0.55}
    runs = (_kernel_runs("sort", "coarse", 1.0, one_ok, fast) + _kernel_runs("sort", "fine", 1.0, one_ok, fast)
            + _kernel_runs("fft", "coarse", 2.0, one_bad, fast) + _kernel_runs("fft", "fine", 1.0, one_ok, slow)
            + _kernel_runs("sparselu", None, 1.0, one_ok, fast, fail=("gomp", 2))
            + _kernel_runs("health", "fine", 1.0, one_ok, fast, fail=("plait", 2)))
    ds = Dataset(runs)
    series, rows = overhead_table(ds)
    assert series == ["plait", "tbb", "libomp", "gomp"]
    r = {(x.problem.kernel, x.problem.cut): x for x in rows}
    ratio, nf = r[("fft", "coarse")].cells["plait"]
    assert ratio.median == pytest.approx(1.08) and ratio.lo == pytest.approx(1.08 * 0.99) and nf == 0
    assert r[("fft", "coarse")].t_serial.median == 2.0
    assert r[("sparselu", "none")].cells["gomp"][1] == 0  # failures were at P=2, not in Table 4

    tg = targets(ds, None)
    fine = {t.scope.split(" ")[0]: t for t in by_target(tg, "fine cut-off")}
    coarse = {t.scope.split(" ")[0]: t for t in by_target(tg, "coarse cut-off")}
    assert set(fine) == {"sort", "fft", "sparselu", "health"}  # no cut-off kernels count as fine ...
    assert set(coarse) == {"sort", "fft", "sparselu"}  # ... and as coarse
    assert fine["sort"].verdict == "met" and "closest libomp" in fine["sort"].reference
    assert fine["fft"].verdict == "not met" and "×1.45" in fine["fft"].reference  # 0.8 / 0.55
    assert fine["sparselu"].verdict == "met" and "FAILED" in fine["sparselu"].reference  # a failed peer is shown
    assert fine["health"].verdict == "not met" and "all runs FAILED" in fine["health"].plait
    assert coarse["sort"].verdict == "met" and "+4.0%" in coarse["sort"].plait
    assert coarse["fft"].verdict == "not met" and "+8.0%" in coarse["fft"].plait
    assert by_target(tg, "spawn/join")[0].verdict == "no data"
    assert all(t.verdict in ("met", "not met", "no data") for t in tg)


# ---- flags in study files -------------------------------------------------------------------------


def test_flag_parameter(tmp_path, write_study):
    bins = make_fake_bins(tmp_path, kernels=("steal",))
    st = load_study(write_study("""
        [study]
        name = "f"
        [[benchmark]]
        kernel = "steal"
        runtimes = ["plait"]
        threads = 2
        params = { auto = true, seconds = 0.5 }
    """), bins, np=2)
    from plait_bench.registry import binary_help
    from plait_bench.runner import command_for

    (c,) = st.configs
    cmd = command_for(c, bins.binary("steal", "plait"), st.settings, binary_help(bins.binary("steal", "plait")))
    assert "--auto" in cmd and cmd[cmd.index("--auto") + 1] != "1"
    cp = subprocess.run(cmd, capture_output=True, text=True)
    assert cp.returncode == 0, shlex.join(cmd) + cp.stderr
    off = load_study(write_study(st.text.replace("auto = true", "auto = false"), "g.toml"), bins, np=2).configs[0]
    assert "--auto" not in command_for(off, bins.binary("steal", "plait"), st.settings, binary_help(bins.binary("steal", "plait")))
    with pytest.raises(StudyError, match="takes no value"):
        load_study(write_study(st.text.replace("auto = true", 'auto = "yes please"'), "h.toml"), bins, np=2)


# ---- report and summary on the fake benchmark ------------------------------------------------------

STUDY = """
[study]
name = "bots-fake"
rounds = 2
warmup = 0
seed = 5

[[benchmark]]
kernel = "nqueens"
threads = "1..2"
params = { size = "test" }
sweep = { cutoff = ["coarse", "fine"] }

[[benchmark]]
kernel = "sparselu"
threads = "1..2"
params = { size = "test" }

[[benchmark]]
kernel = "fib"
threads = 1
params = { n = 20, cutoff = 0 }

[[benchmark]]
kernel = "steal"
runtimes = ["plait", "tbb", "gomp", "libomp"]
threads = 2
params = { auto = true }
"""


def test_report_suite_sections(tmp_path, write_study, monkeypatch):
    bins = make_fake_bins(tmp_path, kernels=("fib", "nqueens", "sparselu", "steal"))
    monkeypatch.setenv("FAKE_BENCH_FAIL", "libomp:2:crash")
    st = load_study(write_study(STUDY), bins, np=2)
    con = db.connect(tmp_path / "s.db")
    res = sweep.run_study(st, con, bins, find_root())
    assert not res.clean
    out = tmp_path / "report"
    files = {f.name for f in write_report(con, res.session_id, out)}
    assert {"index.md", "speedup_nqueens.png", "speedup_sparselu.png", "fib_overhead.png"} <= files
    assert (out / "speedup_nqueens.png").read_bytes()[:4] == b"\x89PNG"
    md = (out / "index.md").read_text()
    assert "### Table 1. Inlined spawn/join cost and 2-core steal cost" in md
    # fake fib: serial 2 ns per call, plait 8 ns -> 6 ns = 18 cycles at the steal binary's 3 GHz
    assert "| plait | 6.00 ns [6.00–6.00] | 18.0 [18.0–18.0] |" in md
    assert "TSC rate 3.000 GHz measured by the steal binary" in md
    assert "### Table 4. One-thread overhead normalised to serial" in md
    assert "| nqueens | coarse | size=test |" in md and "1.020 [1.020–1.020]" in md  # plait 1.02 x serial
    assert "| sparselu | no cut-off | size=test |" in md
    assert "### Targets (study 001)" in md
    assert "**met**" in md
    # libomp crashed at P=2 everywhere: shown as failed in the steal table, the figures' captions and the list
    assert "**2 FAILED**" in md and "**crashed**" in md
    assert "(2 failed) on " in md  # a speedup caption counts nqueens' failed runs
    targets_md = md.split("### Targets (study 001)")[1]
    assert "Plait inlined spawn/join ≤ 20 cycles | fib, cut-off 0, P=1 | 18.0 cycles" in targets_md
    assert "libomp – [" not in targets_md  # the crashed peer is listed as failed, not as a number
    assert "libomp –, 2 FAILED" in targets_md

    from rich.console import Console

    from plait_bench.summary import print_summary

    console = Console(record=True, width=200)
    print_summary(con, res.session_id, console)
    text = console.export_text()
    assert "Table 4: one-thread overhead" in text and "study-001 targets" in text and "Table 1" in text
    assert "spawn/join ≤ 20 cycles" in text and "FAILED" in text
    assert "median [min–max]" in text  # a title's brackets are text, not markup
    assert "│ libomp  │         58.00 │  174.0 │   – (2 FAILED) │" in text  # the failure beside the steal cost


def test_studies_validate():
    """The shipped study files are valid against the built-in names or the real binaries (whichever exist)."""
    from plait_bench.registry import BinDirs

    root = find_root()
    bins = BinDirs.resolve(root)
    for name, n in (("bots", 144), ("bots-ci", 144), ("microbench", 9)):
        st = load_study(root / "studies" / f"{name}.toml", bins, np=2, check_binaries=bins.gcc.is_dir())
        assert len(st.configs) == n, name
    assert sys.version_info >= (3, 11)


def test_paired_ratio_per_round():
    """The paired ratio: per round, Plait over the fastest reference of that round; median over rounds."""
    from plait_bench.analysis import Cell
    from plait_bench.suite import paired_ratio

    def cell(series, times):
        c = Cell(kernel="k", base={}, series=series, runtime=series, threads=2)
        for rnd, t in times.items():
            r = run("k", series, 2, {}, t)
            r.round = rnd
            c.runs.append(r)
        return c

    # round 4 has no gomp run and round 5 a failed tbb run: both are left out
    mine = cell("plait", {1: 1.0, 2: 2.0, 3: 3.0, 4: 1.0, 5: 1.0})
    tbb = cell("tbb", {1: 2.0, 2: 1.0, 3: 3.0, 4: 1.0})
    gomp = cell("gomp", {1: 4.0, 2: 4.0, 3: 6.0, 5: 1.0})
    bad = run("k", "tbb", 2, {}, None, status="error")
    bad.round = 5
    tbb.runs.append(bad)
    p = paired_ratio(mine, [tbb, gomp])
    assert p.n == 3 and p.median == pytest.approx(1.0)  # ratios 0.5, 2.0, 1.0
    assert p.ci is None and p.against(10.0) == "undecided"  # 3 rounds: no 95 % interval
    assert paired_ratio(mine, [cell("libomp", {9: 1.0})]) is None
    # two runs of one cell in a round: their median
    two = cell("plait", {1: 1.0})
    extra = run("k", "plait", 2, {}, 3.0)
    two.runs.append(extra)
    p = paired_ratio(two, [cell("serial", {1: 1.0})])
    assert (p.median, p.n) == (pytest.approx(2.0), 1)


def test_median_ci_is_the_sign_test_interval():
    """[x_(k), x_(n+1-k)] with the largest k whose binomial coverage is >= 95 %; none below 6 values."""
    from plait_bench.stats import median_ci

    assert median_ci([]) is None
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # [min, max] covers only 93.75 %
    assert median_ci([6.0, 1.0, 5.0, 2.0, 4.0, 3.0]) == (1.0, 6.0)  # 96.9 %, unsorted input
    assert median_ci([float(x) for x in range(1, 10)]) == (2.0, 8.0)  # 9 rounds: 96.1 %
    assert median_ci([float(x) for x in range(1, 26)]) == (8.0, 18.0)  # 25 rounds: 95.7 %
    assert median_ci([float(x) for x in range(1, 101)]) == (40.0, 61.0)  # the textbook n = 100 interval
    assert median_ci([float(x) for x in range(1, 10)], level=0.99) == (1.0, 9.0)  # 99.6 % only at the ends
    assert median_ci([float(x) for x in range(2000)]) is not None  # exact integers: no float overflow


def test_paired_interval_says_within_outside_or_undecided():
    """The interval column: within when the whole 95 % interval meets the limit, outside when none
    of it does, undecided otherwise; it never changes the medians' verdict."""
    base = {"size": "small", "cutoff": "fine"}

    def fine_target(ratios):
        runs = []
        for rnd, q in enumerate(ratios, start=1):
            for rt, v in (("plait", q), ("tbb", 1.0)):
                r = run("sort", rt, 2, base, v)
                r.round = rnd
                runs.append(r)
        return by_target(targets(Dataset(runs), None), "fine cut-off")[0]

    clear = fine_target([0.90, 0.92, 0.95, 0.91, 0.93, 0.94, 0.96, 0.90, 0.97])
    assert (clear.verdict, clear.interval) == ("met", "within")
    assert "95 % interval 0.900–0.960: within the target" in clear.reference
    slow = fine_target([1.10, 1.08, 1.05, 1.09, 1.12, 1.07, 1.06, 1.11, 1.04])
    assert (slow.verdict, slow.interval) == ("not met", "outside")
    # a tie: the median meets the target, but two of nine rounds are enough to put 1 inside the interval
    tie = fine_target([0.97, 1.02, 0.99, 1.01, 0.98, 1.03, 0.96, 1.00, 0.995])
    assert (tie.verdict, tie.interval) == ("met", "undecided")
    assert "cannot tell" in tie.reference
    few = fine_target([0.9, 0.9, 0.9])
    assert (few.verdict, few.interval) == ("met", "undecided")
    assert "no 95 % interval below 6 rounds" in few.reference


def test_targets_show_the_paired_ratio_beside_the_verdict():
    """A median miss stays a miss when the paired ratio is below 1: the verdict is the medians'."""
    base = {"size": "small", "cutoff": "fine"}
    runs = []
    # Plait's runs fall in slow spells of the host in rounds 1-2 only: median 1.3 vs peer 1.0, paired 0.9
    for rnd, (p, t) in enumerate([(1.5, 1.0), (1.4, 1.0), (0.9, 1.0), (1.3, 1.45), (0.9, 1.0)], start=1):
        for rt, v in (("plait", p), ("tbb", t)):
            r = run("sort", rt, 2, base, v)
            r.round = rnd
            runs.append(r)
    tg = targets(Dataset(runs), None)
    fine = by_target(tg, "fine cut-off")[0]
    assert fine.verdict == "not met"
    assert "paired plait ×0.900 over tbb (5 rounds;" in fine.reference
    assert "paired ×0.90" in fine.brief


def test_fine_paired_ratio_is_with_the_best_peer_by_median():
    """Three runtimes that tie: paired with the best-median peer, not the per-round fastest peer
    (which would put Plait behind in most rounds); the other peers' paired ratios are listed."""
    base = {"size": "small", "cutoff": "fine"}
    plait = [1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.03, 0.97, 1.00]
    tbb = [1.01, 0.98, 1.00, 1.02, 0.97, 1.00, 0.99, 1.03, 1.005]
    gomp = [0.98, 1.03, 1.01, 0.97, 1.02, 1.01, 0.98, 1.00, 1.02]
    runs = []
    for rnd in range(9):
        for rt, v in (("plait", plait[rnd]), ("tbb", tbb[rnd]), ("gomp", gomp[rnd])):
            r = run("sort", rt, 2, base, v)
            r.round = rnd + 1
            runs.append(r)
    fine = by_target(targets(Dataset(runs), None), "fine cut-off")[0]
    assert fine.verdict == "met"  # medians 1.00 vs tbb 1.00 and gomp 1.01
    per_round_min = sorted(p / min(t, g) for p, t, g in zip(plait, tbb, gomp))[4]
    assert per_round_min > 1.01  # the biased statistic would read as a loss
    assert "paired plait ×0.995 over tbb (9 rounds; 95 % interval" in fine.reference
    assert "; paired plait ×0.990 over gomp" in fine.reference
    assert fine.interval == "undecided"


def test_fine_target_compares_libomp_with_plaits_clang_build():
    """libomp (clang only) is compared with plait@clang when the session has it, the gcc peers with
    the gcc build; without plait@clang the row names the compiler mismatch."""
    base = {"size": "small", "cutoff": "fine"}
    times = {"plait": 1.05, "plait@clang": 0.97, "libomp": 1.00, "tbb": 1.10, "gomp": 1.08}

    def session(series):
        runs = []
        for rnd in range(1, 10):
            for s in series:
                r = run("sort", s.split("@")[0], 2, base, times[s] * (1 + 0.001 * rnd))
                r.series = s
                r.round = rnd
                runs.append(r)
        return by_target(targets(Dataset(runs), None), "fine cut-off")[0]

    both = session(["plait", "plait@clang", "libomp", "tbb", "gomp"])
    assert both.verdict == "met" and "plait@clang" in both.plait
    # closest: gomp (1.05/1.08 = 0.972) is closer than libomp (0.97/1.00 = 0.970) and tbb (0.955)
    assert both.reference.startswith("closest gomp (")
    assert "libomp vs plait@clang ×0.970" in both.reference and "tbb vs plait ×0.955" in both.reference
    assert "compilers differ" not in both.reference
    assert "paired plait@clang ×0.970 over libomp" in both.reference
    gcc_only = session(["plait", "libomp", "tbb", "gomp"])
    assert gcc_only.verdict == "not met"  # 1.05 > libomp's 1.00
    assert "libomp vs plait ×1.050 (compilers differ)" in gcc_only.reference
    assert gcc_only.brief.startswith("plait ") and "(compilers differ)" in gcc_only.brief
