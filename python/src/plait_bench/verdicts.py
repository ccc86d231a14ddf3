"""The tour's verdict table: for each study, the claims its paper makes, what this machine measured
and whether the two agree -- computed from the stored runs, never written by hand.

One function per study part (``VERDICTS``). Each takes the part's Dataset (every session of the part
merged: its runs do not share problems) and the per-worker utilisation of the part's traces, and
returns ``Verdict`` rows. The words:

  agrees     the measurement shows what the paper found (on this machine's 2 threads)
  partly     some runtimes or kernels show it, others do not (the row names which)
  disagrees  the measurement shows the opposite
  tie        the runs cannot tell the two apart (``compare``; or medians within ``TIE``)
  no data    the runs the row needs are missing or all failed (the report lists failed runs)
  not decided  the machine was busy while a measured round ran (quiet.py; ``machine_undecided``): the
             row says what was measured and why it decides nothing

A figure the paper gives in the same unit (study 001's spawn and steal cycles) is also compared in
size: ten times or more away says so next to the verdict (``size_note``: "agrees in order, 1000×
in size"), so that an order that agrees does not hide a number that cannot be right.

Timed comparisons pair the runs of each round (``compare``): with 6 rounds or more the 95 % interval
of the median ratio decides; a quick tour's 3 rounds take a side only when every round agrees and
the median is beyond ``TIE``. Efficiencies, speedups and costs of very different size (study 000's
trend, study 001's spawn and steal costs) are read from medians. The claims quote the papers in
../shared/papers (figure or table number and finding); the numbers in them are the papers'.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Callable

from .analysis import Cell, Dataset, uts_points
from .loops import lines as loop_lines
from .registry import MPI_RUNTIMES, OMP_FRONTS
from .report_ranks import family_of, place
from .stats import median_ci
from .suite import RUNTIME_ORDER, clock_ghz, cost_table, cutoff_class, round_ratios, runtime_of

TIE = 0.03  # medians within 3 % of each other: a tie (the run-to-run spread of this 2-core host)
GRAIN_END_FACTOR = 1.10  # a bathtub: both ends of the grain sweep at least 10 % slower than the best grain

STUDIES = {
    "000": "Olivier 2020, OpenMP tasking for unbalanced computation (UTS)",
    "001": "Podobas, Brorsson, Faxén 2010, task-based programming models (BOTS)",
    "002": "Giger 2021, task self-scheduling in OpenMP (loop to tasks)",
    "003": "Rico et al. 2019, on the benefits of tasking with OpenMP (AMR)",
    "omp": "Plait's OpenMP front door (this project: docs/openmp.md)",
    "mpi": "Beyond one node: UTS and the AMR proxy on MPI ranks (this project: docs/mpi.md)",
}


@dataclass
class Verdict:
    part: str
    claim: str
    measured: str
    verdict: str  # agrees | partly | disagrees | tie | no data | not decided
    note: str = ""  # shown with the verdict: the size check (size_note), why it is not decided

    @property
    def study(self) -> str:
        return STUDIES.get(self.part, self.part)


@dataclass
class PartData:
    """What a part's verdicts read: its runs, and per trace name the mean worker utilisation."""

    ds: Dataset
    utilisation: dict[str, float] = field(default_factory=dict)
    ghz: float | None = None


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def _sort_key(series: str) -> tuple:
    order = {r: i for i, r in enumerate(RUNTIME_ORDER)}
    return (order.get(runtime_of(series), 9), series)


def _sorted_series(series) -> list[str]:
    return sorted(series, key=_sort_key)


def _grain(ds: Dataset, kernel: str, base: dict) -> str:
    """'coarse' or 'fine' as study 001's figures use them; fib: a task per call (cut-off 0) is the
    fine case, any serial cut-off the coarse one (suite.cutoff_class keeps fib's 0 apart as the
    spawn microbenchmark)."""
    if kernel == "fib":
        return "fine" if str(base.get("cutoff", "0")) == "0" else "coarse"
    c = cutoff_class(ds, kernel, base)
    return c if c == "fine" else "coarse"


def compare(mine: Cell, refs: list[Cell]) -> tuple[str, float | None, int]:
    """Mine against the fastest of refs, round by round (suite.per_round: the runs of one round lie
    close together in time): ("better" | "worse" | "tie" | "no data", the median ratio, rounds).

    With 6 rounds or more the 95 % interval of the median ratio decides (stats.median_ci); below
    that (a quick tour's 3) a side is taken only when every round agrees on it and the median is
    beyond TIE -- a quick tour's noise is a tie, not a verdict."""
    ratios = round_ratios(mine, refs)
    if not ratios:
        return "no data", None, 0
    med = statistics.median(ratios)
    ci = median_ci(ratios)
    if ci is not None:
        word = "better" if ci[1] < 1 else "worse" if ci[0] > 1 else "tie"
    elif all(r < 1 for r in ratios) and med < 1 - TIE:
        word = "better"
    elif all(r > 1 for r in ratios) and med > 1 + TIE:
        word = "worse"
    else:
        word = "tie"
    return word, med, len(ratios)


def _from_words(words: dict[str, str]) -> str:
    """Per runtime or kernel better/tie/worse -> the row's verdict on "mine is faster"."""
    ws = [w for w in words.values() if w != "no data"]
    if not ws:
        return "no data"
    if all(w == "better" for w in ws):
        return "agrees"
    if "better" in ws:
        return "partly"
    return "disagrees" if "worse" in ws else "tie"


def _amr_variant(c: Cell) -> str:
    for r in c.runs:
        v = r.params.get("variant")
        if v:
            return str(v)
    return "loop"


def _all_or_some(flags: dict[str, bool]) -> str:
    if not flags:
        return "no data"
    if all(flags.values()):
        return "agrees"
    if any(flags.values()):
        return "partly"
    return "disagrees"


# ---- study 000: UTS efficiency vs granularity --------------------------------------------------


def verdicts_000(d: PartData) -> list[Verdict]:
    ds = d.ds
    claim1 = ("Figs 2–3: parallel efficiency rises with task granularity: 16.8–77.5 % at the finest grain, "
              "89.7–96.9 % at the coarsest (44–68 threads)")
    claim2 = "§4: GCC's libgomp does not scale at all: even 2 threads are no faster than 1 (a central task queue)"
    pts = [p for p in uts_points(ds) if p.t_serial is not None]
    if len(pts) < 2:
        return [Verdict("000", claim1, "no UTS runs at two granularities", "no data"),
                Verdict("000", claim2, "no UTS runs", "no data")]
    P = ds.max_threads("uts")
    lo, hi = pts[0], pts[-1]

    def eff(series: str, p) -> float | None:
        c = ds.cell("uts", p.base, series, P)
        s = ds.efficiency(c) if c is not None else None
        return s.median if s else None

    rises: dict[str, bool] = {}
    parts = []
    for s in _sorted_series(ds.series("uts", parallel_only=True)):
        a, b = eff(s, lo), eff(s, hi)
        if a is None or b is None:
            parts.append(f"{s} –")
            continue
        parts.append(f"{s} {_pct(a)} → {_pct(b)}")
        if runtime_of(s) != "plait":  # the claim is about the peers; Plait's row is shown beside them
            rises[s] = b >= a - TIE
    measured = f"P = {P}, g = {lo.g} → g = {hi.g}: " + ", ".join(parts)
    v1 = _all_or_some(rises)
    if v1 == "partly":
        measured += "; not rising: " + ", ".join(s for s, ok in rises.items() if not ok)
    out = [Verdict("000", claim1, measured, v1)]

    c = ds.cell("uts", lo.base, "gomp", P)
    sp = ds.speedup(c) if c is not None else None
    if sp is None:
        out.append(Verdict("000", claim2, "no successful libgomp run", "no data"))
    else:
        c_hi = ds.cell("uts", hi.base, "gomp", P)
        sp_hi = ds.speedup(c_hi) if c_hi is not None else None
        m = f"libgomp (gcc 12) at P = {P}: speedup {sp.median:.2f}× at g = {lo.g}"
        if sp_hi is not None:
            m += f", {sp_hi.median:.2f}× at g = {hi.g}"
        out.append(Verdict("000", claim2, m, "agrees" if sp.median <= 1 + TIE else "disagrees"))
    return out


# ---- the size check and the busy machine -------------------------------------------------------------

SIZE_FACTOR = 10.0  # a figure ten times or more away from the paper's is named with the verdict


def size_note(pairs: list[tuple[str, float, float]]) -> str:
    """(name, measured, paper's) in one unit -> "", or "1000× in size (plait 3,306,645 against 2,200)"
    for the pair farthest away when it is SIZE_FACTOR or more."""
    worst = None
    for name, mine, paper in pairs:
        if mine is None or paper is None or mine <= 0 or paper <= 0:
            continue
        f = max(mine / paper, paper / mine)
        if worst is None or f > worst[0]:
            worst = (f, name, mine, paper)
    if worst is None or worst[0] < SIZE_FACTOR:
        return ""
    f, name, mine, paper = worst
    return f"{f:,.0f}× in size ({name} {mine:,.0f} against the paper's {paper:,.0f})"


def disturbed_rounds(states) -> tuple[set[int], list]:
    """Measured rounds (>= 1) that a busy reading touched, and the busy readings. A reading of round r
    is taken just before round r (round -1: after the last), so a busy one disturbs round r and the
    round before it."""
    rounds: set[int] = set()
    busy = []
    prev = None
    for st in states:
        if st["busy"]:
            busy.append(st)
            for r in (st["round"], prev["round"] if prev is not None else None):
                if r is not None and r >= 1:
                    rounds.add(int(r))
        prev = st
    return rounds, busy


def machine_undecided(verdicts: list[Verdict], states) -> list[Verdict]:
    """Every verdict of a part whose measured rounds the machine disturbed becomes "not decided",
    with the load and steal of the busy readings; "no data" stays."""
    rounds, busy = disturbed_rounds(states)
    if not rounds:
        return verdicts
    load = max((b["load1"] or 0.0) for b in busy)
    steal = max((b["steal_pct"] or 0.0) for b in busy)
    why = (f"not decided: the machine was busy (load {load:.1f}, steal {steal:.0f} %; "
           f"{busy[0]['busy']}) in round{'s' if len(rounds) > 1 else ''} {', '.join(map(str, sorted(rounds)))}")
    out = []
    for v in verdicts:
        if v.verdict == "no data":
            out.append(v)
        else:
            out.append(Verdict(v.part, v.claim, v.measured, "not decided", why))
    return out


# ---- study 001: spawn and steal cost, one-thread overhead, cut-offs --------------------------------


def verdicts_001(d: PartData) -> list[Verdict]:
    ds = d.ds
    out: list[Verdict] = []
    ghz, _ = clock_ghz(ds, fallback=lambda: d.ghz)
    rows = {r.series: r for r in cost_table(ds, ghz)}

    def cyc(s, attr):
        r = rows.get(s)
        v = getattr(r, attr) if r else None
        return v.median if v else None

    claim = ("Table 1: an inlined spawn/join costs 19 cycles in Wool (work-first) and 415 in GCC's OpenMP, 22× "
             "more; Cilk++ 134, ICC 878")
    spawn = {s: cyc(s, "spawn_cycles") for s in rows}
    spawn = {s: v for s, v in spawn.items() if v is not None}
    if "plait" in spawn and "gomp" in spawn:
        m = ", ".join(f"{s} {max(v, 0):.0f}" for s, v in ((s, spawn[s]) for s in _sorted_series(spawn))) + " cycles"
        ratio = spawn["gomp"] / max(spawn["plait"], 1.0)
        m += f" (libgomp / Plait ≥ {ratio:.0f}×)" if spawn["plait"] < 1 else f" (libgomp / Plait {ratio:.0f}×)"
        # the size check: GCC's OpenMP against its 415 cycles (Plait's spawn is Wool's kind; near 0
        # cycles here, a ratio to Wool's 19 says nothing)
        note = size_note([("libgomp", spawn["gomp"], 415.0)])
        out.append(Verdict("001", claim, m, "agrees" if ratio >= 5 else "disagrees",
                           f"in order, {note}" if note else ""))
    else:
        out.append(Verdict("001", claim, "no fib runs with a task per call at one thread", "no data"))

    claim = "Table 1: a steal on 2 cores costs 2,200 cycles in Wool and 5,200 in GCC's OpenMP"
    steal = {s: cyc(s, "steal_cycles") for s in rows}
    steal = {s: v for s, v in steal.items() if v is not None}
    if "plait" in steal and "gomp" in steal:
        m = ", ".join(f"{s} {steal[s]:,.0f}" for s in _sorted_series(steal)) + " cycles"
        r = steal["plait"] / steal["gomp"]
        note = size_note([("plait", steal["plait"], 2200.0), ("libgomp", steal["gomp"], 5200.0)])
        word = "tie" if abs(r - 1) <= TIE else "agrees" if r < 1 else "disagrees"
        out.append(Verdict("001", claim, m, word, (f"in order, {note}" if word == "agrees" else note) if note else ""))
    else:
        out.append(Verdict("001", claim, "no steal runs of Plait and libgomp", "no data"))

    # Table 4 and the cut-offs: per problem (kernel x cut-off), classified coarse / fine
    claim = ("Table 4: at one thread, with the coarse cut-offs, the runtimes run close to the serial program "
             "(GCC at 0.72–0.95 of its speed)")
    worst: dict[str, float] = {}
    kernels = [k for k in ds.kernels() if k not in ("steal", "fib")]  # Table 4 has no fib (its serial
    # build is a loop nest gcc makes of the recursion: a ratio to it measures the compiler)
    for k in kernels:
        for base in ds.problems(k):
            if _grain(ds, k, base) == "fine":
                continue
            ts = ds.serial_time(k, base)
            for s in ds.series(k, parallel_only=True):
                c = ds.cell(k, base, s, 1)
                if ts and c is not None and c.time is not None:
                    worst[s] = max(worst.get(s, 0.0), c.time.median / ts)
    if worst:
        m = f"slowest of {', '.join(kernels)} at 1 thread, time over serial: " + ", ".join(
            f"{s} {worst[s]:.2f}×" for s in _sorted_series(worst))
        ok = {s: v <= 1 / 0.72 for s, v in worst.items()}
        out.append(Verdict("001", claim, m, _all_or_some(ok)))
    else:
        out.append(Verdict("001", claim, "no coarse problems with serial and one-thread runs", "no data"))

    claim = ("Figs 5–9: with coarse cut-offs every model does well; with fine cut-offs the OpenMP runtimes perform "
             "poorly while Wool and Cilk++ hold up")
    P = max((ds.max_threads(k) for k in ds.kernels() if k != "steal"), default=1)
    finds, flags = [], {}
    for k in ds.kernels():
        if k == "steal":
            continue
        fine = [b for b in ds.problems(k) if _grain(ds, k, b) == "fine"]
        for base in fine:
            sp = {}
            for s in ds.series(k, parallel_only=True):
                c = ds.cell(k, base, s, P)
                v = ds.speedup(c) if c is not None else None
                if v is not None:
                    sp[s] = v.median
            omp = [sp[s] for s in sp if runtime_of(s) in ("gomp", "libomp")]
            if "plait" in sp and omp:
                finds.append(f"{k}: plait {sp['plait']:.2g}×, best OpenMP {max(omp):.2g}×")
                flags[k] = sp["plait"] > max(omp) * (1 + TIE)
    if flags:
        out.append(Verdict("001", claim, f"fine cut-off, speedup at P = {P}: " + "; ".join(finds), _all_or_some(flags)))
    else:
        out.append(Verdict("001", claim, "no fine cut-off runs of Plait and an OpenMP runtime", "no data"))
    return out


# ---- study 002: the grain-size bathtub -------------------------------------------------------------


def verdicts_002(d: PartData) -> list[Verdict]:
    ds = d.ds
    out: list[Verdict] = []
    claim = ("Figs 16–17: time against grain size is a bathtub: overhead grows with the number of tasks, load "
             "imbalance with the size of the largest")
    claim2 = "§5.1, Fig 12: stealing a vector of tasks at once cuts the overhead of many fine tasks"
    base = next(iter(ds.problems("mandel")), None)
    if base is None:
        return [Verdict("002", claim, "no loop runs", "no data"), Verdict("002", claim2, "no loop runs", "no data")]
    P = ds.max_threads("mandel")
    ls = [ln for ln in loop_lines(ds, "mandel", base, P) if ln.key.knob == "grain"]
    flags, parts = {}, []
    by_steal = {}
    for ln in ls:
        med = {x: t for x, t in ln.medians().items() if not math.isnan(x)}
        if len(med) < 3:
            continue
        xs = sorted(med)
        best = min(xs, key=lambda x: med[x])
        lo_end, hi_end = med[xs[0]] / med[best], med[xs[-1]] / med[best]
        name = ln.key.runtime + (f" steal={ln.key.steal}" if ln.key.steal else "")
        parts.append(f"{name}: best G = {best:g}, G = {xs[0]:g} {lo_end:.2f}×, G = {xs[-1]:g} {hi_end:.2f}×")
        flags[name] = xs[0] < best < xs[-1] and lo_end >= GRAIN_END_FACTOR and hi_end >= GRAIN_END_FACTOR
        if ln.key.runtime == "plait":
            by_steal[ln.key.steal] = ln
    out.append(Verdict("002", claim, f"P = {P}, time over the best grain's: " + "; ".join(parts) if parts
                       else "no grain sweep", _all_or_some(flags)))

    one, half = by_steal.get("one"), by_steal.get("half")
    if one is None or half is None:
        out.append(Verdict("002", claim2, "no Plait runs with one-task and chunked stealing", "no data"))
    else:
        g = min(set(one.points) & set(half.points), default=None)
        c1, c2 = (one.points.get(g), half.points.get(g)) if g is not None else (None, None)
        word, r, n = compare(c2, [c1]) if c1 is not None and c2 is not None else ("no data", None, 0)
        if r is None:
            out.append(Verdict("002", claim2, "no successful runs at the finest grain", "no data"))
        else:
            m = f"Plait at G = {g:g}, P = {P}: steal=half / steal=one {r:.3f} (median of {n} paired rounds)"
            out.append(Verdict("002", claim2, m, _from_words({"plait": word})))
    return out


# ---- study 003: AMR Loop vs Task-2 ---------------------------------------------------------------


def verdicts_003(d: PartData) -> list[Verdict]:
    ds = d.ds
    claim = ("Fig 2: Task-2 (data-flow tasks, the checksum a task too) is faster than Loop, 15–30 % at some thread "
             "counts; the gain grows with the thread count")
    claim2 = "Fig 3: under Task-2 the threads are busy over 90 % of the time (a few over 80 %), under Loop 40–80 %"
    P = max((c.threads for c in ds.cells_for("amr") if c.runtime != "serial"), default=0)
    parts, words = [], {}
    groups: dict[tuple, dict[str, Cell]] = {}  # (case without the variant, series, P) -> variant -> cell
    for c in ds.cells_for("amr"):
        if c.runtime != "serial":
            case = tuple(sorted((k, v) for k, v in c.base.items() if k != "variant"))
            groups.setdefault((case, c.series, c.threads), {})[_amr_variant(c)] = c
    for (case, line, t), cs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2], _sort_key(kv[0][1]))):
        if "task-2" not in cs or "loop" not in cs:
            continue
        word, r, n = compare(cs["task-2"], [cs["loop"]])
        if r is None:
            continue
        parts.append(f"{runtime_of(line)} P = {t}: {r:.2f}" + (f" ({word})" if t == P else ""))
        if t == P:
            words[runtime_of(line)] = word
    v = _from_words(words)
    m = "Task-2 time / Loop time (median of paired rounds): " + ", ".join(parts) if parts else "no Loop and Task-2 runs"
    out = [Verdict("003", claim, m, v)]
    u_loop, u_task = d.utilisation.get("amr-loop"), d.utilisation.get("amr-task-2")
    if u_loop is None or u_task is None:
        out.append(Verdict("003", claim2, "no utilisation timelines of both variants", "no data"))
    else:
        m = (f"Plait at 2 workers, utilisation of the worker(s) besides the main task's: Task-2 {_pct(u_task)}, "
             f"Loop {_pct(u_loop)}")
        v = "tie" if abs(u_task - u_loop) <= TIE else "agrees" if u_task > u_loop else "disagrees"
        out.append(Verdict("003", claim2, m, v))
    out.append(_verdict_003_ompt(d))
    return out


# The same clang-built Task-2 binary traced on libomp and on libplait-omp by one OMPT tool (the tour's
# trace names: studies/tours/demo.toml).
AMR_OMPT_TRACES = ("amr-task-2-libomp", "amr-task-2-libomp-on-plait")


def _verdict_003_ompt(d: PartData) -> Verdict:
    """Fig 3's utilisation of the same OpenMP binary on two runtimes, from one tool's timelines: on
    Plait at least as high as on libomp (study 003 measured its runtime's through one tracer too)."""
    claim = ("Fig 3 through one OMPT tool: the same clang-built Task-2 binary keeps its threads at least as busy on "
             "Plait (libplait-omp) as on libomp")
    u_ref, u_mine = (d.utilisation.get(n) for n in AMR_OMPT_TRACES)
    if u_ref is None or u_mine is None:
        return Verdict("003", claim, "no OMPT timelines of the binary on both runtimes", "no data")
    m = (f"clang's Task-2 at 2 threads, traced by tools/ompt, mean utilisation of the threads: Plait {_pct(u_mine)}, "
         f"libomp {_pct(u_ref)}")
    v = "tie" if abs(u_mine - u_ref) <= TIE else "agrees" if u_mine > u_ref else "disagrees"
    return Verdict("003", claim, m, v)


# ---- the OpenMP front door: the same binary --------------------------------------------------------




def verdicts_omp(d: PartData) -> list[Verdict]:
    """One verdict per compiler whose binaries the session ran on libplait-omp (gcc's always: a
    session without them says "no data")."""
    ds = d.ds
    out = []
    for front in OMP_FRONTS:
        comp, mine_s, peer_s, names = front.compiler, front.mine, front.peers, front.libraries
        claim = (f"the same {comp}-built OpenMP binary runs at least as fast on Plait (libplait-omp preloaded) as on "
                 + ("the faster of " if len(peer_s) > 1 else "") + names)
        parts, words = [], {}
        for k in ds.kernels():
            for base in ds.problems(k):
                P = max((c.threads for c in ds.cells_for(k, base) if c.series == mine_s), default=0)
                mine = ds.cell(k, base, mine_s, P)
                peers = [c for s in peer_s if (c := ds.cell(k, base, s, P)) is not None and c.ok_runs]
                if mine is None or not mine.ok_runs or not peers:
                    continue
                word, r, n = compare(mine, peers)
                if r is None:
                    continue
                parts.append(f"{k} {r:.2f} ({word})")
                words[k] = word
        if not words:
            if comp == "gcc" or any(c.series == mine_s for c in ds.cells.values()):
                out.append(Verdict("omp", claim, f"no {mine_s} runs with a peer", "no data"))
            continue
        # the claim is "at least as fast": better or a tie holds it
        worse = [k for k, w in words.items() if w == "worse"]
        v = "agrees" if not worse else "disagrees" if len(worse) == len(words) else "partly"
        P = max(c.threads for c in ds.cells.values() if c.series == mine_s)
        than = f"the faster of {' and '.join(peer_s)}" if len(peer_s) > 1 else peer_s[0]
        m = f"P = {P}, {mine_s} / {than}, median of paired rounds: " + ", ".join(parts)
        out.append(Verdict("omp", claim, m, v))
    return out


# ---- beyond one node: MPI ranks -------------------------------------------------------------------


def within(ratios: list[float], lo: float, hi: float) -> str:
    """Whether paired ratios lie in [lo, hi]: "in" | "out" | "tie" | "no data". With 6 rounds or more
    the 95 % interval of the median decides (in: inside the band; out: wholly outside it); below
    that, every round must agree."""
    if not ratios:
        return "no data"
    ci = median_ci(ratios)
    a, b = ci if ci is not None else (min(ratios), max(ratios))
    if lo <= a and b <= hi:
        return "in"
    if b < lo or a > hi:
        return "out"
    return "tie"


def verdicts_mpi(d: PartData) -> list[Verdict]:
    ds = d.ds
    out: list[Verdict] = []
    # UTS across ranks of one thread: efficiency at the largest P of the pure MPI series
    claim = ("UTS was designed for distributed memory (seed 000): across 2 ranks of one thread each it keeps "
             "≥ 90 % parallel efficiency against the serial build")
    eff = [(c.threads, base, ds.efficiency(c)) for base in ds.problems("uts") for c in ds.cells_for("uts", base)
           if c.series == "mpi" and c.threads > 1]
    eff = [x for x in eff if x[2] is not None]
    if not eff:
        out.append(Verdict("mpi", claim, "no MPI runs of UTS with a serial run", "no data"))
    else:
        P, base, e = max(eff, key=lambda x: x[0])
        tree = base.get("tree", "")
        v = "agrees" if e.median >= 0.90 else "disagrees"
        out.append(Verdict("mpi", claim, f"{tree} at {P} ranks × 1: efficiency {_pct(e.median)} "
                                         f"[{_pct(e.lo)}–{_pct(e.hi)}]", v))
    # hybrid: 2 ranks x 1 worker against 1 rank x 2 workers, one family
    claim = ("a Plait pool in every rank: 1 rank × 2 workers and 2 ranks × 1 worker run within 10 % of each "
             "other (ranks steal from each other only when their workers ran dry)")
    parts, words = [], []
    for base in ds.problems("uts"):
        placed = [place(c) for c in ds.cells_for("uts", base) if c.runtime in MPI_RUNTIMES and c.threads == 2]
        for fam in sorted({p.family for p in placed}):
            shapes = {(p.ranks, p.per_rank): p.cell for p in placed if p.family == fam}
            if (2, 1) in shapes and (1, 2) in shapes:
                ratios = round_ratios(shapes[(2, 1)], [shapes[(1, 2)]])
                w = within(ratios, 1 / 1.10, 1.10)
                if w == "no data":
                    continue
                parts.append(f"{base.get('tree', '')} {fam}: 2 × 1 / 1 × 2 ×{statistics.median(ratios):.3f} "
                             f"({len(ratios)} rounds)")
                words.append(w)
    if not words:
        out.append(Verdict("mpi", claim, "no hybrid runs at 1 × 2 and 2 × 1", "no data"))
    else:
        v = ("agrees" if all(w == "in" for w in words) else "disagrees" if all(w == "out" for w in words)
             else "partly" if "in" in words else "tie")
        out.append(Verdict("mpi", claim, "; ".join(parts), v))
    # AMR: MPI + Task-2 against MPI + Loop at the largest rank count of one worker
    claim = ("study 003's future work, the MPI part as tasks: MPI + Task-2 at least 10 % faster than MPI + Loop "
             "(ranks of one worker each)")
    by: dict[tuple, dict[str, Cell]] = {}
    for c in ds.cells_for("amr"):
        if c.runtime in MPI_RUNTIMES and c.threads > 1 and family_of(c.series) == c.series:
            case = tuple(sorted((k, v) for k, v in c.base.items() if k != "variant"))
            by.setdefault((case, c.series, c.threads), {})[_amr_variant(c)] = c
    pairs = [(k, cs) for k, cs in by.items() if "loop" in cs and "task-2" in cs]
    if not pairs:
        out.append(Verdict("mpi", claim, "no MPI + Loop and MPI + Task-2 runs on ranks", "no data"))
    else:
        (case, series, P), cs = max(pairs, key=lambda kv: kv[0][2])
        ratios = round_ratios(cs["task-2"], [cs["loop"]])
        w = within(ratios, 0.0, 0.90)
        wait = cs["loop"].stat("comm_wait_s")
        t = cs["loop"].time
        m = (f"{P} ranks × 1: Task-2 / Loop ×{statistics.median(ratios):.3f} ({len(ratios)} rounds)" if ratios
             else f"{P} ranks × 1: no paired rounds")
        if wait is not None and t is not None and t.median > 0:
            m += (f"; Loop's ranks wait in MPI {_pct(wait.median / t.median)} of the run (comm_wait_s), the most "
                  f"Task-2 can hide")
        out.append(Verdict("mpi", claim, m, {"in": "agrees", "out": "disagrees", "tie": "tie"}.get(w, "no data")))
    return out


VERDICTS: dict[str, Callable[[PartData], list[Verdict]]] = {
    "000": verdicts_000, "001": verdicts_001, "002": verdicts_002, "003": verdicts_003, "omp": verdicts_omp,
    "mpi": verdicts_mpi,
}
