"""A stand-in benchmark binary that follows docs/bench-protocol.md, for tests that must not depend on the
C++ build. Invoked as ``fake_bench.py --as <kernel>-<runtime> [options]``.

Times are computed, not measured (no sleeping), so tests are fast and their numbers known. Failure
injection through FAKE_BENCH_FAIL="runtime:threads:mode[,...]" with mode crash | unverified | hang |
error | garbage; FAKE_BENCH_SLEEP=seconds sleeps in every run (for interrupt tests).
"""

import json
import os
import signal
import sys
import time

KERNEL_OPTS = {
    "fib": [("n", "int", "fib argument [0..50, default 20]"), ("cutoff", "int", "serial below [0..50, default 0]")],
    "uts": [
        ("tree", "string", "named sample tree [T1|T5|T2|T3|T4|T1L|T2L|T3L] (default '')"),
        ("input", "string", "BOTS input file (default '')"),
        ("type", "string", "tree type [0|1|2|3|binomial|geometric|hybrid|balanced] (default '0')", "t"),
        ("b0", "number", "root branching factor", "b"), ("seed", "int", "root seed", "r"),
        ("shape", "string", "shape", "a"), ("depth", "int", "depth", "d"), ("q", "number", "probability", "q"),
        ("m", "int", "children", "m"), ("f", "number", "fraction", "f"),
        ("g", "int", "granularity [1..1000000, default 1]", "g"),
    ],
}
# study-001 kernels (docs/kernels.md): a size class and a cut-off class; sparselu has no cut-off
KERNEL_OPTS["nqueens"] = [("size", "string", "problem class [ci|test|small|medium] (default 'ci')"),
                          ("cutoff", "string", "task depth cut-off: coarse, fine or a depth (default 'coarse')")]
KERNEL_OPTS["sparselu"] = [("size", "string", "problem class [ci|test|small|medium] (default 'ci')")]
KERNEL_OPTS["health"] = [("size", "string", "input class [ci|test|small|medium|large] (default 'ci')"),
                         ("cutoff", "string", "village depth cut-off: coarse, fine or a depth (default 'coarse')")]
# study 002 and 003 kernels, with a model each (time_of): a bathtub over the grain, Task-2 ahead of Loop
KERNEL_OPTS["mandel"] = [("size", "string", "preset [test|small|full] (default 'test')"),
                         ("variant", "string", "how the loop becomes tasks (default 'puretask-single')"),
                         ("grain", "int", "iterations per task [1..1099511627776, default 1]"),
                         ("num-tasks", "int", "num_tasks [0..1099511627776, default 0]"),
                         ("chunk", "int", "chunk [1..1099511627776, default 1]")]
KERNEL_OPTS["amr"] = [("preset", "string", "preset [default|small|study003] (default 'default')"),
                      ("num_tsteps", "int", "timesteps [1..1000000, default 40]"),
                      ("variant", "string", "variant [loop|loop-dyn|task-1|task-2] (default 'loop')")]
KERNEL_OPTS["steal"] = [("loop", "int", "leaf loop [0..1099511627776, default 20000]"),
                        ("seconds", "number", "target length [0.001..3600, default 0.25]")]
FLAGS = {"steal": ["auto"], "uts-mpi": ["hybrid"]}
# the fake's model of study 001 (seconds of a serial run, per-runtime factors at one thread)
BOTS_T = {"nqueens": 0.2, "sparselu": 0.1, "health": 0.15}
ONE_THREAD = {"coarse": {"serial": 1.0, "plait": 1.02, "tbb": 1.04, "gomp": 1.10, "libomp": 1.08},
              "fine": {"serial": 1.0, "plait": 1.30, "tbb": 1.60, "gomp": 3.00, "libomp": 2.00}}
STEAL_NS = {"plait": 500.0, "tbb": 900.0, "gomp": 2000.0, "libomp": 1500.0}
PLAIT_EXTRA = {"uts": [("variant", "string", "task pattern [spawn|group] (default 'spawn')")],
               "mandel": [("steal", "string", "steal policy: one, chunk:K, half, adaptive (default '')")]}
MANDEL_PIXELS = 262144
SPEED = {"serial": 1.0, "plait": 1.05, "tbb": 1.1, "gomp": 1.6, "libomp": 1.25, "mpi": 1.08}


def main() -> int:
    argv = sys.argv[1:]
    assert argv[0] == "--as"
    name = argv[1]
    argv = argv[2:]
    kernel, runtime = name.rsplit("-", 1)
    opts = list(KERNEL_OPTS[kernel]) + (PLAIT_EXTRA.get(kernel, []) if runtime == "plait" else [])
    opts = [o if len(o) == 4 else (*o, None) for o in opts]
    flags = set(FLAGS.get(kernel, [])) | set(FLAGS.get(name, []))
    names = {o[0] for o in opts} | {"threads", "reps", "warmup", "quiet"} | flags
    alias = {o[3]: o[0] for o in opts if o[3]}
    if "--help" in argv:
        print(f"usage: {name} [options]")
        print(f"  {'--threads, -n <int>':28s} worker threads [1..4096, default 1]")
        print(f"  {'--reps <int>':28s} measured repetitions [1..1000000, default 1]")
        print(f"  {'--warmup <int>':28s} unmeasured repetitions [0..1000, default 0]")
        print(f"  {'--quiet':28s} no human summary on stderr")
        for n, kind, h, al in opts:
            sp = f"--{n}" + (f", -{al}" if al else "")
            print(f"  {sp + ' <' + kind + '>':28s} {h}")
        for f in sorted(flags):
            print(f"  {'--' + f:28s} a flag without a value")
        return 0
    vals = {"threads": "1", "reps": "1", "warmup": "0"}
    quiet = False
    i = 0
    while i < len(argv):
        a = argv[i]
        key = a[2:] if a.startswith("--") else alias.get(a[1:], "?" + a)
        if a == "-n":
            key = "threads"
        if key not in names:
            print(f"{name}: error: unknown option '{a}'; accepted: {', '.join(sorted(names))}", file=sys.stderr)
            return 2
        if key == "quiet":
            quiet = True
            i += 1
            continue
        if key in flags:
            vals[key] = "true"
            i += 1
            continue
        if i + 1 >= len(argv):
            print(f"{name}: error: option --{key} needs a value", file=sys.stderr)
            return 2
        vals[key] = argv[i + 1]
        i += 2
    threads = int(vals.pop("threads"))
    reps = int(vals.pop("reps"))
    vals.pop("warmup")
    if runtime == "serial" and threads != 1:
        print(f"{name}: error: the serial build runs on one thread; --threads must be 1, not {threads}", file=sys.stderr)
        return 2

    if os.environ.get("FAKE_BENCH_SLEEP"):
        time.sleep(float(os.environ["FAKE_BENCH_SLEEP"]))
    for rule in filter(None, os.environ.get("FAKE_BENCH_FAIL", "").split(",")):
        rt, th, mode = rule.split(":")
        if rt == runtime and (th == "*" or int(th) == threads):
            if mode == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if mode == "unverified":
                print(f"{name}: error: verification failed: nodes = 41 (expected 42)", file=sys.stderr)
                return 1
            if mode == "hang":
                time.sleep(3600)
            if mode == "error":
                print(f"{name}: error: out of memory", file=sys.stderr)
                return 3
            if mode == "garbage":
                print("{not json")
                return 0

    params = {o[0]: vals.get(o[0], "") for o in opts}
    stats: dict = {}
    pre = "" if os.environ.get("FAKE_BENCH_IGNORE_PRELOAD") else os.environ.get("LD_PRELOAD", "").split(":")[0]
    # an OpenMP binary on a preloaded library runs at that library's cost
    rt_model = ("plait" if "libplait-omp" in pre else "libomp") if runtime in ("gomp", "libomp") and pre else runtime
    if kernel == "fib":
        n = int(vals.get("n", 20))
        a, b = 0, 1
        for _ in range(n + 1):
            a, b = b, a + b
        calls = 2 * a - 1
        per = {"serial": 2e-9, "plait": 8e-9, "tbb": 20e-9, "gomp": 150e-9, "libomp": 60e-9}[runtime]
        pre = "" if os.environ.get("FAKE_BENCH_IGNORE_PRELOAD") else os.environ.get("LD_PRELOAD", "")
        if runtime == "gomp" and pre:  # the gomp binary on a preloaded library: that library's cost
            per = 12e-9 if "libplait-omp" in pre.split(":")[0] else 60e-9
        elif runtime == "libomp" and "libplait-omp" in pre.split(":")[0]:  # the clang binary on libplait-omp
            per = 9e-9
        t = calls * per / (threads ** 0.9)
        stats = {"result": a, "tasks": 0 if runtime == "serial" else calls, "steals": 3 * (threads - 1),
                 "moved_tasks": 5 * (threads - 1), "ns_per_task": t * 1e9 * threads / calls}
        check = f"fib({n}) = {a}"
    elif kernel == "steal":
        if vals.get("auto") != "true":
            print(f"{name}: error: this fake needs --auto", file=sys.stderr)
            return 2
        ns = STEAL_NS[runtime]
        t = 0.25
        stats = {"steal_cost_ns": ns, "steal_cost_cycles": ns * 3.0, "tsc_ghz": 3.0, "auto_converged": 1,
                 "tasks": 1000, "steals": 1000, "moved_tasks": 1000}
        check = "tree checksum ok"
    elif kernel == "mandel":
        grain = int(vals.get("grain", 1))
        tasks = -(-MANDEL_PIXELS // grain)
        per_task = {"serial": 0.0, "plait": 5e-8, "tbb": 8e-8, "gomp": 4e-7, "libomp": 2e-7}[runtime]
        work = 0.05
        if runtime == "serial":
            t = work
        else:  # overhead per task, and the last tasks' imbalance: fewer tasks than workers idle some
            busy = min(tasks, threads)
            t = work / busy + tasks * per_task / threads
            if runtime == "plait" and vals.get("steal") == "half":
                t *= 0.97
        stats = {"pixels": MANDEL_PIXELS, "tasks": 0 if runtime == "serial" else tasks}
        check = "image checksum = serial"
    elif kernel == "amr":
        variant = vals.get("variant", "loop")
        t = 1.0 if runtime == "serial" else 1.02 / (threads ** (0.95 if variant == "task-2" else 0.8))
        stats = {"blocks": 3000}
        check = "checksums = serial"
    elif kernel in BOTS_T:
        cut = vals.get("cutoff", "coarse") if kernel != "sparselu" else "coarse"
        base = BOTS_T[kernel] * (1.5 if cut == "fine" else 1.0)
        t = base * ONE_THREAD[cut][rt_model] / (threads ** 0.95)
        stats = {"tasks": 0 if runtime == "serial" else (1000 if cut == "coarse" else 100000)}
        check = "ok"
    else:
        tree = vals.get("tree", "")
        nodes = 4112897 if tree == "T3" else int(float(vals.get("b0", 2000))) * 50 + 1
        g = int(vals.get("g", 1))
        m = int(vals.get("m", 8 if tree in ("", "T3") else 5))
        tasks = (nodes - 1) // 5
        work = nodes * g * 2e-7 * SPEED[rt_model]
        overhead = 0 if runtime == "serial" else tasks * 1e-6 * SPEED[rt_model] * (threads - 1)
        t = work / threads + overhead / threads
        moved = 0 if runtime == "serial" else int(tasks * 0.01 * (threads - 1) * SPEED[runtime])
        stats = {"nodes": nodes, "depth": 100, "leaves": nodes - tasks, "tasks": tasks, "moved_tasks": moved,
                 "steals": moved, "moved_per_thread_per_s": moved / threads / t, "nodes_per_s": nodes / t}
        check = f"nodes = {nodes} (m={m})"
    if runtime == "mpi":  # run by fake_mpirun.py: ranks of --threads workers each (uts: with --hybrid)
        ranks = int(os.environ.get("FAKE_MPI_RANKS", "1"))
        if threads != 1 and kernel == "uts" and vals.get("hybrid") != "true":
            print(f"{name}: error: --threads {threads}: one thread per rank unless --hybrid; accepted: 1",
                  file=sys.stderr)
            return 2
        # the model: ranks cost 10 % over threads of one process (what crosses between them)
        t = t / ranks * (1.1 if ranks > 1 else 1.0)
        stats["ranks"] = ranks
        stats["threads_per_rank"] = threads
        if os.environ.get("FAKE_MPI_WRONG_RANKS"):
            stats["ranks"] = ranks + 1
    # OpenMP binaries report the library that answers omp_get_num_threads (docs/bench-protocol.md):
    # the first preloaded one, as the real loader would bind it, unless FAKE_BENCH_IGNORE_PRELOAD
    # plays a preload that did not take.
    omp_lib = None
    if runtime in ("gomp", "libomp"):
        omp_lib = "/usr/lib/x86_64-linux-gnu/" + ("libgomp.so.1" if runtime == "gomp" else "libomp.so.5")
        pre = os.environ.get("LD_PRELOAD", "")
        if pre and not os.environ.get("FAKE_BENCH_IGNORE_PRELOAD"):
            omp_lib = pre.split(":")[0]
    if os.environ.get("PLAIT_TRACE") and runtime != "serial":
        write_trace(os.environ["PLAIT_TRACE"], runtime, threads, dense=vals.get("variant") != "loop")
    for k in range(reps):
        rec = {"kernel": kernel, "runtime": runtime, "threads": threads, "rep": k, "params": params,
               "time_s": round(t, 9), "verified": True, "check": check, "stats": stats}
        if omp_lib:
            rec["omp_library"] = omp_lib
        print(json.dumps(rec))
    if not quiet:
        print(f"{name} threads={threads} median={t:.6f} s (verified)", file=sys.stderr)
    return 0


def write_trace(path: str, runtime: str, threads: int, dense: bool) -> None:
    """A small trace in Plait's JSON format (docs/tracing.md): 20 tasks per worker of 100 µs each,
    back to back (dense) or with 100 µs gaps (utilisation one half)."""
    events = []
    tid = 1
    for w in range(threads):
        ts = 0.0
        for _ in range(20):
            events.append({"ph": "X", "cat": "task", "name": "task", "pid": 1, "tid": w, "ts": ts, "dur": 100.0,
                           "args": {"task": tid, "creator": 0}})
            tid += 1
            ts += 100.0 if dense else 200.0
    doc = {"displayTimeUnit": "ns", "otherData": {"format": "plait-trace-1", "runtime": runtime, "program": "fake",
                                                  "t0_unix_ns": 0, "workers": threads},
           "traceEvents": events}
    with open(path, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    sys.exit(main())
