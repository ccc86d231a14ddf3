"""Machine facts (CPU, cores, kernel, compilers, runtime libraries) and the git commit."""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path


def _run(cmd: list[str], cwd: Path | None = None) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=10, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if cp.returncode != 0:
        return None
    return cp.stdout.strip()


def _first_line(s: str | None) -> str | None:
    return s.splitlines()[0].strip() if s else None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def physical_cores() -> int | None:
    try:
        pairs = set()
        phys = core = None
        for line in Path("/proc/cpuinfo").read_text().splitlines() + [""]:
            if line.startswith("physical id"):
                phys = line.split(":", 1)[1].strip()
            elif line.startswith("core id"):
                core = line.split(":", 1)[1].strip()
            elif not line.strip():
                if core is not None:
                    pairs.add((phys, core))
                phys = core = None
        return len(pairs) or None
    except OSError:
        return None


def _dpkg_version(pkg: str) -> str | None:
    out = _run(["dpkg-query", "-W", "-f=${Version}", pkg])
    return out or None


def _header_define(paths: list[str], names: list[str]) -> str | None:
    for p in paths:
        try:
            text = Path(p).read_text(errors="replace")
        except OSError:
            continue
        vals = []
        for n in names:
            m = re.search(rf"#\s*define\s+{n}\s+(\d+)", text)
            if not m:
                break
            vals.append(m.group(1))
        if len(vals) == len(names):
            return ".".join(vals)
    return None


def tbb_version() -> str | None:
    v = _dpkg_version("libtbb12") or _dpkg_version("libtbb-dev")
    if v:
        return v
    return _header_define(
        ["/usr/include/oneapi/tbb/version.h", "/usr/local/include/oneapi/tbb/version.h"],
        ["TBB_VERSION_MAJOR", "TBB_VERSION_MINOR"],
    )


def libomp_version() -> str | None:
    for pkg in ("libomp5-16", "libomp-16-dev", "libomp5"):
        v = _dpkg_version(pkg)
        if v:
            return f"{pkg} {v}"
    return None


def libgomp_version() -> str | None:
    v = _dpkg_version("libgomp1")
    return f"libgomp1 {v}" if v else None


def compiler_version(cmd: str) -> str | None:
    return _first_line(_run([cmd, "--version"]))


def machine_facts() -> dict:
    """Everything a figure caption or a later comparison needs to know about where runs happened."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    facts = {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "physical_cores": physical_cores(),
        "usable_cpus": affinity,
        "kernel": platform.release(),
        "os": _first_line(_run(["sh", "-c", ". /etc/os-release && echo \"$PRETTY_NAME\""])) or platform.platform(),
        "gcc": compiler_version("g++") or compiler_version("gcc"),
        "clang": compiler_version("clang++-16") or compiler_version("clang-16") or compiler_version("clang"),
        "libtbb": tbb_version(),
        "libomp": libomp_version(),
        "libgomp": libgomp_version(),
        "valgrind": _first_line(_run(["valgrind", "--version"])),
        "python": platform.python_version(),
    }
    try:
        mem = Path("/proc/meminfo").read_text().splitlines()[0]
        facts["mem_total_kib"] = int(mem.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return facts


def machine_line(f: dict) -> str:
    """Short description for captions: 'AMD EPYC, 2 CPUs, Linux 6.1'."""
    cpus = f.get("usable_cpus") or f.get("logical_cpus")
    return f"{f.get('cpu_model', '?')}, {cpus} CPUs, Linux {f.get('kernel', '?')}"


def git_state(root: Path) -> dict:
    """Commit (or '(no commit)'), short form, dirty flag and describe string."""
    commit = _run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root)
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root)
    dirty = bool(status) if status is not None else None
    if not commit:
        return {"commit": "(no commit)", "short": "(no commit)", "dirty": dirty}
    short = commit[:10]
    return {"commit": commit, "short": short + ("+dirty" if dirty else ""), "dirty": dirty}
