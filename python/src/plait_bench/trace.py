"""Task traces: load Plait's trace files (CSV after study 002, Chrome trace-event JSON), check them,
summarise them and draw study 002's timeline (Figs 8-10). Formats: docs/tracing.md.

    plait-bench trace view FILE [-o out.png|.pdf] [--zoom-ms X]
    plait-bench trace summary FILE
    plait-bench trace check FILE [--expect-tasks N]

Exit status: 0 ok; 1 the trace is not well formed (check); 2 bad input (missing, truncated or
foreign file, bad option).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

CSV_HEADER = "timestamp_ns,executing_thread,task_id,creating_thread,start"
JSON_FORMAT = "plait-trace-2"
JSON_FORMATS = ("plait-trace-1", "plait-trace-2")  # 2 adds the task DAG (docs/tracing.md)
# Times, ids and worker numbers are kept in int64 arrays. A time bound of 2^61 ns (73 years) leaves
# room for begin + duration and for differences; worker numbers index per-worker lists.
MAX_NS = 2**61
MAX_WORKERS = 1 << 16
EXIT_OK, EXIT_BAD_TRACE, EXIT_BAD_INPUT = 0, 1, 2


class TraceError(Exception):
    """A file that cannot be read as a trace (missing, truncated, foreign). One line."""


# The runtimes a trace of the OMPT tool names (tools/ompt: "libomp", or "plait-omp" for
# libplait-omp's OMPT): their traces have no steal events.
OMPT_RUNTIMES = ("libomp", "plait-omp")


@dataclass
class Trace:
    """One trace in memory. Times in ns since the trace's t = 0.

    tasks: one row per task execution (numpy arrays of equal length): worker, task, creator, begin,
    end, depth (0 = top level on its worker; > 0 = ran nested inside another task on that worker,
    e.g. while the outer one waited in a join), label (list of str, "" = none).
    idle: per worker, a (k, 2) array of [begin, end) idle intervals recorded by the runtime (JSON only).
    steals: (k, 4) array of (t, thief, victim, task) (JSON only).
    problems: what is not well formed (checked by `trace check`).
    """

    path: Path
    fmt: str
    runtime: str = ""
    program: str = ""
    t0_unix_ns: int = 0
    nworkers: int = 0
    worker: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    task: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    creator: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    begin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    depth: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    label: list[str] = field(default_factory=list)
    idle: list[np.ndarray] = field(default_factory=list)
    steals: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
    counters: dict | None = None
    has_steals: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ntasks(self) -> int:
        return int(self.task.size)


# ---- loading --------------------------------------------------------------------------------


def load(path: str | Path) -> Trace:
    """Reads a .csv or .json trace (recognised by content). Raises TraceError with one line."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(256)
    except OSError as e:
        raise TraceError(f"cannot read {p}: {e.strerror or e}") from None
    text_head = head.lstrip()
    if text_head.startswith(b"{"):
        return _load_json(p)
    if head.startswith(CSV_HEADER.encode()):
        return _load_csv(p)
    if not head:
        raise TraceError(f"{p}: empty file (expected a Plait trace: .csv or .json, see docs/tracing.md)")
    raise TraceError(f"{p}: not a Plait trace (expected the CSV header '{CSV_HEADER}' or trace-event JSON)")


def _load_csv(p: Path) -> Trace:
    raw = p.read_bytes()
    if not raw.endswith(b"\n"):
        raise TraceError(f"{p}: truncated (the last line has no newline)")
    lines = raw.split(b"\n")
    if lines[0].decode(errors="replace").strip() != CSV_HEADER:
        raise TraceError(f"{p}: the header is not '{CSV_HEADER}'")
    body = [ln for ln in lines[1:] if ln.strip()]
    if body:
        try:
            rows = np.array([[int(x) for x in ln.split(b",")] for ln in body], dtype=np.int64)
        except ValueError:
            rows = np.zeros((0, 0), np.int64)
        except OverflowError:
            bad = next(i for i, ln in enumerate(body) if any(abs(int(x)) >= 2**63 for x in ln.split(b",")))
            raise TraceError(f"{p}: line {bad + 2}: a value does not fit in 64 bits") from None
        if rows.ndim != 2 or rows.shape[1] != 5:
            bad = next((i for i, ln in enumerate(body) if not _csv_row_ok(ln)), 0)
            got = body[bad][:60].decode(errors="replace")
            raise TraceError(f"{p}: line {bad + 2}: expected 5 comma-separated integers, got {got!r}")
    else:
        rows = np.zeros((0, 5), np.int64)
    if rows.size and (rows.min(axis=0)[:4] < 0).any():
        raise TraceError(f"{p}: negative values")
    for col, what, hi in ((0, "timestamp_ns", MAX_NS - 1), (1, "executing_thread", MAX_WORKERS - 1),
                          (3, "creating_thread", MAX_WORKERS - 1)):
        if rows.size and rows[:, col].max() > hi:
            bad = int(np.argmax(rows[:, col] > hi))
            raise TraceError(f"{p}: line {bad + 2}: {what} {rows[bad, col]} is out of range (accepted: 0..{hi})")
    if rows.size and not np.isin(rows[:, 4], (0, 1)).all():
        raise TraceError(f"{p}: the last column must be 1 (start) or 0 (stop)")
    tr = Trace(path=p, fmt="csv", runtime="", nworkers=int(rows[:, 1].max()) + 1 if rows.size else 0)
    out: list[tuple[int, int, int, int, int, int]] = []
    probs = tr.problems
    seen: set[int] = set()
    last_t = {}
    stacks: dict[int, list[tuple[int, int, int]]] = {}
    for line_no, (t, w, task, creator, start) in enumerate(rows.tolist(), start=2):
        if t < last_t.get(w, t):
            _problem(probs, f"line {line_no}: worker {w}: timestamp {t} before the previous one ({last_t[w]})")
        last_t[w] = t
        st = stacks.setdefault(w, [])
        if start:
            if task in seen:
                _problem(probs, f"line {line_no}: task {task} begins a second time")
            seen.add(task)
            st.append((task, creator, t))
        else:
            if not st:
                _problem(probs, f"line {line_no}: worker {w}: task {task} ends but never began there")
            elif st[-1][0] != task:
                _problem(probs, f"line {line_no}: worker {w}: task {task} ends while task {st[-1][0]} is innermost")
            else:
                tk, cr, b = st.pop()
                out.append((w, tk, cr, b, t, len(st)))
    for w, st in sorted(stacks.items()):
        for tk, _, b in st:
            _problem(probs, f"worker {w}: task {tk} (begun at {b} ns) never ends")
    _set_tasks(tr, out, [""] * len(out))
    tr.idle = [np.zeros((0, 2), np.int64) for _ in range(tr.nworkers)]
    return tr


def _csv_row_ok(ln: bytes) -> bool:
    parts = ln.split(b",")
    return len(parts) == 5 and all(x.strip().isdigit() for x in parts)


def _problem(probs: list[str], msg: str) -> None:
    if len(probs) < 1000:
        probs.append(msg)


def _load_json(p: Path) -> Trace:
    try:
        doc = json.loads(p.read_bytes())
    except json.JSONDecodeError as e:
        raise TraceError(f"{p}: not valid JSON (truncated?): {e.msg} at line {e.lineno} column {e.colno}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{p}: not UTF-8 JSON") from None
    except RecursionError:
        raise TraceError(f"{p}: JSON nested too deeply for a trace") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError(f"{p}: not a trace-event JSON file (no traceEvents list)")
    other = doc.get("otherData")
    if not isinstance(other, dict) or other.get("format") not in JSON_FORMATS:
        raise TraceError(f"{p}: not a Plait trace (otherData.format is not one of {', '.join(JSON_FORMATS)})")
    try:
        nworkers = int(other.get("workers", 0))
        if not 0 <= nworkers <= MAX_WORKERS:
            raise TraceError(f"{p}: otherData.workers = {nworkers} is out of range (0..{MAX_WORKERS})")
        tr = Trace(path=p, fmt="json", runtime=str(other.get("runtime", "")), program=str(other.get("program", "")),
                   t0_unix_ns=int(other.get("t0_unix_ns", 0)), nworkers=nworkers,
                   counters=other.get("counters") if isinstance(other.get("counters"), dict) else None)
    except (TypeError, ValueError, OverflowError):
        raise TraceError(f"{p}: malformed otherData") from None
    probs = tr.problems
    tasks: list[tuple[int, int, int, int, int, int]] = []
    labels: list[str] = []
    idle: dict[int, list[tuple[int, int]]] = {}
    steals: list[tuple[int, int, int, int]] = []
    flows: dict[object, list[str]] = {}
    for i, e in enumerate(doc["traceEvents"]):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            raise TraceError(f"{p}: traceEvents[{i}] is not a trace event (no 'ph')")
        ph = e["ph"]
        if ph == "M":
            continue
        try:
            w = _int(e["tid"], "tid", 0, MAX_WORKERS - 1)
            ts = _ns(e["ts"], "ts")
            if ph == "X":
                dur = _ns(e["dur"], "dur")
                if dur < 0:
                    _problem(probs, f"traceEvents[{i}]: negative duration")
                cat = e.get("cat")
                if cat == "task":
                    a = e.get("args") or {}
                    tasks.append((w, _int(a["task"], "args.task"), _int(a.get("creator", 0), "args.creator"), ts,
                                  ts + dur, 0))
                    labels.append(str(a.get("label", "")))
                    if a.get("unfinished"):
                        _problem(probs, f"worker {w}: task {a['task']} (begun at {ts} ns) never ends")
                elif cat == "idle":
                    idle.setdefault(w, []).append((ts, ts + dur))
            elif ph == "i" and e.get("cat") == "steal":
                a = e.get("args") or {}
                steals.append((ts, w, _int(a["victim"], "args.victim"), _int(a["task"], "args.task")))
            elif ph == "i" and e.get("cat") == "error":
                _problem(probs, f"worker {w} at {ts} ns: {e.get('name')}")
            elif ph in ("s", "f"):
                flows.setdefault(e.get("id"), []).append(ph)
        except _OutOfRange as err:
            raise TraceError(f"{p}: traceEvents[{i}] ({ph}): {err}") from None
        except (KeyError, TypeError, ValueError):
            raise TraceError(f"{p}: traceEvents[{i}] ({ph}) lacks a field or has a wrong type") from None
        nworkers = max(nworkers, w + 1)
    tr.nworkers = nworkers
    for fid, phs in flows.items():
        if sorted(phs) != ["f", "s"]:
            _problem(probs, f"flow {fid}: unmatched start/finish events ({''.join(phs)})")
    # traces of the OMPT tool (tools/ompt): OMPT reports no steals, on libomp or on libplait-omp
    tr.has_steals = tr.runtime not in OMPT_RUNTIMES
    tr.steals = np.array(steals, np.int64).reshape(-1, 4)
    tr.idle = [np.array(sorted(idle.get(w, [])), np.int64).reshape(-1, 2) for w in range(nworkers)]
    _set_tasks(tr, tasks, labels)
    _nest(tr)
    ids, counts = np.unique(tr.task, return_counts=True)
    for t in ids[counts > 1][:20]:
        _problem(probs, f"task {t} appears more than once")
    return tr


class _OutOfRange(ValueError):
    pass


def _ns(us, what: str) -> int:
    """A trace-event time (µs, as JSON has it) in ns."""
    if not isinstance(us, (int, float)) or isinstance(us, bool) or not math.isfinite(us):
        raise ValueError("not a number")
    if abs(us) * 1000 >= MAX_NS:
        raise _OutOfRange(f"{what} {us!r} is out of range (accepted: microseconds of magnitude below {MAX_NS / 1000:.4g})")
    return int(round(us * 1000))


def _int(v, what: str, lo: int = -(2**63), hi: int = 2**63 - 1) -> int:
    """An id or worker number that fits the int64 arrays (and [lo, hi])."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)) or (isinstance(v, float) and not math.isfinite(v)):
        raise ValueError("not an integer")
    x = int(v)
    if not lo <= x <= hi:
        raise _OutOfRange(f"{what} {v!r} is out of range (accepted: {lo}..{hi})")
    return x


def _set_tasks(tr: Trace, rows, labels) -> None:
    a = np.array(rows, np.int64).reshape(-1, 6)
    order = np.lexsort((-a[:, 4], a[:, 3], a[:, 0])) if a.size else np.zeros(0, np.int64)
    a = a[order]
    tr.worker, tr.task, tr.creator, tr.begin, tr.end, tr.depth = (a[:, i].copy() for i in range(6))
    tr.label = [labels[i] for i in order.tolist()]


def _nest(tr: Trace) -> None:
    """Depths from the slices (sorted by worker, begin, -end); partial overlaps are problems."""
    stack: list[int] = []
    cur_w = -1
    depth = tr.depth
    w_, b_, e_, t_ = tr.worker.tolist(), tr.begin.tolist(), tr.end.tolist(), tr.task.tolist()
    for i in range(len(w_)):
        if w_[i] != cur_w:
            stack, cur_w = [], w_[i]
        while stack and e_[stack[-1]] <= b_[i]:
            stack.pop()
        if stack and e_[i] > e_[stack[-1]]:
            _problem(tr.problems, f"worker {cur_w}: task {t_[i]} overlaps task {t_[stack[-1]]} without nesting in it")
        depth[i] = len(stack)
        stack.append(i)


# ---- analysis -------------------------------------------------------------------------------


@dataclass
class WorkerStats:
    worker: int
    tasks: int
    moved: int  # tasks that ran here but were created on another worker
    steals: int | None
    useful_ns: int  # in a task and not waiting (idle inside a task, e.g. at a join, is not useful)
    red_ns: int  # idle while work remained: from the start to this worker's last task end
    green_ns: int  # idle at the end (load imbalance): from its last task end to the end of the trace
    last_end: int
    utilisation: float


@dataclass
class Analysis:
    start: int
    stop: int
    workers: list[WorkerStats]
    gaps: list[tuple[int, int, int]]  # (length, worker, begin) of idle gaps while work remained, longest first

    @property
    def span(self) -> int:
        return self.stop - self.start


def analyse(tr: Trace, ngaps: int = 10) -> Analysis:
    """Study 002's colours and study 003's utilisation. The trace runs from the first task begin to
    the last task end anywhere. Per worker: useful time = time inside its top-level tasks minus the
    idle intervals recorded inside them; red = idle from the start until its own last task end;
    green = from its last task end to the end of the trace (a worker without tasks: all red)."""
    if tr.ntasks == 0:
        raise TraceError(f"{tr.path}: the trace has no tasks")
    start, stop = int(tr.begin.min()), int(tr.end.max())
    span = max(stop - start, 1)
    stats: list[WorkerStats] = []
    gaps: list[np.ndarray] = []  # rows (length, worker, begin)
    for w in range(tr.nworkers):
        m = tr.worker == w
        top = m & (tr.depth == 0)
        b, e = tr.begin[top], tr.end[top]  # sorted by begin, disjoint
        in_tasks = int((e - b).sum())
        idle = tr.idle[w] if w < len(tr.idle) else np.zeros((0, 2), np.int64)
        idle_inside = 0
        if idle.size and b.size:
            k = np.searchsorted(b, idle[:, 0], side="right") - 1
            ok = k >= 0
            kk = np.where(ok, k, 0)
            ov = np.minimum(idle[:, 1], e[kk]) - np.maximum(idle[:, 0], b[kk])
            inside = ok & (ov > 0)
            idle_inside = int(ov[inside].sum())
            sel = idle[inside]
            gaps.append(np.column_stack((sel[:, 1] - sel[:, 0], np.full(len(sel), w), sel[:, 0])))
        useful = in_tasks - idle_inside
        last_end = int(e.max()) if e.size else start
        if e.size:
            red, green = (last_end - start) - useful, stop - last_end
            gb = np.concatenate(([start], e[:-1]))
            g = b > gb
            gaps.append(np.column_stack((b[g] - gb[g], np.full(int(g.sum()), w), gb[g])))
        else:
            red, green = stop - start, 0
        nmoved = int((tr.creator[m] != w).sum())
        nsteals = int((tr.steals[:, 1] == w).sum()) if tr.has_steals else None
        stats.append(WorkerStats(w, int(m.sum()), nmoved, nsteals, useful, red, green, last_end, useful / span))
    allg = np.concatenate(gaps).astype(np.int64) if gaps else np.zeros((0, 3), np.int64)
    if len(allg) > ngaps:  # the ngaps longest (ties beyond the cut are dropped arbitrarily)
        allg = allg[np.argpartition(-allg[:, 0], ngaps - 1)[:ngaps]]
    top = sorted(map(tuple, allg.tolist()), key=lambda g: (-g[0], g[1], g[2]))
    return Analysis(start, stop, stats, top)


MAIN_TASK_SHARE = 0.9


def main_task_workers(tr: Trace, a: Analysis) -> set[int]:
    """Workers one of whose top-level tasks covers at least MAIN_TASK_SHARE of the trace: the
    program's main task (a benchmark's timed region runs as one root task). Its worker's waits
    inside it are not idle intervals in the trace, so its utilisation counts them as useful."""
    top = tr.depth == 0
    long = top & ((tr.end - tr.begin) >= MAIN_TASK_SHARE * a.span)
    return {int(w) for w in np.unique(tr.worker[long])}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def utilisation_lines(a: Analysis) -> list[str]:
    lines = [f"utilisation per worker (useful time / {_ms(a.span)}, study 003):"]
    for s in a.workers:
        lines.append(f"  worker {s.worker:>3}: {100 * s.utilisation:5.1f}%  ({s.tasks} tasks, useful {_ms(s.useful_ns)}, "
                     f"idle while work remained {_ms(s.red_ns)}, idle at the end {_ms(s.green_ns)})")
    mean = sum(s.utilisation for s in a.workers) / max(len(a.workers), 1)
    lines.append(f"  mean      : {100 * mean:5.1f}%")
    return lines


def summary_lines(tr: Trace, a: Analysis) -> list[str]:
    n = max(len(a.workers), 1)
    secs = a.span / 1e9
    tot_tasks = sum(s.tasks for s in a.workers)
    tot_moved = sum(s.moved for s in a.workers)
    tot_steals = sum(s.steals or 0 for s in a.workers) if tr.has_steals else None
    head = f"{tr.path.name}: {tr.fmt}"
    if tr.runtime:
        head += f", runtime {tr.runtime}"
    if tr.program:
        head += f", program {tr.program}"
    lines = [head, f"span {_ms(a.span)} (first task begin to last task end), {len(a.workers)} workers"]

    def rate(x: int | None) -> str:
        return "n/a" if x is None else f"{x / secs / n:,.0f}"

    why = "CSV has no steal events" if tr.fmt == "csv" else f"{tr.runtime or 'the runtime'} reports no steals"
    steals_txt = f"n/a ({why})" if tot_steals is None else str(tot_steals)
    lines.append(f"tasks {tot_tasks}, steals {steals_txt}, moved tasks {tot_moved} "
                 f"(ran on a worker other than their creator)")
    lines.append(f"per thread per second: tasks {rate(tot_tasks)}, steals {rate(tot_steals)}, moved {rate(tot_moved)}")
    lines.append(f"{'worker':>6} {'tasks':>8} {'steals':>8} {'moved':>8} {'tasks/s':>12} {'util %':>7} "
                 f"{'red ms':>9} {'green ms':>9}")
    for s in a.workers:
        st = "n/a" if s.steals is None else str(s.steals)
        lines.append(f"{s.worker:>6} {s.tasks:>8} {st:>8} {s.moved:>8} {s.tasks / secs:>12,.0f} "
                     f"{100 * s.utilisation:>7.1f} {s.red_ns / 1e6:>9.3f} {s.green_ns / 1e6:>9.3f}")
    mean = sum(s.utilisation for s in a.workers) / n
    lines.append(f"mean utilisation {100 * mean:.1f}%")
    if a.gaps:
        lines.append("longest idle gaps while work remained:")
        for length, w, b in a.gaps:
            lines.append(f"  worker {w:>3} at {(b - a.start) / 1e6:10.3f} ms: {_ms(length)}")
    return lines


def check(tr: Trace, expect_tasks: int | None = None) -> list[str]:
    """Everything that makes the trace not well formed (empty list: fine)."""
    probs = list(tr.problems)
    if (tr.end < tr.begin).any():
        probs.append("a task ends before it begins")
    if expect_tasks is not None and tr.ntasks != expect_tasks:
        probs.append(f"{tr.ntasks} tasks, expected {expect_tasks}")
    if tr.counters and isinstance(tr.counters.get("tasks"), int) and tr.counters["tasks"] != tr.ntasks:
        probs.append(f"otherData.counters.tasks = {tr.counters['tasks']} but {tr.ntasks} task slices")
    if tr.ntasks and (tr.worker >= tr.nworkers).any():
        probs.append("a task runs on a worker beyond otherData.workers")
    return probs


# ---- drawing --------------------------------------------------------------------------------


def draw(tr: Trace, a: Analysis, out: Path, zoom_ms: float | None) -> float:
    """Study 002 Figs 8-10: zoomed and full timelines, task-duration histogram and durations by task id."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    span_ms = a.span / 1e6
    zoom = zoom_ms if zoom_ms is not None else max(span_ms / 10, 1e-3)
    nw = max(tr.nworkers, 1)
    fig = plt.figure(figsize=(14, 4 + 0.25 * nw))
    gs = fig.add_gridspec(2, 2, height_ratios=[max(2.0, 0.25 * nw), 2.0], width_ratios=[1, 2])
    ax_zoom, ax_full = fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[0, 1])
    ax_hist, ax_id = fig.add_subplot(gs[1, 0]), fig.add_subplot(gs[1, 1])
    cmap = plt.get_cmap("Blues")
    red, green = "#d62728", "#2ca02c"
    nested = "#6a3d9a"  # purple: a task run inside another task of the same worker
    few = tr.ntasks <= 5000
    for ax in (ax_zoom, ax_full):
        for s in a.workers:
            w = s.worker
            rel = lambda x: (np.asarray(x) - a.start) / 1e6  # noqa: E731
            if s.tasks:
                ax.broken_barh([(0, rel(s.last_end))], (w - 0.4, 0.8), color=red, lw=0)
                ax.broken_barh([(rel(s.last_end), (a.stop - s.last_end) / 1e6)], (w - 0.4, 0.8), color=green, lw=0)
            else:
                ax.broken_barh([(0, span_ms)], (w - 0.4, 0.8), color=red, lw=0)
            top = (tr.worker == w) & (tr.depth == 0)
            bars = np.column_stack((rel(tr.begin[top]), (tr.end[top] - tr.begin[top]) / 1e6))
            shade = cmap(0.45 + 0.5 * w / max(nw - 1, 1))  # darker blue = higher worker id
            ax.broken_barh(bars, (w - 0.4, 0.8), facecolor=shade, edgecolor="white" if few else "none",
                           lw=0.3 if few else 0)
            inner = (tr.worker == w) & (tr.depth == 1)  # run inside a task of this worker (at its join or wait)
            if inner.any():
                ax.broken_barh(np.column_stack((rel(tr.begin[inner]), (tr.end[inner] - tr.begin[inner]) / 1e6)),
                               (w - 0.3, 0.6), facecolor=nested, edgecolor="white" if few else "none",
                               lw=0.3 if few else 0)
            idle = tr.idle[w] if w < len(tr.idle) else np.zeros((0, 2), np.int64)
            if idle.size and top.any():  # idle inside tasks: a worker that ran none has no such intervals
                tb, te = tr.begin[top], tr.end[top]
                k = np.searchsorted(tb, idle[:, 0], side="right") - 1
                inside = (k >= 0) & (idle[:, 1] <= te[np.maximum(k, 0)])
                sel = idle[inside]
                if sel.size:
                    ax.broken_barh(np.column_stack((rel(sel[:, 0]), (sel[:, 1] - sel[:, 0]) / 1e6)),
                                   (w - 0.4, 0.8), color=red, lw=0)
        ax.set_ylim(-0.6, nw - 0.4)
        ax.set_yticks(range(nw)) if nw <= 32 else None
        ax.set_xlabel("time (ms)")
    ax_zoom.set_xlim(0, zoom)
    ax_full.set_xlim(0, span_ms)
    ax_zoom.set_ylabel("worker")
    ax_zoom.set_title(f"first {zoom:.3g} ms")
    title = f"{tr.runtime or tr.fmt}: {tr.ntasks} tasks on {nw} workers, {span_ms:.3f} ms"
    if tr.program:
        title = f"{tr.program} ({title})"
    ax_full.set_title(title)
    ax_full.legend(handles=[Patch(color=cmap(0.7), label="task"),
                            Patch(color=nested, label="task inside a task (narrow bar)"),
                            Patch(color=red, label="idle, work remained"),
                            Patch(color=green, label="idle at the end (imbalance)")],
                   loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    dur_us = (tr.end - tr.begin) / 1e3
    pos = dur_us[dur_us > 0]
    if pos.size:
        lo, hi = pos.min(), pos.max()
        bins = np.logspace(np.log10(lo), np.log10(hi * 1.0001), 40) if hi > lo * 1.01 else 20
        ax_hist.hist(pos, bins=bins, color=cmap(0.7))
        if hi > lo * 1.01:
            ax_hist.set_xscale("log")
    ax_hist.set_xlabel("task duration (us, including nested tasks)")
    ax_hist.set_ylabel("tasks")
    ax_hist.set_title("task durations")
    ax_id.scatter(tr.task, dur_us, s=2 if tr.ntasks > 2000 else 14, color=cmap(0.8), lw=0)
    ax_id.set_xlabel("task id")
    ax_id.set_ylabel("duration (us)")
    ax_id.set_title("duration by task id")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp{out.suffix}")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(out)
    return zoom


# ---- command line ---------------------------------------------------------------------------


def _fail(msg: str, code: int = EXIT_BAD_INPUT):
    click.echo(f"plait-bench: error: {' '.join(str(msg).split())}", err=True)
    sys.exit(code)


def _load_or_exit(path: str) -> Trace:
    try:
        return load(path)
    except TraceError as e:
        _fail(str(e))
    except MemoryError:
        _fail(f"{path}: too large to load")
    raise AssertionError  # unreachable


def _analyse_or_exit(tr: Trace) -> Analysis:
    try:
        return analyse(tr)
    except TraceError as e:
        _fail(str(e))
    raise AssertionError


def _warn_problems(tr: Trace) -> None:
    if tr.problems:
        click.echo(f"plait-bench: warning: {tr.path}: {len(tr.problems)} problem(s), first: {tr.problems[0]} "
                   f"(plait-bench trace check lists them)", err=True)


@click.group("trace")
def trace_cli() -> None:
    """Task traces (PLAIT_TRACE=out.json|out.csv, or libplait-ompt.so for libomp): view, summary, check.

    See docs/tracing.md."""


@trace_cli.command("view")
@click.argument("file", type=str)
@click.option("-o", "--output", type=str, default=None,
              help="Figure to write (.png or .pdf) [default: FILE with .png next to it].")
@click.option("--zoom-ms", type=float, default=None, help="Length of the zoomed timeline [default: a tenth of the trace].")
def view(file: str, output: str | None, zoom_ms: float | None) -> None:
    """Study 002's timeline of FILE (blue tasks, red idle while work remained, green idle at the end),
    a zoom on the first milliseconds, the task-duration histogram; prints utilisation per worker."""
    out = Path(output) if output else Path(file).with_suffix(".png")
    if out.suffix.lower() not in (".png", ".pdf"):
        _fail(f"-o {out}: unknown figure type (accepted: .png, .pdf)")
    if zoom_ms is not None and not (zoom_ms > 0 and math.isfinite(zoom_ms)):
        _fail(f"--zoom-ms {zoom_ms}: expected a positive number of milliseconds")
    tr = _load_or_exit(file)
    _warn_problems(tr)
    a = _analyse_or_exit(tr)
    try:
        draw(tr, a, out, zoom_ms)
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")
    for line in utilisation_lines(a):
        click.echo(line)
    click.echo(f"wrote {out}")


@trace_cli.command("summary")
@click.argument("file", type=str)
def summary(file: str) -> None:
    """Tasks, steals and moved tasks per thread per second, utilisation, the longest idle gaps."""
    tr = _load_or_exit(file)
    _warn_problems(tr)
    a = _analyse_or_exit(tr)
    for line in summary_lines(tr, a):
        click.echo(line)


@trace_cli.command("check")
@click.argument("file", type=str)
@click.option("--expect-tasks", type=click.IntRange(min=0), default=None, help="The number of tasks the program ran.")
def check_cmd(file: str, expect_tasks: int | None) -> None:
    """Well-formedness: every task begin has its end on the same worker (nesting allowed), per-worker
    timestamps are monotonic, task ids are unique, steal flows are paired; for a trace with the task
    DAG (format plait-trace-2) also the DAG (plait-dag check: acyclic, every task once, edges
    consistent with the timeline). Exit 1 if not."""
    tr = _load_or_exit(file)
    probs = check(tr, expect_tasks)
    dag_line = None
    if not probs and has_dag(Path(file)):
        from .registry import BinDirs, find_root
        from .scale import ScaleError, run_dag

        try:
            d = run_dag(BinDirs.resolve(find_root()), ["check", file])
            dag_line = f"DAG ok: {d['edges']} edges, {d['roots']} roots, {d['unjoined']} tasks nobody joins"
        except ScaleError as e:
            probs = [f"DAG: {e}"]
    if probs:
        for msg in probs[:20]:
            click.echo(f"{tr.path}: {msg}", err=True)
        if len(probs) > 20:
            click.echo(f"{tr.path}: ... {len(probs) - 20} more", err=True)
        sys.exit(EXIT_BAD_TRACE)
    click.echo(f"{tr.path}: ok ({tr.fmt}, {tr.ntasks} tasks, {tr.nworkers} workers)" + (f"; {dag_line}" if dag_line else ""))


def has_dag(path: Path) -> bool:
    """A JSON trace whose otherData says it carries the task DAG (the writer puts otherData first;
    whitespace as any JSON writer may put it)."""
    import re

    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return (re.search(rb'"format"\s*:\s*"plait-trace-2"', head) is not None
            and re.search(rb'"dag"\s*:\s*true', head) is not None)
