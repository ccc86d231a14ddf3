"""Runs one benchmark invocation the way the study says: pinned, with large stacks, under a timeout,
and turns what the binary printed (docs/bench-protocol.md) into a RunRecord."""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import subprocess
import time
from pathlib import Path

from .db import RunRecord, now
from .registry import MPI_ENV, MPI_RUNTIMES, HelpInfo, find_mpirun, omp_lib_of
from .study import Config, StudySettings

OMP_RUNTIMES = ("gomp", "libomp")
# The variable that binds a runtime's thread i to the i-th CPU of the process's affinity mask.
THREAD_PIN_ENV = {"plait": "PLAIT_PIN", "tbb": "PLAIT_BENCH_TBB_PIN"}
# Thread i on CPU i for the gomp binary on a preloaded OpenMP library (gomp@plait, gomp@libomp), by
# the library's own variable: libplait-omp honours PLAIT_PIN, libomp KMP_AFFINITY.
OMP_LIB_PIN_ENV = {"plait": ("PLAIT_PIN", "cores"), "libomp": ("KMP_AFFINITY", "granularity=fine,compact")}

STATUS_BY_EXIT = {1: "unverified", 2: "bad-input", 3: "error"}
FAILED_STATUSES = ("unverified", "bad-input", "error", "crashed", "timeout", "missing", "no-output")


def _ranges(cpus: list[int]) -> str:
    out, start, prev = [], None, None
    for c in cpus:
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            out.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = c
    if start is not None:
        out.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(out)


def placement(cfg: Config, settings: StudySettings) -> tuple[list[int] | None, dict[str, str], str]:
    """CPUs to bind the process to, extra environment, and a description of what was done."""
    env: dict[str, str] = {}
    notes: list[str] = []
    cpus: list[int] | None = None
    if settings.pin == "auto":
        try:
            avail = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            avail = []
        if avail and cfg.threads <= len(avail):
            cpus = avail[: cfg.threads]
            notes.append(f"cpus {_ranges(cpus)} (sched_setaffinity)")
        elif avail:
            notes.append(f"unpinned: {cfg.threads} threads > {len(avail)} usable CPUs (oversubscribed)")
        tag = omp_lib_of(cfg.series)
        if tag:
            # The gcc binary on a preloaded library: libgomp is still loaded (the binary's dependency)
            # and its constructor, which runs first, binds the initial thread to the first place when
            # it reads OMP_PROC_BIND — every thread the preloaded runtime then starts would inherit
            # that one CPU. So those runs bind through the library's own variable instead.
            if cpus is not None:
                var, val = OMP_LIB_PIN_ENV[tag]
                env[var] = val
                notes.append(f"{var}={val}")
        elif cfg.runtime in OMP_RUNTIMES:
            env["OMP_PROC_BIND"] = "close"
            env["OMP_PLACES"] = "cores" if cpus is None else "threads"
            notes.append(f"OMP_PROC_BIND=close OMP_PLACES={env['OMP_PLACES']}")
        elif cpus is not None and cfg.runtime in THREAD_PIN_ENV:
            # Each runtime's threads bound one per CPU by its own mechanism, as OpenMP's are above;
            # with only the process's affinity set, two of Plait's or TBB's threads could share a
            # CPU for milliseconds while OpenMP's could not. Oversubscribed runs stay unbound.
            var = THREAD_PIN_ENV[cfg.runtime]
            env[var] = "cores"
            notes.append(f"{var}=cores")
    else:
        notes.append("unpinned (pin = none)")
    if cfg.runtime in MPI_RUNTIMES:
        env.update(MPI_ENV)
        ranks, per_rank = cfg.mpi_shape
        notes.append(f"mpirun -np {ranks} --bind-to none, {per_rank} thread(s) per rank; "
                     + " ".join(f"{k}={v}" for k, v in MPI_ENV.items()))
    if cfg.runtime in OMP_RUNTIMES and settings.omp_stacksize:
        env["OMP_STACKSIZE"] = settings.omp_stacksize
    if settings.stack == "unlimited":
        notes.append("ulimit -s unlimited")
    elif settings.stack != "inherit":
        notes.append(f"ulimit -s {settings.stack}")
    if "OMP_STACKSIZE" in env:
        notes.append(f"OMP_STACKSIZE={env['OMP_STACKSIZE']}")
    return cpus, env, "; ".join(notes)


def _preexec(cpus: list[int] | None, stack: str):
    def fn() -> None:
        if stack != "inherit":
            soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
            want = resource.RLIM_INFINITY if stack == "unlimited" else int(stack) * 1024
            if hard != resource.RLIM_INFINITY and (want == resource.RLIM_INFINITY or want > hard):
                want = hard
            try:
                resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
            except (ValueError, OSError):
                pass
        if cpus:
            try:
                os.sched_setaffinity(0, cpus)
            except OSError:
                pass

    return fn


def _problem_line(stderr: str) -> str | None:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "error" in ln.lower():
            return ln
    return lines[-1] if lines else None


def command_for(cfg: Config, exe: Path, settings: StudySettings, help_info: HelpInfo | None) -> list[str]:
    if cfg.runtime in MPI_RUNTIMES:
        # R ranks of P/R threads each; the placement's CPU mask (the first P CPUs, inherited by every
        # rank) binds them, so Open MPI's own binding is off.
        mpirun = find_mpirun()[0] or "mpirun"
        ranks, per_rank = cfg.mpi_shape
        return [
            mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", str(exe),
            *cfg.args(help_info), "--threads", str(per_rank), "--reps", "1",
            "--warmup", str(settings.binary_warmup), "--quiet",
        ]
    return [
        str(exe), *cfg.args(help_info), "--threads", str(cfg.threads), "--reps", "1",
        "--warmup", str(settings.binary_warmup), "--quiet",
    ]


def missing_record(cfg: Config, exe: Path, settings: StudySettings) -> RunRecord:
    cmd = command_for(cfg, exe, settings, None)
    return RunRecord(
        status="missing", exit_code=None, time_s=None, wall_s=None, verified=False, check_text=None,
        message=f"benchmark binary {exe} does not exist (build it: make build)", stderr_tail=None, stats={},
        echo_params=None, command=shlex.join(cmd), binary=str(exe), pinning="", env={}, started_at=now(),
    )


def execute(
    cfg: Config,
    exe: Path,
    settings: StudySettings,
    extra_env: dict[str, str],
    help_info: HelpInfo | None = None,
    omp_library: tuple[str | None, bool] = (None, False),
) -> RunRecord:
    """Run the binary once (--reps 1) and classify the outcome. Never raises for a failing binary.

    ``omp_library``: (what the name of the OpenMP library the run reports must contain, whether the
    run must report one at all). A run that reports another library (a preload that did not take, or
    a stray LD_PRELOAD in the environment) is an error, never a number of the wrong series."""
    cpus, penv, pinning = placement(cfg, settings)
    env = dict(os.environ)
    env.update(penv)
    env.update(extra_env)
    run_env = {**penv, **extra_env}
    cmd = command_for(cfg, exe, settings, help_info)
    started = now()
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=_preexec(cpus, settings.stack), start_new_session=True,
        )
    except OSError as e:
        return RunRecord(
            status="error", exit_code=None, time_s=None, wall_s=None, verified=False, check_text=None,
            message=f"could not start {exe}: {e}", stderr_tail=None, stats={}, echo_params=None,
            command=shlex.join(cmd), binary=str(exe), pinning=pinning, env=run_env, started_at=started,
        )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=cfg.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        out, err = proc.communicate()
    except BaseException:  # KeyboardInterrupt: take the child down with us, then let it propagate
        _kill(proc)
        proc.communicate()
        raise
    wall = time.perf_counter() - t0
    rc = proc.returncode

    records = []
    bad_json = None
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            bad_json = f"malformed JSON line on stdout: {e}"
    rec = records[-1] if records else {}
    stats = rec.get("stats", {}) if isinstance(rec.get("stats"), dict) else {}
    time_s = rec.get("time_s") if isinstance(rec.get("time_s"), (int, float)) else None
    verified = bool(rec.get("verified")) if rec else False
    problem = _problem_line(err)

    if timed_out:
        status, message = "timeout", f"timed out after {cfg.timeout_s:g} s (killed)"
    elif rc < 0:
        try:
            sname = signal.Signals(-rc).name
        except ValueError:
            sname = f"signal {-rc}"
        status = "crashed"
        message = f"killed by {sname}" + (f": {problem}" if problem else "")
    elif rc == 0:
        if not records:
            status, message = "no-output", bad_json or "exit status 0 but no JSON line on stdout"
        elif not verified:
            status, message = "unverified", f"JSON line has verified={rec.get('verified')!r}: {rec.get('check')}"
        elif time_s is None:
            status, message = "no-output", "JSON line has no numeric time_s"
        elif (lib_problem := _omp_library_problem(rec, *omp_library)) is not None:
            status, message = "error", lib_problem
        elif (shape_problem := _rank_shape_problem(cfg, stats)) is not None:
            status, message = "error", shape_problem
        else:
            status, message = "ok", None
    else:
        status = STATUS_BY_EXIT.get(rc, "error")
        message = problem or f"exit status {rc} and nothing on stderr"
        if rc not in STATUS_BY_EXIT:
            message = f"exit status {rc}: {message}"
    if status != "ok":
        verified = False
    return RunRecord(
        status=status, exit_code=rc, time_s=time_s if status == "ok" else None, wall_s=wall, verified=verified,
        check_text=rec.get("check") if rec else None, message=message, stderr_tail=err[-2000:] if err else None,
        stats=stats if status == "ok" else stats, echo_params=rec.get("params") if rec else None,
        command=shlex.join(cmd), binary=str(exe), pinning=pinning, env=run_env, started_at=started,
    )


def _omp_library_problem(rec: dict, expect: str | None, required: bool) -> str | None:
    """Why the OpenMP library a run reports is not the one its series stands for, or None."""
    if expect is None:
        return None
    lib = rec.get("omp_library")
    if not isinstance(lib, str) or not lib:
        return (f"the run reports no OpenMP library (omp_library), so it cannot show it ran on {expect}"
                if required else None)
    if expect not in Path(lib).name:
        return f"the run's OpenMP library is {lib}, not {expect} (LD_PRELOAD not in effect, or another one set)"
    return None


def _rank_shape_problem(cfg: Config, stats: dict) -> str | None:
    """Why an MPI run's reported ranks (and threads per rank, where it says) are not the ones asked
    for, or None: a launcher that started fewer processes must not give a number of the wrong shape."""
    if cfg.runtime not in MPI_RUNTIMES:
        return None
    for name, expect in zip(("ranks", "threads_per_rank"), cfg.mpi_shape):
        got = stats.get(name)
        if isinstance(got, (int, float)) and not isinstance(got, bool) and got != expect:
            return f"the run reports {name} = {got:g}, not the {expect} asked for"
    return None


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
