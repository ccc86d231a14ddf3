"""Is the machine quiet enough to measure on? The state of the machine before a study and between
its rounds: what can change a timing, read from /proc and /sys, and a calibration probe.

A reading (``State``) holds the load averages, the threads that want a CPU besides the reader
itself (``others``: the median of five samples of /proc/stat's procs_running, 40 ms apart, minus
one — taken between rounds, when no benchmark of ours runs), the CPU time the hypervisor stole
since the previous reading (/proc/stat's steal column, in % of all CPU time), the CPUs online, the
frequency governor and turbo where the kernel shows them, the memory available, the pressure-stall
figures (/proc/pressure: the share of the last 10 s in which some task waited for a CPU or for
memory), and the probe: a fixed amount of work (SHA-1 over a fixed buffer, one thread per CPU,
which the interpreter runs in C outside its lock) timed by the wall clock. The probe's time over
the session's fastest probe says how much slower the machine was at that moment than at its
best; it moves with everything that takes CPUs from us, including what the counters above miss.

``busy(state, best_probe)`` names what disturbed a reading, or returns None:
  others   at least one other thread wants a CPU (on 2 CPUs that takes half of a 2-thread run)
  steal    the hypervisor took 5 % or more of the CPU time
  probe    the probe ran 25 % or more slower than the fastest probe of the session
  memory   the memory pressure (some, avg10) is 10 % or more
The thresholds: a quiet 2-CPU guest here reads others 0, steal < 1 %, probe within 10 % of its
best, memory pressure 0; a second CPU-bound process alone already gives others 1 and the probe
+40–100 %. Load averages are shown, not used: they are one-minute averages that still count the
benchmark's own threads after it ended.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

OTHERS_BUSY = 1        # other threads that want a CPU
STEAL_BUSY_PCT = 5.0
PROBE_BUSY_RATIO = 1.25
MEM_PRESSURE_BUSY_PCT = 10.0
PROBE_BYTES = 1 << 22  # 4 MiB per thread and round of SHA-1: ~8 ms on this guest
PROBE_ROUNDS = 3


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def _fields(path: str, prefix: str) -> list[str] | None:
    """The fields after `prefix` on the first line of the file that starts with it."""
    for line in (_read(path) or "").splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].split()
    return None


def _cpu_times() -> tuple[int, int] | None:
    """(total, steal) jiffies of all CPUs since boot."""
    f = _fields("/proc/stat", "cpu ")
    if f is None:
        return None
    vals = [int(x) for x in f]
    steal = vals[7] if len(vals) > 7 else 0
    # guest time is already counted in user; the first eight columns are the total
    return sum(vals[:8]), steal


def _procs_running() -> int | None:
    f = _fields("/proc/stat", "procs_running")
    return int(f[0]) if f else None


def _cpus_online() -> int | None:
    text = _read("/sys/devices/system/cpu/online")
    if not text:
        return os.cpu_count()
    n = 0
    for part in text.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            n += int(b) - int(a) + 1
        elif part:
            n += 1
    return n


def _pressure(what: str) -> float | None:
    for kv in _fields(f"/proc/pressure/{what}", "some") or []:
        k, _, v = kv.partition("=")
        if k == "avg10":
            return float(v)
    return None


def _governor() -> str | None:
    g = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    return g.strip() if g else None


def _turbo() -> str | None:
    nt = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if nt is not None:
        return "off" if nt.strip() == "1" else "on"
    b = _read("/sys/devices/system/cpu/cpufreq/boost")
    if b is not None:
        return "on" if b.strip() == "1" else "off"
    return None


def _mem_available_mb() -> float | None:
    f = _fields("/proc/meminfo", "MemAvailable:")
    return int(f[0]) / 1024 if f else None


_BUF = bytes(range(256)) * (PROBE_BYTES // 256)


def probe(threads: int | None = None) -> float:
    """Seconds for a fixed amount of work on every CPU at once: the median of PROBE_ROUNDS."""
    n = threads or _cpus_online() or 1

    def work():
        hashlib.sha1(_BUF).digest()

    times = []
    for _ in range(PROBE_ROUNDS):
        ts = [threading.Thread(target=work) for _ in range(n)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@dataclass
class State:
    taken_at: float = 0.0
    load1: float | None = None
    load5: float | None = None
    others: float | None = None       # threads wanting a CPU besides the reader (median of samples)
    steal_pct: float | None = None    # since the previous reading
    cpus_online: int | None = None
    governor: str | None = None
    turbo: str | None = None
    mem_available_mb: float | None = None
    cpu_pressure: float | None = None  # % (some, avg10)
    mem_pressure: float | None = None
    probe_s: float | None = None
    extra: dict = field(default_factory=dict)

    def as_row(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        return d


class Watcher:
    """Readings of one session: keeps the previous CPU times (for steal) and the fastest probe."""

    def __init__(self):
        self.prev = _cpu_times()
        self.best_probe: float | None = None  # also the machine's best of earlier sessions (db.best_probe)
        self.pending: tuple[State, str | None] | None = None  # a reading wait_quiet made, stored first

    def read(self, with_probe: bool = True) -> State:
        s = State(taken_at=time.time())
        la = _read("/proc/loadavg")
        if la:
            parts = la.split()
            s.load1, s.load5 = float(parts[0]), float(parts[1])
        samples = []
        for i in range(5):
            pr = _procs_running()
            if pr is not None:
                samples.append(pr - 1)  # the reader itself
            if i < 4:
                time.sleep(0.04)
        s.others = float(statistics.median(samples)) if samples else None
        cur = _cpu_times()
        if cur and self.prev and cur[0] > self.prev[0]:
            s.steal_pct = 100.0 * (cur[1] - self.prev[1]) / (cur[0] - self.prev[0])
        self.prev = cur or self.prev
        s.cpus_online = _cpus_online()
        s.governor = _governor()
        s.turbo = _turbo()
        s.mem_available_mb = _mem_available_mb()
        s.cpu_pressure = _pressure("cpu")
        s.mem_pressure = _pressure("memory")
        if with_probe:
            s.probe_s = probe(s.cpus_online)
            if self.best_probe is None or s.probe_s < self.best_probe:
                self.best_probe = s.probe_s
        return s


def busy(s: State, best_probe: float | None) -> str | None:
    """What disturbed the reading (one phrase), or None when the machine was quiet.
    PLAIT_BENCH_QUIET_CHECK=off: always None (the readings are still stored) — for tests of the
    report's mechanics on a machine that may be busy."""
    if os.environ.get("PLAIT_BENCH_QUIET_CHECK") == "off":
        return None
    why = []
    if s.others is not None and s.others >= OTHERS_BUSY:
        why.append(f"{s.others:g} other thread{'s' if s.others != 1 else ''} wanting a CPU")
    if s.steal_pct is not None and s.steal_pct >= STEAL_BUSY_PCT:
        why.append(f"steal {s.steal_pct:.0f} %")
    if s.probe_s and best_probe and s.probe_s / best_probe >= PROBE_BUSY_RATIO:
        why.append(f"probe {s.probe_s / best_probe:.2f}× its best")
    if s.mem_pressure is not None and s.mem_pressure >= MEM_PRESSURE_BUSY_PCT:
        why.append(f"memory pressure {s.mem_pressure:.0f} %")
    return "; ".join(why) or None


def describe(s: State) -> str:
    """The reading on one line: what a busy-machine warning or verdict quotes."""
    parts = []
    if s.load1 is not None:
        parts.append(f"load {s.load1:.2f}")
    if s.others is not None:
        parts.append(f"{s.others:g} other runnable")
    if s.steal_pct is not None:
        parts.append(f"steal {s.steal_pct:.1f} %")
    if s.cpus_online is not None:
        parts.append(f"{s.cpus_online} CPUs online")
    return ", ".join(parts)


def wait_quiet(seconds: float, watcher: Watcher, say=lambda msg: None) -> tuple[State, str | None]:
    """Reads until the machine is quiet or `seconds` have passed; returns the last reading and what
    disturbed it (None: quiet)."""
    deadline = time.time() + seconds
    s = watcher.read()
    why = busy(s, watcher.best_probe)
    while why and time.time() < deadline:
        say(f"waiting for a quiet machine: {why} ({describe(s)})")
        time.sleep(min(5.0, max(0.5, deadline - time.time())))
        s = watcher.read()
        why = busy(s, watcher.best_probe)
    return s, why
