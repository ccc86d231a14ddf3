"""A stand-in for mpirun in the tests: `fake_mpirun.py -np N [options] PROGRAM ARGS...` runs PROGRAM
once with FAKE_MPI_RANKS=N (fake_bench.py's mpi runtime divides its time by it) and records the
environment it saw (FAKE_MPIRUN_LOG). Options it does not know stop it with exit status 2."""

import json
import os
import subprocess
import sys


def main() -> int:
    argv = sys.argv[1:]
    np_ = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-np":
            np_ = int(argv[i + 1])
            i += 2
        elif a == "--oversubscribe":
            i += 1
        elif a == "--bind-to":
            i += 2
        elif a.startswith("-"):
            print(f"fake_mpirun: unknown option {a}", file=sys.stderr)
            return 2
        else:
            break
    if np_ is None or i >= len(argv):
        print("fake_mpirun: usage: -np N PROGRAM ARGS", file=sys.stderr)
        return 2
    env = dict(os.environ, FAKE_MPI_RANKS=str(np_))
    log = os.environ.get("FAKE_MPIRUN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"np": np_, "argv": argv[i:], "yield": os.environ.get("OMPI_MCA_mpi_yield_when_idle")}) + "\n")
    return subprocess.run(argv[i:], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
