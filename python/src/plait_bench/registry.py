"""Where benchmark binaries live and which names are known.

Binaries follow docs/bench-protocol.md: ``<kernel>-<runtime>`` in ``build/<preset>/bin``. Every runtime
comes from the gcc tree except ``libomp``, which only the clang tree builds. A study may ask for another
runtime's clang build with ``RUNTIME@clang`` (``plait@clang``, ``tbb@clang``, ``serial@clang``), so that
a runtime can be compared with libomp by binaries of the same compiler.

The OpenMP binaries can also run on another OpenMP library, the very same binary with the library
preloaded: the gcc-built ones (``gomp``) on ``gomp@libomp`` (LLVM's libomp, which implements the GOMP
ABI) and ``gomp@plait`` (Plait's libplait-omp from the gcc tree), the clang-built ones (``libomp``) on
``libomp@plait`` (libplait-omp again, through libomp's ``__kmpc_*`` ABI). Each such run must report
that library as its ``omp_library`` (docs/bench-protocol.md), or it fails.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

RUNTIMES = ("serial", "plait", "tbb", "gomp", "libomp", "mpi")
PARALLEL_RUNTIMES = ("plait", "tbb", "gomp", "libomp", "mpi")
# Runtimes run under mpirun: one single-threaded process per rank; a run's P (its `threads`) is its
# rank count (docs/plait-bench.md, "MPI runs"). Built by the gcc tree only.
MPI_RUNTIMES = ("mpi",)
ENV_MPIRUN = "PLAIT_BENCH_MPIRUN"
# What every MPI run gets: Open MPI may run as root (CI), and does not sleep in its progress engine
# when oversubscribed (docs/mpi.md: 20-40 times slower otherwise).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_mpi_yield_when_idle": "0"}
COMPILERS = ("gcc", "clang")
# The compiler tree each runtime's plain name means, and the trees that build it at all.
DEFAULT_COMPILER = {"libomp": "clang"}
BUILT_BY = {"gomp": ("gcc",), "libomp": ("clang",), "mpi": ("gcc",)}


# OpenMP libraries an OpenMP binary can be run on instead of its own ("gomp@plait"), and which
# binaries each takes: libomp implements the GOMP ABI, libplait-omp both ABIs.
OMP_LIBS = ("libomp", "plait")
OMP_LIB_RUNTIMES = {"libomp": ("gomp",), "plait": ("gomp", "libomp")}
OMP_LIB_SERIES = tuple(f"{rt}@{lib}" for lib in OMP_LIBS for rt in OMP_LIB_RUNTIMES[lib])
# Where LLVM's libomp is looked for (PLAIT_BENCH_LIBOMP overrides).
ENV_LIBOMP = "PLAIT_BENCH_LIBOMP"
LIBOMP_CANDIDATES = ("/usr/lib/llvm-16/lib/libomp.so.5", "/usr/lib/x86_64-linux-gnu/libomp.so.5")
PLAIT_OMP_LIB = "libplait-omp.so.1"  # in the gcc tree's build directory, beside bin/


@dataclass(frozen=True)
class OmpFront:
    """One compiler's OpenMP binaries on the OpenMP libraries (the report's and the verdicts' parts)."""

    compiler: str
    peers: tuple[str, ...]    # the binary on its own library first, then on the other libraries
    libraries: str            # the peers' libraries, in words
    mine: str                 # the binary on libplait-omp
    natives: tuple[str, ...]  # the native Plait build to compare with: the first the session has

    @property
    def own(self) -> str:
        return self.peers[0]


OMP_FRONTS = (OmpFront("gcc", ("gomp", "gomp@libomp"), "libgomp and libomp", "gomp@plait", ("plait",)),
              OmpFront("clang", ("libomp",), "libomp", "libomp@plait", ("plait@clang", "plait")))


def find_mpirun() -> tuple[str | None, str]:
    """The MPI launcher: PLAIT_BENCH_MPIRUN, else mpirun or mpiexec on PATH; (None, why) if none."""
    import shutil

    env = os.environ.get(ENV_MPIRUN)
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env, ""
        return None, f"{ENV_MPIRUN}={env}: no such executable"
    for name in ("mpirun", "mpiexec"):
        p = shutil.which(name)
        if p:
            return p, ""
    return None, f"mpirun not found on PATH (install openmpi-bin, or set {ENV_MPIRUN})"


def default_compiler(runtime: str) -> str:
    return DEFAULT_COMPILER.get(runtime, "gcc")


def omp_lib_of(series: str) -> str:
    """The OpenMP library a series runs on instead of its own (``gomp@plait`` -> plait), or ""."""
    _, _, tag = series.split("[")[0].partition("@")
    return tag if tag in OMP_LIBS else ""


def expected_omp_library(runtime: str, tag: str = "") -> str | None:
    """What the file name of the OpenMP runtime a run reports (``omp_library``) must contain, or None
    for runtimes without OpenMP."""
    if tag == "plait":
        return "libplait-omp"
    if tag == "libomp" or runtime == "libomp":
        return "libomp"
    if runtime == "gomp":
        return "libgomp"
    return None


def parse_runtime(spec: str) -> tuple[str, str]:
    """``"plait@clang"`` -> ``("plait", "clang")``; a plain name or its default tree -> ``(name, "")``.

    Raises ValueError with the accepted values for an unknown runtime or compiler, or a runtime the
    compiler does not build (gomp is gcc's, libomp clang's)."""
    rt, at, comp = spec.partition("@")
    if rt not in RUNTIMES:
        raise ValueError(f"unknown runtime '{spec}'; accepted: {', '.join(RUNTIMES)}, each optionally as RUNTIME@gcc "
                         f"or RUNTIME@clang, and {', '.join(OMP_LIB_SERIES)}")
    if not at:
        return rt, ""
    if comp in OMP_LIBS:
        if rt not in OMP_LIB_RUNTIMES[comp]:
            raise ValueError(f"'{spec}': only the OpenMP binaries run on another OpenMP library, and each on a "
                             f"library that speaks its ABI; accepted: {', '.join(OMP_LIB_SERIES)}")
        return rt, comp
    if comp not in COMPILERS:
        raise ValueError(f"unknown compiler '{comp}' in '{spec}'; accepted: {', '.join(COMPILERS)} "
                         f"(and for gomp the OpenMP libraries {', '.join(OMP_LIBS)})")
    if comp not in BUILT_BY.get(rt, COMPILERS):
        raise ValueError(f"'{spec}': {rt} is built only by {', '.join(BUILT_BY[rt])}")
    return rt, "" if comp == default_compiler(rt) else comp


def runtime_label(runtime: str, compiler: str = "") -> str:
    """The series name of a runtime's build: ``plait``, ``plait@clang``."""
    return runtime + (f"@{compiler}" if compiler and compiler != default_compiler(runtime) else "")


def runtime_of(series: str) -> str:
    """The runtime of a series name (``plait@clang[variant=group]`` -> ``plait``)."""
    return series.split("[")[0].partition("@")[0]


def compiler_of(series: str) -> str:
    """The compiler tree of a series name (``libomp`` -> clang, ``tbb@clang[x=1]`` -> clang, ``plait`` -> gcc,
    ``libomp@plait`` -> clang)."""
    rt, _, comp = series.split("[")[0].partition("@")
    if comp in OMP_LIBS:  # gomp@plait, libomp@plait: the binary's own tree, run on another library
        return default_compiler(rt)
    return comp or default_compiler(rt)

# Options every binary accepts; the study tool sets them itself, a study may not.
DRIVER_OPTIONS = frozenset({"threads", "reps", "warmup", "quiet", "help"})
# The binaries' --threads and --warmup ranges (docs/bench-protocol.md).
MAX_THREADS = 4096
MAX_BINARY_WARMUP = 1000

# What we know about kernels without asking their binaries (used when no binary is built yet, and
# to word error messages). The binaries' own --help is authoritative when they exist.
KNOWN_KERNELS: dict[str, dict] = {
    "fib": {
        "params": {"n", "cutoff"},
        "runtime_params": {},
        # (kind, lo, hi[, lo_open, hi_open]) as the binaries' --help prints them
        "ranges": {"n": ("int", 0, 50), "cutoff": ("int", 0, 50)},
        "about": "spawn-overhead microbenchmark: naive fib(n) with one task per call above the cut-off",
    },
    "uts": {
        # long names and the UTS reference letters (-t type, -b b0, -r seed, -a shape, -d depth)
        "params": {"tree", "input", "type", "b0", "seed", "shape", "depth", "q", "m", "f", "g",
                   "t", "b", "r", "a", "d"},
        "runtime_params": {"plait": {"variant"}, "mpi": {"hybrid", "poll-us", "chunk", "poll", "delay-us"}},
        "ranges": {
            "g": ("int", 1, 1000000), "m": ("int", 1, 100), "q": ("number", 0, 1, False, True),
            "b0": ("number", 0, 2147483647, True, False), "b": ("number", 0, 2147483647, True, False), "seed": ("int", 0, 2147483647), "r": ("int", 0, 2147483647),
            "depth": ("int", 0, 2147483647), "d": ("int", 0, 2147483647), "f": ("number", 0, 1e9),
        },
        "about": "Unbalanced Tree Search (binomial/geometric trees), compute granularity g SHA-1 ops per node",
    },
}

ENV_GCC_BIN = "PLAIT_BENCH_GCC_BIN"
ENV_CLANG_BIN = "PLAIT_BENCH_CLANG_BIN"
ENV_ROOT = "PLAIT_ROOT"


def find_root(start: Path | None = None) -> Path:
    """The repository root: $PLAIT_ROOT, else the nearest parent holding studies/ or CMakeLists.txt+bench/."""
    env = os.environ.get(ENV_ROOT)
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for d in [here, *here.parents]:
        if (d / "bench").is_dir() and (d / "CMakeLists.txt").is_file():
            return d
        if (d / "studies").is_dir() and (d / "python").is_dir():
            return d
    return here


@dataclass
class BinDirs:
    gcc: Path
    clang: Path
    # where each directory was given: "--gcc-bin", "PLAIT_BENCH_GCC_BIN", ... ("" = the default)
    origin: dict[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(cls, root: Path, gcc: str | os.PathLike | None = None, clang: str | os.PathLike | None = None,
                origin: dict[str, str] | None = None) -> "BinDirs":
        origin = dict(origin or {})
        dirs = {}
        for tree, given, var in (("gcc", gcc, ENV_GCC_BIN), ("clang", clang, ENV_CLANG_BIN)):
            if not given and os.environ.get(var):
                given, origin[tree] = os.environ[var], var
            dirs[tree] = Path(given or root / "build" / f"{tree}-release" / "bin").resolve()
            if not given:
                origin[tree] = ""
        return cls(dirs["gcc"], dirs["clang"], origin)

    def missing_dir(self, tree: str) -> str | None:
        """One line when the tree's directory does not exist, naming the option or variable that set it."""
        d = getattr(self, tree)
        if d.is_dir():
            return None
        how = self.origin.get(tree, "")
        if how.startswith("--"):
            return f"{how} {d}: no such directory"
        if how:
            return f"{how}={d}: no such directory"
        var = ENV_GCC_BIN if tree == "gcc" else ENV_CLANG_BIN
        return f"{d} does not exist (build it: make build, or set {var} or --{tree}-bin)"

    def missing_dirs(self, paths: list[Path] | None = None) -> list[str]:
        """missing_dir of both trees, or of the trees holding these binaries."""
        trees = [t for t in ("gcc", "clang") if paths is None or any(p.parent == getattr(self, t) for p in paths)]
        return [m for m in map(self.missing_dir, trees) if m]

    def dir_for(self, runtime: str, compiler: str = "") -> Path:
        if compiler in OMP_LIBS:  # the binary's own tree (libplait-omp itself comes from the gcc tree)
            compiler = default_compiler(runtime)
        return self.clang if (compiler or default_compiler(runtime)) == "clang" else self.gcc

    def omp_preload(self, tag: str) -> tuple[Path | None, str]:
        """The library to preload for an OpenMP-library tag (``plait``, ``libomp``): its path, or None
        and why it cannot be found."""
        if tag == "plait":
            p = self.gcc.parent / PLAIT_OMP_LIB
            return (p, "") if p.is_file() else (None, f"{p} does not exist (build the gcc tree: make build)")
        if tag == "libomp":
            env = os.environ.get(ENV_LIBOMP)
            cands = [env] if env else list(LIBOMP_CANDIDATES)
            for c in cands:
                if c and Path(c).is_file():
                    return Path(c), ""
            return None, (f"{ENV_LIBOMP}={env}: no such file" if env else
                          f"LLVM's libomp not found (looked for {', '.join(LIBOMP_CANDIDATES)}; set {ENV_LIBOMP})")
        return None, f"unknown OpenMP library '{tag}'"

    def binary(self, kernel: str, runtime: str, compiler: str = "") -> Path:
        return self.dir_for(runtime, compiler) / f"{kernel}-{runtime}"

    def serial_binaries(self, kernel: str) -> list[tuple[str, Path]]:
        """Serial builds of a kernel in both trees, labelled by compiler tree."""
        out = []
        for label, d in (("gcc", self.gcc), ("clang", self.clang)):
            p = d / f"{kernel}-serial"
            if p.is_file() and os.access(p, os.X_OK):
                out.append((label, p))
        return out

    def built_kernels(self) -> set[str]:
        ks: set[str] = set()
        for d in (self.gcc, self.clang):
            if not d.is_dir():
                continue
            for p in d.iterdir():
                m = re.fullmatch(r"(.+)-(serial|plait|tbb|gomp|libomp)", p.name)
                if m and p.is_file():
                    ks.add(m.group(1))
        return ks


@dataclass
class HelpInfo:
    options: set[str] = field(default_factory=set)  # long names (without --)
    aliases: dict[str, str] = field(default_factory=dict)  # "t" (for -t) -> long name
    choices: dict[str, list[str]] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)  # options that take no value ("--auto")
    ranges: dict[str, tuple[str, float, float]] = field(default_factory=dict)  # name -> (int|number, lo, hi)

    def accepted(self) -> set[str]:
        return self.options | set(self.aliases)

    def long_name(self, name: str) -> str:
        """The option a study parameter means: its own name first (fib's --n), else an alias's (-n is --threads)."""
        return name if name in self.options else self.aliases.get(name, name)

    def spelling(self, name: str) -> str:
        """How to write a study parameter on the command line."""
        if name in self.options:
            return f"--{name}"
        if name in self.aliases:
            return f"-{name}" if not name.startswith("-") else name
        return f"--{name}"


_help_cache: dict[str, HelpInfo | None] = {}

_OPT_LINE = re.compile(r"^\s+--([A-Za-z0-9_][A-Za-z0-9_-]*)")
_CHOICES = re.compile(r"\[([A-Za-z0-9_.-]+(?:\|[A-Za-z0-9_.-]+)+)\]")
# "[0..50, default 30]"; a number's open bound is marked: "[>0..2147483647, ...]", "[0..<1, ...]"
_RANGE = re.compile(r"\[(>?)([-+0-9.eE]+)\.\.(<?)([-+0-9.eE]+)[,\]]")


def range_problem(value: str, kind: str, lo: float, hi: float, lo_open: bool = False, hi_open: bool = False) -> str | None:
    """Why a parameter value does not fit an option's range (None when it does). Bounds of a
    <number> option are printed with twelve significant digits (six by older binaries), so a closed
    bound is taken with that tolerance; an open bound excludes the bound itself."""
    if kind == "int":
        if not re.fullmatch(r"[-+]?[0-9]+", value.strip()):
            return f"'{value}' is not an integer"
        x: float = int(value)
    else:
        try:
            x = float(value)
        except ValueError:
            return f"'{value}' is not a number"
        if not math.isfinite(x):
            return f"'{value}' is not a finite number"
        if (lo_open and x <= lo) or (hi_open and x >= hi):
            return f"{value} is out of range"
        lo, hi = lo - abs(lo) * 5e-6, hi + abs(hi) * 5e-6
    return None if lo <= x <= hi else f"{value} is out of range"


def fmt_range(kind: str, lo: float, hi: float, lo_open: bool = False, hi_open: bool = False) -> str:
    if kind == "int":
        return f"{lo}..{hi}"
    return f"{'>' if lo_open else ''}{lo:.12g}..{'<' if hi_open else ''}{hi:.12g}"


def binary_help(path: Path) -> HelpInfo | None:
    """Option names a binary accepts, read from its --help (None when it cannot be asked)."""
    key = str(path)
    if key in _help_cache:
        return _help_cache[key]
    info: HelpInfo | None = None
    try:
        cp = subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=20)
        if cp.returncode == 0:
            info = HelpInfo()
            for line in cp.stdout.splitlines():
                m = _OPT_LINE.match(line)
                if not m:
                    continue
                name = m.group(1)
                info.options.add(name)
                if not re.search(r"<[^>]*>", re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]):
                    info.flags.add(name)
                # "  --threads, -n <int>   help": further spellings up to the kind or the help text
                head = re.split(r"\s<|\s{2,}", line.strip(), maxsplit=1)[0]
                for sp in head.split(",")[1:]:
                    sp = sp.strip()
                    if re.fullmatch(r"-[A-Za-z0-9]+", sp):
                        info.aliases[sp[1:]] = name
                    elif re.fullmatch(r"--[A-Za-z0-9_-]+", sp):
                        info.aliases[sp[2:]] = name
                c = _CHOICES.search(line)
                if c:
                    info.choices[name] = c.group(1).split("|")
                kind = re.search(r"<(int|number)>", line)
                r = _RANGE.search(line)
                if kind and r:
                    num = int if kind.group(1) == "int" else float
                    try:
                        info.ranges[name] = (kind.group(1), num(r.group(2)), num(r.group(4)), r.group(1) == ">",
                                             r.group(3) == "<")
                    except ValueError:
                        pass
    except (OSError, subprocess.TimeoutExpired):
        info = None
    _help_cache[key] = info
    return info


class StudyBinaries:
    """The benchmark binaries of one study in one pair of directories, each looked up once: a
    (kernel, runtime, compiler) binary's path and --help, and an OpenMP library's preload, are found
    on the first ask and kept for every later one (the study's validation, the missing-binary check,
    each of its runs)."""

    def __init__(self, bins: BinDirs):
        self.bins = bins
        self._paths: dict[tuple[str, str, str], Path] = {}
        self._help: dict[tuple[str, str, str], HelpInfo | None] = {}
        self._preloads: dict[str, tuple[Path | None, str]] = {}

    def path(self, kernel: str, runtime: str, compiler: str = "") -> Path:
        key = (kernel, runtime, compiler)
        if key not in self._paths:
            self._paths[key] = self.bins.binary(*key)
        return self._paths[key]

    def help(self, kernel: str, runtime: str, compiler: str = "") -> HelpInfo | None:
        """The binary's --help; None while it is not a file (asked again then, as it may be built)."""
        key = (kernel, runtime, compiler)
        if key not in self._help:
            exe = self.path(*key)
            if not exe.is_file():
                return None
            self._help[key] = binary_help(exe)
        return self._help[key]

    def omp_preload(self, tag: str) -> tuple[Path | None, str]:
        if tag not in self._preloads:
            self._preloads[tag] = self.bins.omp_preload(tag)
        return self._preloads[tag]
