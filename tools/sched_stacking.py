#!/usr/bin/env python3
"""How long the threads of a benchmark process waited for a CPU, and behind whom.

Reads the text of `perf script` for a recording of the scheduler tracepoints, e.g.

    perf record -a -e sched:sched_switch,sched:sched_wakeup,sched:sched_migrate_task -o p.data -- \
        sh -c 'for i in 1 2 3; do sparselu-plait --threads 2 --size small --reps 1 --warmup 1 --quiet; done'
    perf script -F +pid -i p.data > p.txt
    tools/sched_stacking.py p.txt sparselu-plait

A thread "waits" from the moment it is switched out while still runnable (prev_state R: preempted
or yielded) until it is switched in again; the wait is charged to the thread that took the CPU
at the switch-out. Threads are grouped into processes by their thread group; the process's main
thread is the one whose tid equals the process id, every other thread of the command is a worker.
Per process this prints

    workers behind workers   two workers of the process shared one CPU (stacking)
    workers behind main      the main thread took a worker's CPU
    workers behind others    another program or a kernel thread did
    main runnable            how long the main thread itself waited while runnable

in milliseconds. docs/design.md §4 ("The caller of a root") has the measurements made with it.
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field

_LINE = re.compile(r"^\s*(?P<comm>.+?)\s+(?:(?P<pid>\d+)/)?(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<t>[\d.]+):\s+"
                   r"sched:(?P<ev>\w+):\s+(?P<rest>.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")


@dataclass
class Process:
    main: int
    workers_behind_workers: float = 0.0
    workers_behind_main: float = 0.0
    workers_behind_others: float = 0.0
    main_runnable: float = 0.0
    threads: set[int] = field(default_factory=set)


def analyse(lines, command: str) -> list[Process]:
    """Per process of `command` (matched against the thread's comm, which Linux truncates to 15
    characters), in order of first appearance."""
    name = command[:15]
    waiting: dict[int, tuple[float, int]] = {}  # tid -> (since, tid that took the CPU or -1)
    charged: dict[tuple[int, int], float] = defaultdict(float)
    ours: set[int] = set()
    tgid: dict[int, int] = {}
    for line in lines:
        m = _LINE.match(line)
        if not m or m["ev"] != "sched_switch":
            continue
        if m["pid"] is not None:
            tgid[int(m["tid"])] = int(m["pid"])
        f = dict(_FIELD.findall(m["rest"]))
        try:
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            prev_ours, next_ours = f["prev_comm"] == name, f["next_comm"] == name
            state = f["prev_state"]
        except KeyError as e:
            raise ValueError(f"not a sched_switch line from perf script: {line.strip()!r}") from e
        t = float(m["t"])
        if prev_ours:
            ours.add(prev)
            if state.startswith("R"):
                waiting[prev] = (t, nxt if next_ours else -1)
        if next_ours:
            ours.add(nxt)
        if nxt in waiting:
            since, taker = waiting.pop(nxt)
            charged[(nxt, taker)] += (t - since) * 1e3
    # Process = thread group, from the "pid/tid" column that `perf script -F +pid` prints. Without
    # it there is no reliable grouping: processes started back to back get consecutive tids, so a
    # run of close tids can span several of them.
    if ours and not tgid:
        raise ValueError("no pid/tid column (lines read 'comm TID [CPU]'); produce the text with perf script -F +pid")
    groups: dict[int, list[int]] = defaultdict(list)
    for tid in sorted(ours):
        groups[tgid.get(tid, tid)].append(tid)
    out = []
    for main, tids in groups.items():
        p = Process(main=main, threads=set(tids))
        workers = p.threads - {main}
        for (tid, taker), ms in charged.items():
            if tid == main:
                p.main_runnable += ms
            elif tid in workers:
                if taker in workers:
                    p.workers_behind_workers += ms
                elif taker == main:
                    p.workers_behind_main += ms
                else:
                    p.workers_behind_others += ms
        out.append(p)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: sched_stacking.py PERF_SCRIPT_TEXT COMMAND", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8", errors="replace") as fh:
            procs = analyse(fh, argv[2])
    except OSError as e:
        print(f"sched_stacking.py: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"sched_stacking.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    if not procs:
        print(f"sched_stacking.py: no sched_switch events of '{argv[2]}' in {argv[1]}", file=sys.stderr)
        return 2
    print("process  workers-behind-workers  behind-main  behind-others  main-runnable   (ms)")
    for p in procs:
        print(f"{p.main:7d}  {p.workers_behind_workers:22.2f}  {p.workers_behind_main:11.2f}  "
              f"{p.workers_behind_others:13.2f}  {p.main_runnable:13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
