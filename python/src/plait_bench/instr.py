"""Instructions per unit of work, counted with valgrind --tool=callgrind (no cycle counters here).

Two small serial runs that differ only in the amount of work are measured; their difference divided by
the difference in work gives instructions per unit with start-up and traversal costs cancelled:

* uts: the same small tree at g1 and g2 -> instructions per SHA-1 op = dI / ((nodes - 1) * (g2 - g1));
  also all instructions of the g1 run per node.
* fib: fib(n1) and fib(n2) -> instructions per call = dI / (calls(n2) - calls(n1)), calls(n) = 2 fib(n+1) - 1.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .analysis import callgrind_total, per_unit_from_two
from .registry import binary_help

# Small problems: callgrind runs ~50x slower than native.
DEFAULTS = {
    "uts": {"params": {"type": "binomial", "b0": "500", "q": "0.12", "m": "8", "seed": "1"}, "vary": "g", "values": (1, 3)},
    "fib": {"params": {}, "vary": "n", "values": (18, 20)},
}


class InstrError(Exception):
    pass


@dataclass
class Measurement:
    value: str
    instructions: int
    record: dict
    command: str


def fib_calls(n: int) -> int:
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1  # a = fib(n+1)


def _stack_unlimited() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    try:
        resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))
    except (ValueError, OSError):
        pass


def callgrind(exe: Path, params: dict[str, str], timeout_s: float = 600) -> Measurement:
    if shutil.which("valgrind") is None:
        raise InstrError("valgrind is not installed (apt-get install valgrind; scripts/bootstrap.sh does it)")
    info = binary_help(exe)
    args = []
    for k, v in params.items():
        args += [info.spelling(k) if info else f"--{k}", str(v)]
    with tempfile.TemporaryDirectory(prefix="plait-instr-") as td:
        out = Path(td) / "callgrind.out"
        cmd = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
            str(exe), *args, "--threads", "1", "--reps", "1", "--warmup", "0", "--quiet",
        ]
        env = dict(os.environ)
        # The drivers re-execute themselves for a big stack; under valgrind that exec would escape the
        # measurement, so we give the stack here and tell the driver it already happened.
        env["PLAIT_BENCH_REEXECED"] = "1"
        env.setdefault("OMP_STACKSIZE", "100M")
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env, preexec_fn=_stack_unlimited)
        except subprocess.TimeoutExpired:
            raise InstrError(f"{shlex.join(cmd)} timed out after {timeout_s:g} s") from None
        if cp.returncode != 0:
            last = [ln for ln in cp.stderr.splitlines() if ln.strip() and not ln.startswith("==")]
            raise InstrError(f"{exe.name} under callgrind exited {cp.returncode}: {last[-1] if last else cp.stderr[-300:]}")
        recs = [json.loads(ln) for ln in cp.stdout.splitlines() if ln.strip().startswith("{")]
        if not recs:
            raise InstrError(f"{exe.name} printed no JSON line under callgrind")
        return Measurement(value="", instructions=callgrind_total(out), record=recs[-1], command=shlex.join(cmd))


def measure(kernel: str, exe: Path, params: dict[str, str] | None = None, values: tuple[int, int] | None = None) -> dict:
    """Run the two callgrind measurements; returns the numbers to store."""
    if kernel not in DEFAULTS:
        raise InstrError(f"no instruction recipe for benchmark '{kernel}'; known: {', '.join(DEFAULTS)}")
    d = DEFAULTS[kernel]
    ps = dict(d["params"])
    ps.update(params or {})
    v1, v2 = values or d["values"]
    vary = d["vary"]
    ms = []
    for v in (v1, v2):
        m = callgrind(exe, {**ps, vary: str(v)})
        m.value = str(v)
        ms.append(m)
    i1, i2 = ms[0].instructions, ms[1].instructions
    details = {
        "params": ps,
        "vary": vary,
        "runs": [{"value": m.value, "instructions": m.instructions, "stats": m.record.get("stats", {}), "command": m.command} for m in ms],
    }
    if kernel == "uts":
        n1 = ms[0].record.get("stats", {}).get("nodes")
        n2 = ms[1].record.get("stats", {}).get("nodes")
        if not n1 or n1 != n2:
            raise InstrError(f"uts runs report nodes {n1!r} and {n2!r}; expected the same tree twice")
        per_op = per_unit_from_two(i1, (n1 - 1) * v1, i2, (n1 - 1) * v2)
        details["nodes"] = n1
        details["tasks"] = ms[0].record.get("stats", {}).get("tasks")
        return {"unit": "sha1_op", "instr_per_unit": per_op, "instr_per_node": i1 / n1, "details": details}
    per_call = per_unit_from_two(i1, fib_calls(v1), i2, fib_calls(v2))
    return {"unit": "call", "instr_per_unit": per_call, "instr_per_node": None, "details": details}
