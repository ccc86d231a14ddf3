"""Study files: loading, validation and expansion into an interleaved, shuffled plan of runs.

A study file is TOML (see docs/plait-bench.md for the full reference)::

    [study]
    name = "quick"
    rounds = 3            # measured runs of every configuration, one per round
    warmup = 1            # unmeasured (but recorded) warm-up runs per configuration, before round 1
    seed = 42             # shuffles the order of every round; recorded with the session
    order = "shuffled"    # or "by-kernel": each kernel's configurations back to back in a round
    timeout_s = 60        # per run
    pin = "auto"          # "auto" (affinity to CPUs 0..P-1, thread i bound to CPU i) or "none"
    stack = "unlimited"   # RLIMIT_STACK of each run ("unlimited", KiB as an integer, or "inherit")
    omp_stacksize = "100M"

    [[benchmark]]
    kernel = "uts"
    runtimes = ["serial", "plait", "gomp", "libomp", "tbb"]
    threads = "1..nproc"
    params = { tree = "T3" }
    sweep = { g = [1, 2] }
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registry import (DRIVER_OPTIONS, KNOWN_KERNELS, MAX_BINARY_WARMUP, MAX_THREADS, MPI_RUNTIMES, RUNTIMES, BinDirs,
                       HelpInfo, StudyBinaries, fmt_range, parse_runtime, range_problem, runtime_label)


class StudyError(Exception):
    """A study file that cannot be run; ``problems`` lists every problem found, each naming its place."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))

    def render(self) -> str:
        """One problem: one line. Several: a line for the file, then one per problem."""
        if len(self.problems) == 1:
            return f"study file {self.path}: {self.problems[0]}"
        lines = [f"study file {self.path} is not valid ({len(self.problems)} problems):"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


STUDY_KEYS = {
    "name", "description", "rounds", "warmup", "seed", "timeout_s", "pin", "stack", "omp_stacksize",
    "binary_warmup", "notes", "order",
}
BENCH_KEYS = {"kernel", "runtimes", "threads", "ranks", "params", "sweep", "cases", "runtime_params", "timeout_s",
              "label"}
TOP_KEYS = {"study", "benchmark", "env"}
TRUE_VALUES = ("1", "true")
FLAG_VALUES = ("1", "true", "0", "false")


# The series tag of MPI runs with several workers per rank: mpi[workers=2] is ranks of two workers.
WORKERS_TAG = "workers"


def workers_of(series: str) -> int:
    """Workers per rank written in an MPI series name (``mpi[workers=2]`` -> 2; ``mpi`` -> 1)."""
    _, _, inner = series.partition("[")
    for item in inner.rstrip("]").split(","):
        k, _, v = item.partition("=")
        if k == WORKERS_TAG and v.isdigit() and int(v) >= 1:
            return int(v)
    return 1


def ranks_of(runtime: str, series: str, threads: int) -> int:
    """An MPI run's rank count from what the database keeps of it (runtime, series, P); 0 otherwise."""
    return threads // workers_of(series) if runtime in MPI_RUNTIMES else 0


def nproc() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Config:
    """One configuration: a binary, a thread count and the kernel's parameters.

    ``threads`` is the run's P, its processing elements: the thread count of a single-process run,
    ranks × workers per rank of an MPI run (docs/plait-bench.md, "MPI runs"). ``ranks`` is the MPI
    run's rank count (0 for the other runtimes)."""

    kernel: str
    runtime: str
    threads: int
    params: tuple[tuple[str, str], ...]  # sorted (name, value) pairs, all given to the binary
    runtime_params: tuple[str, ...] = ()  # names among params that only this runtime has (e.g. variant)
    timeout_s: float = 60.0
    compiler: str = ""  # "" = the runtime's usual tree (clang for libomp, gcc otherwise); "clang" for plait@clang
    ranks: int = 0

    @property
    def mpi_shape(self) -> tuple[int, int]:
        """An MPI run's ranks and threads per rank (the binary's --threads); a configuration made
        without a rank count is P ranks of one thread."""
        return (self.ranks, self.threads // self.ranks) if self.ranks else (self.threads, 1)

    @property
    def params_dict(self) -> dict[str, str]:
        return dict(self.params)

    @property
    def key(self) -> str:
        ps = ",".join(f"{k}={v}" for k, v in self.params)
        # ranks of one worker (the only MPI shape before hybrid grids) keep the key they always had
        grid = f"|R={self.ranks}" if self.ranks and self.ranks != self.threads else ""
        return f"{self.kernel}|{runtime_label(self.runtime, self.compiler)}|P={self.threads}{grid}|{ps}"

    @property
    def base_params(self) -> tuple[tuple[str, str], ...]:
        """Parameters shared by every runtime (what the serial baseline must match)."""
        return tuple((k, v) for k, v in self.params if k not in self.runtime_params)

    @property
    def series(self) -> str:
        """Label of the runtime series in reports: runtime plus runtime-only parameters."""
        extra = [f"{k}={v}" for k, v in self.params if k in self.runtime_params]
        if self.runtime in MPI_RUNTIMES and self.mpi_shape[1] > 1:
            extra.append(f"{WORKERS_TAG}={self.mpi_shape[1]}")
        return runtime_label(self.runtime, self.compiler) + (f"[{','.join(extra)}]" if extra else "")

    def args(self, help_info=None) -> list[str]:
        out = []
        for k, v in self.params:
            if help_info is not None and help_info.aliases.get(k, k) in help_info.flags:
                # an option without a value (steal's --auto): given when true, left out when false
                if v.lower() in TRUE_VALUES:
                    out.append(help_info.spelling(k))
                continue
            out += [help_info.spelling(k) if help_info is not None else f"--{k}", v]
        return out


@dataclass
class StudySettings:
    name: str
    description: str = ""
    rounds: int = 3
    warmup: int = 1
    seed: int = 1
    timeout_s: float = 60.0
    pin: str = "auto"
    stack: str = "unlimited"
    omp_stacksize: str = "100M"
    binary_warmup: int = 0
    order: str = "shuffled"  # "shuffled" | "by-kernel"


ORDERS = ("shuffled", "by-kernel")
# Accepted ranges of the [study] integers: rounds as --rounds, binary_warmup as the binaries'
# --warmup, the seed as an SQLite INTEGER (it is stored with the session).
INT_SETTINGS = {"rounds": (1, 1000, 3), "warmup": (0, 1000, 1), "seed": (0, 2**63 - 1, 1),
                "binary_warmup": (0, MAX_BINARY_WARMUP, 0)}
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week; longer waits overflow the timers a run is killed by
MAX_STACK_KIB = 2**40  # RLIMIT_STACK is set in bytes, a 64-bit number
MAX_OMP_STACKSIZE = 64 << 30  # the largest OMP_STACKSIZE libplait-omp accepts (its pools' limit)
_OMP_UNITS = {"": 1024, "b": 1, "k": 1024, "m": 1 << 20, "g": 1 << 30}


def _omp_stacksize_bytes(v) -> int | None:
    """OMP_STACKSIZE's value in bytes (digits, optional B/K/M/G, default K), None when it is not one or
    is above MAX_OMP_STACKSIZE: a runtime that multiplied a huge number by its unit could wrap it."""
    if not isinstance(v, str):
        return None
    m = re.fullmatch(r"\s*([0-9]+)\s*([bBkKmMgG]?)\s*", v)
    if m is None:
        return None
    n = int(m.group(1)) * _OMP_UNITS[m.group(2).lower()]
    return n if n <= MAX_OMP_STACKSIZE else None


@dataclass
class PlannedRun:
    seq: int
    round: int  # 0 = warm-up round
    kind: str  # "warmup" | "measured"
    config: Config


@dataclass
class Study:
    path: Path
    text: str
    settings: StudySettings
    configs: list[Config]
    env: dict[str, str] = field(default_factory=dict)
    runtime_env: dict[str, dict[str, str]] = field(default_factory=dict)
    # its binaries, each looked up once (binaries_in)
    binaries: StudyBinaries | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.settings.name

    def binaries_in(self, bins: BinDirs) -> StudyBinaries:
        """The study's binaries in these directories: the ones load_study looked up, kept for the
        missing-binary check and every run, or a new lookup for other directories."""
        if self.binaries is None or self.binaries.bins != bins:
            self.binaries = StudyBinaries(bins)
        return self.binaries

    def plan(self) -> list[PlannedRun]:
        """Warm-ups first (round 0), then ``rounds`` rounds: every configuration once per round, the
        order shuffled anew each round with a generator seeded from (seed, round).

        With ``order = "by-kernel"`` a round runs the kernels in a shuffled order and each kernel's
        configurations back to back, themselves shuffled: the runs a comparison is decided on then
        lie seconds apart instead of a round's length, so a slow spell of a shared machine tends to
        hit all of them rather than one runtime's."""
        s = self.settings
        base = sorted(self.configs, key=lambda c: c.key)
        out: list[PlannedRun] = []
        seq = 0
        rounds = [(0, "warmup")] * (1 if s.warmup > 0 else 0)
        for r in range(1, s.rounds + 1):
            rounds.append((r, "measured"))
        for r, kind in rounds:
            reps = s.warmup if kind == "warmup" else 1
            for _ in range(reps):
                rng = random.Random(f"{s.seed}/{r}/{_}")
                if s.order == "by-kernel":
                    kernels = sorted({c.kernel for c in base})
                    rng.shuffle(kernels)
                    order = []
                    for k in kernels:
                        group = [c for c in base if c.kernel == k]
                        rng.shuffle(group)
                        order += group
                else:
                    order = list(base)
                    rng.shuffle(order)
                for c in order:
                    out.append(PlannedRun(seq, r, kind, c))
                    seq += 1
        return out

    def plan_hash(self) -> str:
        """Identity of the plan: what runs, in what order, with which settings (not the file's comments)."""
        s = self.settings
        blob = json.dumps(
            {
                "settings": s.__dict__,
                "env": self.env,
                "runtime_env": self.runtime_env,
                "plan": [(p.seq, p.round, p.kind, p.config.key) for p in self.plan()],
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def env_for(self, runtime: str) -> dict[str, str]:
        e = dict(self.env)
        e.update(self.runtime_env.get(runtime, {}))
        return e


def resolve_study_path(spec: str, root: Path) -> Path:
    """``quick`` -> studies/quick.toml; a path is taken as is."""
    p = Path(spec)
    if p.suffix == ".toml" or os.sep in spec or p.exists():
        return p
    cand = root / "studies" / f"{spec}.toml"
    return cand


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v)
    return str(v)


class _OutOfRange(ValueError):
    pass


def _parse_threads(spec: Any, where: str, problems: list[str], np: int, key: str = "threads") -> list[int]:
    def count(v: int) -> int:
        if not 1 <= v <= MAX_THREADS:  # checked before a range is expanded
            raise _OutOfRange(v)
        return v

    def one(x: Any) -> list[int]:
        if isinstance(x, bool):
            raise ValueError
        if isinstance(x, int):
            return [count(x)]
        if isinstance(x, str):
            s = x.strip()
            if s == "nproc":
                return [np]
            if ".." in s:
                a, b = s.split("..", 1)
                lo = count(np if a.strip() == "nproc" else int(a))
                hi = count(np if b.strip() == "nproc" else int(b))
                if hi < lo:
                    raise ValueError
                return list(range(lo, hi + 1))
            return [count(int(s))]
        raise ValueError

    try:
        items = spec if isinstance(spec, list) else [spec]
        out: list[int] = []
        for x in items:
            for t in one(x):
                if t not in out:
                    out.append(t)
        if not out:
            raise ValueError
        return sorted(out)
    except _OutOfRange as e:
        problems.append(f"{where}.{key}: {spec!r} asks for {e.args[0]} {key}; accepted: 1..{MAX_THREADS} "
                        f"(the benchmarks' --threads range)")
        return []
    except (ValueError, TypeError):
        problems.append(
            f"{where}.{key}: {spec!r} is not a {'rank' if key == 'ranks' else 'thread'} list; accepted: an integer >= 1, \"nproc\", "
            f"\"1..nproc\", \"2..8\", or a list of those"
        )
        return []


def _product(d: dict[str, list]) -> list[dict[str, Any]]:
    if not d:
        return [{}]
    keys = list(d)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(d[k] for k in keys))]


def load_study(path: Path, bins: BinDirs | None = None, np: int | None = None, check_binaries: bool = True) -> Study:
    """A study file in three stages: parse (the file to TOML data), validate (every problem at once,
    the settings and the benchmarks' specs), expand (the specs to configurations). Raises StudyError
    naming every problem found. The binaries are looked up once for the study (registry.StudyBinaries),
    which keeps them for the missing-binary check and the runs."""
    path = Path(path)
    text, data = parse_study(path)
    binaries = StudyBinaries(bins) if bins is not None else None
    valid = validate_study(data, path, np or nproc(), binaries, check_binaries)
    configs = expand_study(valid.benches)
    if not configs:
        raise StudyError(str(path), ["the study expands to no configurations"])
    return Study(path=path, text=text, settings=valid.settings, configs=configs, env=valid.env,
                 runtime_env=valid.runtime_env, binaries=binaries)


def parse_study(path: Path) -> tuple[str, dict[str, Any]]:
    """Stage 1: the file's text and its TOML data, or a StudyError of one line."""
    where_file = str(path)
    if not path.is_file():
        raise StudyError(where_file, [f"no such study file (looked for {path})"])
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise StudyError(where_file, [f"cannot read it: {e.strerror or e}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StudyError(where_file, [f"not a text file: byte 0x{raw[e.start]:02x} at offset {e.start} is not UTF-8 "
                                      f"(a study file is TOML, docs/plait-bench.md)"]) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StudyError(where_file, [f"malformed TOML: {e}"]) from None
    except RecursionError:
        raise StudyError(where_file, ["malformed TOML: arrays or tables nested too deeply"]) from None


@dataclass
class BenchSpec:
    """One [[benchmark]] table, validated: what expand_study multiplies out."""

    kernel: str
    runtimes: list[tuple[str, str]]  # (runtime, compiler) pairs, each once, in the file's order
    threads: list[int]
    ranks: list[int] | None  # MPI runs as a grid of rank counts × threads values
    timeout_s: float
    fixed: dict[str, Any]
    sweep: dict[str, list]
    cases: list[dict[str, Any]]
    runtime_params: dict[str, dict[str, list]]


@dataclass
class ValidStudy:
    settings: StudySettings
    env: dict[str, str]
    runtime_env: dict[str, dict[str, str]]
    benches: list[BenchSpec]


def validate_study(data: dict[str, Any], path: Path, np: int, binaries: StudyBinaries | None = None,
                   check_binaries: bool = True) -> ValidStudy:
    """Stage 2: the [study] settings, [env] and the benchmarks' specs; a StudyError lists every
    problem found. A benchmark's parameters are checked against its binaries' --help when
    ``check_binaries`` (and the binaries' directories are given), else against the built-in list."""
    problems: list[str] = []
    for k in data:
        if k not in TOP_KEYS:
            problems.append(f"unknown top-level table '{k}'; accepted: {', '.join(sorted(TOP_KEYS))}")
    settings = _validate_settings(data.get("study", {}), path, problems)
    env, runtime_env = _validate_env(data.get("env", {}), problems)

    benches = data.get("benchmark")
    if benches is None:
        problems.append("no [[benchmark]] tables: a study needs at least one")
        benches = []
    if not isinstance(benches, list):
        problems.append("benchmark must be an array of tables ([[benchmark]])")
        benches = []
    known = set(KNOWN_KERNELS) | (binaries.bins.built_kernels() if binaries else set())
    specs = []
    for i, b in enumerate(benches, 1):
        spec = _validate_benchmark(b, f"benchmark[{i}]", settings, known, np, binaries, problems)
        if spec is not None:
            where = f"benchmark[{i}] ({spec.kernel})"
            _check_params(spec, where, binaries if check_binaries else None, problems)
            if not spec.runtimes:
                problems.append(f"{where}: no runtimes selected")
            specs.append(spec)
    if problems:
        raise StudyError(str(path), problems)
    return ValidStudy(settings, env, runtime_env, specs)


def _validate_settings(st: Any, path: Path, problems: list[str]) -> StudySettings:
    """The [study] table's settings; each bad one is a problem and keeps its default."""
    if not isinstance(st, dict):
        problems.append("[study] must be a table")
        st = {}
    for k in st:
        if k not in STUDY_KEYS:
            problems.append(f"study.{k}: unknown setting; accepted: {', '.join(sorted(STUDY_KEYS))}")
    settings = StudySettings(name=str(st.get("name", path.stem)))
    settings.description = str(st.get("description", ""))

    def int_setting(key: str) -> int:
        lo, hi, default = INT_SETTINGS[key]
        v = st.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            why = "is out of range" if isinstance(v, int) and not isinstance(v, bool) else "is not an integer"
            problems.append(f"study.{key}: {v!r} {why}; accepted: an integer in {lo}..{hi}")
            return default
        return v

    settings.rounds = int_setting("rounds")
    settings.warmup = int_setting("warmup")
    settings.seed = int_setting("seed")
    settings.binary_warmup = int_setting("binary_warmup")
    t = st.get("timeout_s", 60.0)
    if not _timeout_ok(t):
        problems.append(f"study.timeout_s: {t!r} {_timeout_why(t)}; accepted: seconds, a number > 0 and <= {MAX_TIMEOUT_S:g}")
        t = 60.0
    settings.timeout_s = float(t)
    pin = st.get("pin", "auto")
    if pin not in ("auto", "none"):
        problems.append(f"study.pin: {pin!r} is not one of 'auto', 'none'")
    settings.pin = str(pin)
    order = st.get("order", "shuffled")
    if order not in ORDERS:
        problems.append(f"study.order: {order!r} is not one of {', '.join(repr(o) for o in ORDERS)}")
        order = "shuffled"
    settings.order = str(order)
    stack = st.get("stack", "unlimited")
    if not (stack in ("unlimited", "inherit")
            or (isinstance(stack, int) and not isinstance(stack, bool) and 0 < stack <= MAX_STACK_KIB)):
        problems.append(f"study.stack: {stack!r} is not a stack size; accepted: 'unlimited', 'inherit' or KiB as an "
                        f"integer in 1..{MAX_STACK_KIB}")
    settings.stack = str(stack)
    omp_stack = st.get("omp_stacksize", "100M")
    if _omp_stacksize_bytes(omp_stack) is None:
        problems.append(f"study.omp_stacksize: {omp_stack!r} is not a stack size; accepted: a string of a number "
                        f"with an optional B, K, M or G suffix (default K), at most 64G")
    settings.omp_stacksize = str(omp_stack)
    return settings


def _validate_env(env_tbl: Any, problems: list[str]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """[env]: the variables of every run, and each runtime's own table of them."""
    env: dict[str, str] = {}
    runtime_env: dict[str, dict[str, str]] = {}
    if not isinstance(env_tbl, dict):
        problems.append("[env] must be a table of VARIABLE = \"value\"")
        env_tbl = {}
    for k, v in env_tbl.items():
        if isinstance(v, dict):
            if k not in RUNTIMES:
                problems.append(f"env.{k}: unknown runtime '{k}'; accepted: {', '.join(RUNTIMES)}")
                continue
            runtime_env[k] = {str(a): _fmt_value(b) for a, b in v.items()}
        else:
            env[str(k)] = _fmt_value(v)
    return env, runtime_env


def _validate_benchmark(b: Any, where: str, settings: StudySettings, known: set[str], np: int,
                        binaries: StudyBinaries | None, problems: list[str]) -> BenchSpec | None:
    """One [[benchmark]] table's keys, kernel, runtimes, threads, ranks, timeout and parameter
    tables; None when it cannot be expanded at all (its problems are listed)."""
    if not isinstance(b, dict):
        problems.append(f"{where}: must be a table")
        return None
    for k in b:
        if k not in BENCH_KEYS:
            problems.append(f"{where}.{k}: unknown key; accepted: {', '.join(sorted(BENCH_KEYS))}")
    kernel = b.get("kernel")
    if not isinstance(kernel, str):
        problems.append(f"{where}: 'kernel' (the benchmark name) is missing")
        return None
    if kernel not in known:
        gone = _missing_bin_dirs(binaries.bins if binaries else None)
        if gone:
            problems.append(f"{where}: benchmark '{kernel}' cannot be looked up: {'; '.join(gone)} "
                            f"(names known without binaries: {', '.join(sorted(known))})")
        else:
            problems.append(f"{where}: unknown benchmark '{kernel}'; known: {', '.join(sorted(known))}")
        return None
    where = f"{where} ({kernel})"
    specs = _runtime_specs(b, where, problems)
    rts = list(dict.fromkeys(rt for rt, _ in specs))  # the runtimes, each once
    threads = _parse_threads(b.get("threads", "1..nproc"), where, problems, np)
    ranks = _parse_ranks(b, where, rts, threads, np, problems)
    timeout = b.get("timeout_s", settings.timeout_s)
    if not _timeout_ok(timeout):
        problems.append(f"{where}.timeout_s: {timeout!r} {_timeout_why(timeout)}; accepted: seconds, a number > 0 "
                        f"and <= {MAX_TIMEOUT_S:g}")
        timeout = settings.timeout_s
    tables = _param_tables(b, where, rts, problems)
    if tables is None:
        return None
    return BenchSpec(kernel, specs, threads, ranks, float(timeout), *tables)


def _param_tables(b: dict[str, Any], where: str, rts: list[str],
                  problems: list[str]) -> tuple[dict, dict[str, list], list[dict], dict[str, dict[str, list]]] | None:
    """A benchmark's params, sweep, cases and runtime_params (each runtime's values as lists); None
    when one of them is not a table (or cases not an array of them)."""
    fixed = b.get("params", {})
    sweep = b.get("sweep", {})
    cases = b.get("cases", [{}])
    rparams = b.get("runtime_params", {})
    ok = True
    for nm, v in (("params", fixed), ("sweep", sweep), ("runtime_params", rparams)):
        if not isinstance(v, dict):
            problems.append(f"{where}.{nm}: must be a table")
            ok = False
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases) or not cases:
        problems.append(f"{where}.cases: must be a non-empty array of tables")
        ok = False
    if not ok:
        return None
    for k, v in sweep.items():
        if not isinstance(v, list) or not v:
            problems.append(f"{where}.sweep.{k}: must be a non-empty list of values")
    sweep = {k: v for k, v in sweep.items() if isinstance(v, list) and v}
    for rt, tbl in rparams.items():
        if rt not in RUNTIMES:
            problems.append(f"{where}.runtime_params.{rt}: unknown runtime; accepted: {', '.join(RUNTIMES)}")
        elif rt not in rts:
            problems.append(f"{where}.runtime_params.{rt}: {rt} is not among this benchmark's runtimes ({', '.join(rts)})")
        elif not isinstance(tbl, dict):
            problems.append(f"{where}.runtime_params.{rt}: must be a table of name = [values]")
    rparams = {
        rt: {k: (v if isinstance(v, list) else [v]) for k, v in tbl.items()}
        for rt, tbl in rparams.items()
        if rt in RUNTIMES and isinstance(tbl, dict)
    }
    return fixed, sweep, cases, rparams


def _runtime_specs(b: dict[str, Any], where: str, problems: list[str]) -> list[tuple[str, str]]:
    """The benchmark's (runtime, compiler) pairs, each once. Default: every single-process runtime;
    MPI builds exist for a few kernels only and are asked for by name (docs/plait-bench.md, "MPI runs")."""
    rts = b.get("runtimes", [r for r in RUNTIMES if r not in MPI_RUNTIMES])
    if isinstance(rts, str):
        rts = [rts]
    # "plait@clang": the runtime's binary from the clang tree (registry.parse_runtime)
    specs: list[tuple[str, str]] = []
    for r in rts:
        try:
            spec = parse_runtime(str(r))
        except ValueError as e:
            problems.append(f"{where}.runtimes: {e}")
            continue
        if spec not in specs:
            specs.append(spec)
    return specs


def _parse_ranks(b: dict[str, Any], where: str, rts: list[str], threads: list[int], np: int,
                 problems: list[str]) -> list[int] | None:
    """A ranks list makes the MPI runs a grid: each rank count × each threads value as workers per
    rank. Without it (None) an MPI run is P ranks of one worker at each threads value."""
    if "ranks" not in b:
        return None
    ranks = _parse_threads(b["ranks"], where, problems, np, key="ranks")
    if not any(r in MPI_RUNTIMES for r in rts):
        problems.append(f"{where}.ranks: only MPI runs have ranks, and this benchmark's runtimes "
                        f"({', '.join(rts) or 'none'}) have none; accepted: ranks with runtimes including "
                        f"{', '.join(MPI_RUNTIMES)}")
    for r in ranks:
        for t in threads:
            if r * t > MAX_THREADS:
                problems.append(f"{where}: {r} ranks × {t} threads is {r * t} processing elements; "
                                f"accepted: at most {MAX_THREADS}")
                break
    return ranks


def _check_params(spec: BenchSpec, where: str, binaries: StudyBinaries | None, problems: list[str]) -> None:
    """Parameter names, values and ranges for each runtime of a benchmark: the binaries' own --help
    is authoritative; without binaries, the built-in list."""
    kernel = spec.kernel
    common_names = set(spec.fixed) | set(spec.sweep) | {k for c in spec.cases for k in c}
    out_of_range: set[tuple[str, str]] = set()
    for rt in dict.fromkeys(rt for rt, _ in spec.runtimes):
        names = common_names | set(spec.runtime_params.get(rt, {}))
        reserved = names & DRIVER_OPTIONS
        if reserved:
            problems.append(
                f"{where}: {', '.join(sorted(reserved))} set by the study tool itself (use threads/rounds/"
                f"binary_warmup), not a parameter"
            )
        # the runtime's first build in the file speaks for its parameters
        info = binaries.help(kernel, rt, next(c for r, c in spec.runtimes if r == rt)) if binaries else None
        if info is not None:
            accepted = {o for o in info.options if o not in DRIVER_OPTIONS} | {
                a for a, n in info.aliases.items() if n not in DRIVER_OPTIONS
            }
            source = f"{kernel}-{rt} --help"
            ranges = {k: info.ranges[info.long_name(k)] for k in accepted if info.long_name(k) in info.ranges}
        elif kernel in KNOWN_KERNELS:
            accepted = set(KNOWN_KERNELS[kernel]["params"]) | set(KNOWN_KERNELS[kernel]["runtime_params"].get(rt, ()))
            source = "built-in list"
            ranges = KNOWN_KERNELS[kernel].get("ranges", {})
        else:
            continue
        for n in sorted(names - accepted - DRIVER_OPTIONS):
            problems.append(
                f"{where}: unknown parameter '{n}' for {kernel}-{rt}; accepted ({source}): "
                f"{', '.join(sorted(accepted)) or '(none)'}"
            )
        values = _param_values(spec, rt)
        _check_ranges(values, ranges, source, where, out_of_range, problems)
        if info is not None:
            _check_choices(values, info, f"{where}: {kernel}-{rt}", problems)


def _param_values(spec: BenchSpec, rt: str) -> dict[str, set[str]]:
    """Every value each parameter takes in the runtime's configurations, as given to the binary."""
    values: dict[str, set] = {}
    for d in [spec.fixed, *spec.cases]:
        for k, v in d.items():
            values.setdefault(k, set()).add(_fmt_value(v))
    for k, vs in list(spec.sweep.items()) + list(spec.runtime_params.get(rt, {}).items()):
        values.setdefault(k, set()).update(_fmt_value(v) for v in vs)
    return values


def _check_ranges(values: dict[str, set[str]], ranges: dict, source: str, where: str,
                  out_of_range: set[tuple[str, str]], problems: list[str]) -> None:
    for k, vs in sorted(values.items()):
        if k not in ranges:
            continue
        kind, lo, hi, *open_ = ranges[k]  # (kind, lo, hi[, lo_open, hi_open])
        for v in sorted(vs):
            why = range_problem(v, kind, lo, hi, *open_)
            if why and (k, v) not in out_of_range:
                out_of_range.add((k, v))  # once per value, not once per runtime
                problems.append(f"{where}: parameter {k}: {why}; accepted: {fmt_range(kind, lo, hi, *open_)} "
                                f"({source})")


def _check_choices(values: dict[str, set[str]], info: HelpInfo, where: str, problems: list[str]) -> None:
    """Options without a value take true or false; options with choices one of them (--help)."""
    for k, vs in values.items():
        if info.aliases.get(k, k) in info.flags:
            for v in sorted(v for v in vs if v.lower() not in FLAG_VALUES):
                problems.append(f"{where} --{k} takes no value: write {k} = true or false, not '{v}'")
            continue
        ch = info.choices.get(info.aliases.get(k, k))
        if ch:
            for v in sorted(vs - set(ch)):
                problems.append(f"{where} --{k}: unknown value '{v}'; accepted: {', '.join(ch)}")


def expand_study(benches: list[BenchSpec]) -> list[Config]:
    """Stage 3: every benchmark's cases × sweep × runtimes × runtime parameters × shapes as
    configurations; identical ones from several [[benchmark]] tables run once, with the longest timeout."""
    configs: dict[str, Config] = {}
    for spec in benches:
        for case in spec.cases:
            for combo in _product(spec.sweep):
                base = {**spec.fixed, **case, **combo}
                for rt, comp in spec.runtimes:
                    for extra in _product(spec.runtime_params.get(rt, {})):
                        ps = {k: _fmt_value(v) for k, v in {**base, **extra}.items()}
                        for p, nranks in _shapes(rt, spec.threads, spec.ranks):
                            c = Config(kernel=spec.kernel, runtime=rt, threads=p, params=tuple(sorted(ps.items())),
                                       runtime_params=tuple(sorted(extra)), timeout_s=spec.timeout_s, compiler=comp,
                                       ranks=nranks)
                            old = configs.get(c.key)
                            if old is None or c.timeout_s > old.timeout_s:
                                configs[c.key] = c
    return list(configs.values())


def _shapes(rt: str, threads: list[int], ranks: list[int] | None) -> list[tuple[int, int]]:
    """A runtime's (P, ranks) pairs: serial runs once, single-process runtimes at each threads
    value, MPI runs as P ranks of one worker or as the ranks × threads grid."""
    if rt == "serial":
        return [(1, 0)]
    if rt not in MPI_RUNTIMES:
        return [(p, 0) for p in threads]
    if ranks is None:
        return [(p, p) for p in threads]
    return [(r * t, r) for r in ranks for t in threads]


def _timeout_ok(t: Any) -> bool:
    return not isinstance(t, bool) and isinstance(t, (int, float)) and 0 < t <= MAX_TIMEOUT_S


def _timeout_why(t: Any) -> str:
    return "is not a number" if isinstance(t, bool) or not isinstance(t, (int, float)) else "is out of range"


def _missing_bin_dirs(bins: BinDirs | None) -> list[str]:
    """The binaries' directories to blame for a benchmark name not found: those set explicitly that
    do not exist, and the defaults when no directory exists at all (nothing built yet)."""
    if bins is None:
        return []
    trees = ("gcc", "clang")
    if not any(getattr(bins, t).is_dir() for t in trees):
        return bins.missing_dirs()
    return [m for t in trees if bins.origin.get(t) and (m := bins.missing_dir(t))]


def mpi_problem(study: Study) -> str | None:
    """Why the study's MPI runs cannot be launched (no mpirun), or None (also without MPI runs)."""
    from .registry import MPI_RUNTIMES, find_mpirun

    n = sum(1 for c in study.configs if c.runtime in MPI_RUNTIMES)
    if n == 0:
        return None
    path, why = find_mpirun()
    return None if path else f"study '{study.name}' has {n} MPI configuration(s), but {why}"


def missing_binaries(study: Study, bins: BinDirs) -> list[Path]:
    """The study's binaries that are not executable files, each once, in the order of its configurations."""
    found = study.binaries_in(bins)
    paths = dict.fromkeys(found.path(c.kernel, c.runtime, c.compiler) for c in study.configs)
    return [p for p in paths if not (p.is_file() and os.access(p, os.X_OK))]
