"""Study-file validation and the interleaved, shuffled plan."""

from collections import Counter

import pytest

from plait_bench.registry import BinDirs, find_root
from plait_bench.study import StudyError, load_study, missing_binaries
from conftest import bench_text, study_text

GOOD = study_text("t", 3, 1, 11,
                  bench_text("uts", ["serial", "plait", "gomp"], '"1..2"', '{ tree = "T3" }', "sweep = { g = [1, 2] }\n"),
                  bench_text("fib", ["serial", "plait"], "[2]", "{ n = 15 }"))


def problems(path, bins=None, **kw):
    with pytest.raises(StudyError) as ei:
        load_study(path, bins, np=2, **kw)
    return "\n".join(ei.value.problems)


def test_good_study_expands(write_study):
    st = load_study(write_study(GOOD), np=2)
    keys = {c.key for c in st.configs}
    # uts: 2 g x (serial@1 + plait@1,2 + gomp@1,2) = 10; fib: serial@1 + plait@2 = 2
    assert len(st.configs) == 12
    assert all(c.threads == 1 for c in st.configs if c.runtime == "serial")
    assert "uts|plait|P=2|g=2,tree=T3" in keys
    plan = st.plan()
    assert len(plan) == 12 * (1 + 3)
    assert [p.kind for p in plan[:12]] == ["warmup"] * 12
    # every round holds every configuration exactly once (A B A B ...)
    for r in range(0, 4):
        assert Counter(p.config.key for p in plan if p.round == r) == Counter(keys)
    orders = [[p.config.key for p in plan if p.round == r] for r in range(1, 4)]
    assert orders[0] != orders[1] or orders[1] != orders[2]  # shuffled anew each round
    assert [p.config.key for p in st.plan()] == [p.config.key for p in plan]  # deterministic for a seed
    assert st.plan_hash() == load_study(write_study(GOOD), np=2).plan_hash()
    other = load_study(write_study(GOOD.replace("seed = 11", "seed = 12"), "o.toml"), np=2)
    assert other.plan_hash() != st.plan_hash()


def test_by_kernel_order_runs_each_kernels_configurations_back_to_back(write_study):
    st = load_study(write_study(GOOD.replace("seed = 11", 'seed = 11\norder = "by-kernel"')), np=2)
    plan = st.plan()
    assert len(plan) == 12 * (1 + 3)
    keys = {c.key for c in st.configs}
    kernel_orders = []
    for r in range(0, 4):
        runs = [p for p in plan if p.round == r]
        assert Counter(p.config.key for p in runs) == Counter(keys)  # still every configuration once
        kernels = [p.config.kernel for p in runs]
        # one block per kernel: the kernel changes exactly once in a round of two kernels
        assert sum(1 for a, b in zip(kernels, kernels[1:]) if a != b) == 1
        kernel_orders.append(kernels[0])
    # blocks and the order inside them are shuffled anew each round
    uts_orders = [[p.config.key for p in plan if p.round == r and p.config.kernel == "uts"] for r in range(4)]
    assert len({tuple(o) for o in uts_orders}) > 1
    assert len(set(kernel_orders)) == 2
    assert [p.config.key for p in st.plan()] == [p.config.key for p in plan]  # deterministic for a seed
    shuffled = load_study(write_study(GOOD, "s.toml"), np=2)
    assert shuffled.settings.order == "shuffled" and shuffled.plan_hash() != st.plan_hash()
    assert "study.order: 'random' is not one of 'shuffled', 'by-kernel'" in problems(
        write_study(GOOD.replace("seed = 11", 'seed = 11\norder = "random"'), "bad.toml"))


def test_threads_spec(write_study):
    st = load_study(write_study(GOOD.replace('threads = "1..2"', 'threads = "1..nproc"')), np=4)
    assert sorted({c.threads for c in st.configs if c.kernel == "uts"}) == [1, 2, 3, 4]
    assert "threads" in problems(write_study(GOOD.replace('threads = "1..2"', 'threads = "zero"')))
    assert "threads" in problems(write_study(GOOD.replace('threads = "1..2"', "threads = 0")))


@pytest.mark.parametrize(
    "change, expect",
    [
        (('kernel = "fib"', 'kernel = "fob"'), "unknown benchmark 'fob'"),
        (('runtimes = ["serial", "plait"]', 'runtimes = ["serial", "cilk"]'), "unknown runtime 'cilk'"),
        (("params = { n = 15 }", "params = { nn = 15 }"), "unknown parameter 'nn'"),
        (("sweep = { g = [1, 2] }", "sweep = { gg = [1, 2] }"), "unknown parameter 'gg'"),
        (("sweep = { g = [1, 2] }", "sweep = { g = 3 }"), "sweep.g: must be a non-empty list"),
        (("rounds = 3", "rounds = 0"), "study.rounds"),
        (("rounds = 3", "roundz = 3"), "study.roundz: unknown setting"),
        (("[study]", "[studdy]"), "unknown top-level table 'studdy'"),
        (("params = { n = 15 }", "params = { n = 15, threads = 4 }"), "set by the study tool itself"),
        (('threads = [2]', 'threads = [2]\nwarp = 9'), "unknown key"),
    ],
)
def test_bad_names_are_named(write_study, change, expect):
    text = GOOD.replace(*change)
    assert text != GOOD
    assert expect in problems(write_study(text))


@pytest.mark.parametrize("change, expect", [
    (("seed = 11", "seed = 99999999999999999999999"),
     "study.seed: 99999999999999999999999 is out of range; accepted: an integer in 0..9223372036854775807"),
    (("seed = 11", "seed = -1"), "study.seed: -1 is out of range"),
    (("rounds = 3", "rounds = 99999999999999999999999"), "study.rounds: 99999999999999999999999 is out of range; "
                                                          "accepted: an integer in 1..1000"),
    (("warmup = 1", "warmup = 1001"), "study.warmup: 1001 is out of range; accepted: an integer in 0..1000"),
    (("warmup = 1", "warmup = 1\nbinary_warmup = 1001"), "study.binary_warmup: 1001 is out of range"),
    (("rounds = 3", "rounds = 2.5"), "study.rounds: 2.5 is not an integer"),
    (("seed = 11", "seed = 11\ntimeout_s = 1e300"), "study.timeout_s: 1e+300 is out of range; accepted: seconds, a "
                                                    "number > 0 and <= 604800"),
    (("seed = 11", "seed = 11\nstack = 1152921504606846976"), "study.stack: 1152921504606846976 is not a stack size"),
    (("seed = 11", "seed = 11\nomp_stacksize = '17179869184G'"), "study.omp_stacksize: '17179869184G' is not a stack "
                                                                  "size; accepted: a string of a number with an "
                                                                  "optional B, K, M or G suffix (default K), at most 64G"),
    (("seed = 11", "seed = 11\nomp_stacksize = '12Q'"), "study.omp_stacksize: '12Q' is not a stack size"),
    (("seed = 11", "seed = 11\nomp_stacksize = 100"), "study.omp_stacksize: 100 is not a stack size"),
    (('threads = [2]', 'threads = [2]\ntimeout_s = 0'), "benchmark[2] (fib).timeout_s: 0 is out of range"),
    (('threads = "1..2"', 'threads = "1..100000"'), "benchmark[1] (uts).threads: '1..100000' asks for 100000 threads; "
                                                     "accepted: 1..4096"),
    (('threads = [2]', 'threads = [5000]'), "asks for 5000 threads"),
    (("params = { n = 15 }", "params = { n = -5 }"), "benchmark[2] (fib): parameter n: -5 is out of range; accepted: "
                                                     "0..50 (built-in list)"),
    (("params = { n = 15 }", "params = { n = 15, cutoff = 1.5 }"), "parameter cutoff: '1.5' is not an integer"),
    (("sweep = { g = [1, 2] }", "sweep = { g = [1, 0] }"), "benchmark[1] (uts): parameter g: 0 is out of range; "
                                                           "accepted: 1..1000000"),
])
def test_values_out_of_range_are_named(write_study, change, expect):
    text = GOOD.replace(*change)
    assert text != GOOD
    assert expect in problems(write_study(text))


def test_parameter_ranges_come_from_the_binaries_help(write_study, fake_bins):
    """fake fib's --help says [0..50]; its -n is --threads, which does not make fib's --n a thread count."""
    text = GOOD.replace("params = { n = 15 }", "params = { n = 51 }")
    assert "parameter n: 51 is out of range; accepted: 0..50 (fib-serial --help)" in problems(write_study(text), fake_bins)
    # one problem per value, not one per runtime
    assert problems(write_study(text), fake_bins).count("parameter n: 51") == 1
    ok = GOOD.replace("params = { n = 15 }", "params = { n = 50 }")
    assert load_study(write_study(ok, "ok.toml"), fake_bins, np=2).configs


def test_a_study_file_that_is_not_text(tmp_path):
    p = tmp_path / "bin.toml"
    p.write_bytes(b"[study]\nname = '\xc3\x28'\n")
    assert "not a text file: byte 0xc3 at offset 16 is not UTF-8" in problems(p)


def test_one_problem_renders_on_one_line(write_study):
    with pytest.raises(StudyError) as ei:
        load_study(write_study("[study]\nname = 'x'\n", "one.toml"), np=2)
    assert "\n" not in ei.value.render() and ei.value.render().endswith("no [[benchmark]] tables: a study needs at least one")
    with pytest.raises(StudyError) as ei:
        load_study(write_study(GOOD.replace("rounds = 3", "rounds = 0").replace("seed = 11", "seed = -1"), "two.toml"), np=2)
    assert ei.value.render().splitlines()[0].endswith("is not valid (2 problems):")


def test_unknown_benchmark_blames_a_missing_bin_dir(write_study, tmp_path, fake_bins):
    text = GOOD.replace('kernel = "fib"', 'kernel = "nqueens"').replace("params = { n = 15 }", "")
    bins = BinDirs.resolve(find_root(), tmp_path / "gone", fake_bins.clang, {"gcc": "PLAIT_BENCH_GCC_BIN"})
    msg = problems(write_study(text), bins)
    assert f"benchmark 'nqueens' cannot be looked up: PLAIT_BENCH_GCC_BIN={tmp_path / 'gone'}: no such directory" in msg
    # with both directories there, a name not found is just unknown
    assert "unknown benchmark 'nqueens'; known: fib, uts" in problems(write_study(text), fake_bins)


def test_malformed_and_missing_files(write_study, tmp_path):
    assert "malformed TOML" in problems(write_study("[study\nname = 1"))
    assert "no such study file" in problems(tmp_path / "nope.toml")
    assert "no [[benchmark]]" in problems(write_study("[study]\nname = 'x'\n"))
    assert "nested too deeply" in problems(write_study("a = " + "[" * 100000 + "]" * 100000 + "\n", "deep.toml"))


def test_parameters_checked_against_binary_help(write_study, fake_bins):
    text = GOOD + '\n[[benchmark]]\nkernel = "uts"\nruntimes = ["plait"]\nthreads = [2]\n' \
                  'params = { t = 0, b = 200, q = 0.12, m = 8, seed = 1 }\nruntime_params = { plait = { variant = ["spawn", "group"] } }\n'
    st = load_study(write_study(text), fake_bins, np=2)
    series = {c.series for c in st.configs}
    assert "plait[variant=group]" in series and "plait[variant=spawn]" in series
    c = next(c for c in st.configs if c.series == "plait[variant=group]")
    assert c.base_params == tuple((k, v) for k, v in c.params if k != "variant")
    # variant is a plait-only parameter: on gomp it is unknown, and a bad value is named with the choices
    bad = text.replace('runtime_params = { plait = { variant = ["spawn", "group"] } }', 'runtime_params = { gomp = { variant = ["spawn"] } }')
    assert "runtime_params.gomp: gomp is not among this benchmark's runtimes" in problems(write_study(bad, "a.toml"), fake_bins)
    bad = bad.replace('runtimes = ["plait"]\nthreads = [2]', 'runtimes = ["plait", "gomp"]\nthreads = [2]')
    assert "unknown parameter 'variant' for uts-gomp" in problems(write_study(bad, "b.toml"), fake_bins)
    bad2 = text.replace('"group"]', '"bogus"]')
    assert "unknown value 'bogus'; accepted: spawn, group" in problems(write_study(bad2, "c.toml"), fake_bins)


def test_runtime_at_compiler_selects_the_clang_build(write_study, fake_bins):
    """plait@clang: Plait's binary from the clang tree, a series of its own; gomp@clang and the like
    are named errors."""
    from plait_bench.registry import compiler_of, parse_runtime

    assert parse_runtime("plait@clang") == ("plait", "clang")
    assert parse_runtime("plait@gcc") == ("plait", "") and parse_runtime("libomp@clang") == ("libomp", "")
    for bad, msg in (("gomp@clang", "gomp is built only by gcc"), ("libomp@gcc", "libomp is built only by clang"),
                     ("plait@icc", "unknown compiler 'icc'"), ("cilk@clang", "unknown runtime 'cilk@clang'")):
        with pytest.raises(ValueError, match=msg):
            parse_runtime(bad)
    assert [compiler_of(s) for s in ("plait", "libomp", "tbb@clang[x=1]", "gomp")] == ["gcc", "clang", "clang", "gcc"]

    text = GOOD.replace('runtimes = ["serial", "plait"]', 'runtimes = ["serial", "plait", "plait@clang", "plait@gcc", "libomp"]')
    st = load_study(write_study(text), fake_bins, np=2)
    fib = {c.series: c for c in st.configs if c.kernel == "fib"}
    assert set(fib) == {"serial", "plait", "plait@clang", "libomp"}  # plait@gcc is plain plait: once
    assert fib["plait@clang"].runtime == "plait" and fib["plait@clang"].key == "fib|plait@clang|P=2|n=15"
    assert fake_bins.binary("fib", "plait", fib["plait@clang"].compiler) == fake_bins.clang / "fib-plait"
    assert fake_bins.binary("fib", "plait", fib["plait"].compiler) == fake_bins.gcc / "fib-plait"
    assert missing_binaries(st, fake_bins) == []
    (fake_bins.clang / "fib-plait").unlink()
    assert missing_binaries(st, fake_bins) == [fake_bins.clang / "fib-plait"]
    bad = GOOD.replace('runtimes = ["serial", "plait"]', 'runtimes = ["serial", "gomp@clang"]')
    assert "runtimes: 'gomp@clang': gomp is built only by gcc" in problems(write_study(bad, "b.toml"))


def test_missing_binaries_listed(write_study, fake_bins):
    st = load_study(write_study(GOOD), fake_bins, np=2)
    assert missing_binaries(st, fake_bins) == []
    (fake_bins.gcc / "uts-gomp").unlink()
    assert missing_binaries(st, fake_bins) == [fake_bins.gcc / "uts-gomp"]


def test_a_run_looks_up_each_binary_once(write_study, fake_bins, tmp_path, monkeypatch):
    """plait-bench run: each (kernel, runtime, compiler) binary is looked up and asked for its --help
    once for the study (its validation, the missing-binary check, all of its runs), not once per run."""
    from click.testing import CliRunner

    from plait_bench import cli, registry, study, sweep

    looked_up, asked = Counter(), Counter()
    binary, binary_help = registry.BinDirs.binary, registry.binary_help

    def counted_binary(self, kernel, runtime, compiler=""):
        looked_up[kernel, runtime, compiler] += 1
        return binary(self, kernel, runtime, compiler)

    def counted_help(path):
        asked[path] += 1
        return binary_help(path)

    monkeypatch.setattr(registry.BinDirs, "binary", counted_binary)
    for mod in (registry, study, sweep, cli):  # wherever it is imported
        if hasattr(mod, "binary_help"):
            monkeypatch.setattr(mod, "binary_help", counted_help)
    path = write_study(study_text(
        "once", 2, 0, 3,
        bench_text("uts", ["serial", "plait", "plait@clang", "tbb"], '"1..2"',
                   '{ type = "binomial", b0 = 100, q = 0.12, m = 8, seed = 1 }', "sweep = { g = [1, 4] }\n"),
        bench_text("fib", ["serial", "plait"], '"1..2"', "{ n = 10 }", "sweep = { cutoff = [2, 4] }\n"),
        extra="timeout_s = 10\n"))
    env = {"PLAIT_BENCH_GCC_BIN": str(fake_bins.gcc), "PLAIT_BENCH_CLANG_BIN": str(fake_bins.clang),
           "PLAIT_BENCH_DB": str(tmp_path / "once.db")}
    r = CliRunner().invoke(cli.main, ["run", str(path), "--no-summary"], env=env)
    assert r.exit_code == 0, r.output
    assert "20 configurations, 40 runs" in r.output
    binaries = {("uts", rt, comp) for rt, comp in (("serial", ""), ("plait", ""), ("plait", "clang"), ("tbb", ""))}
    binaries |= {("fib", "serial", ""), ("fib", "plait", "")}
    assert looked_up == Counter(binaries)
    assert asked == Counter(binary(fake_bins, *b) for b in binaries)


def test_repository_studies_are_valid():
    root = find_root()
    for name in ("quick", "olivier2020"):
        st = load_study(root / "studies" / f"{name}.toml", np=2, check_binaries=False)
        assert st.configs, name
        runtimes = {c.runtime for c in st.configs if c.kernel == "uts"}
        assert runtimes == {"serial", "plait", "tbb", "gomp", "libomp"}


@pytest.mark.parametrize(
    "runtime, threads, want",
    [
        ("plait", 2, {"PLAIT_PIN": "cores"}),
        ("tbb", 2, {"PLAIT_BENCH_TBB_PIN": "cores"}),
        ("gomp", 2, {"OMP_PROC_BIND": "close", "OMP_PLACES": "threads"}),
        ("libomp", 1, {"OMP_PROC_BIND": "close", "OMP_PLACES": "threads"}),
        ("serial", 1, {}),
        # more threads than CPUs: the process is not restricted; only OpenMP keeps its binding
        ("plait", 16, {}),
        ("tbb", 16, {}),
        ("gomp", 16, {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
    ],
)
def test_placement_binds_every_runtimes_threads(monkeypatch, runtime, threads, want):
    """pin = "auto": every parallel runtime's threads are bound one per CPU by its own mechanism."""
    import os

    from plait_bench.runner import placement
    from plait_bench.study import Config, StudySettings

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    cfg = Config(kernel="fib", runtime=runtime, threads=threads, params=())
    cpus, env, notes = placement(cfg, StudySettings(name="t", omp_stacksize=""))
    assert cpus == ([0, 1][:threads] if threads <= 2 else None)
    assert env == want
    for var, val in want.items():
        assert f"{var}={val}" in notes
    none_cpus, none_env, none_notes = placement(cfg, StudySettings(name="t", pin="none", omp_stacksize=""))
    assert none_cpus is None and none_env == {} and "unpinned" in none_notes
