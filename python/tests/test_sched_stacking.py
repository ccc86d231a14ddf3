"""tools/sched_stacking.py: waits for a CPU, charged to whoever took it."""
import importlib.util
import sys
from pathlib import Path

import pytest

_TOOL = Path(__file__).resolve().parents[2] / "tools" / "sched_stacking.py"
_spec = importlib.util.spec_from_file_location("sched_stacking", _TOOL)
ss = importlib.util.module_from_spec(_spec)
sys.modules["sched_stacking"] = ss  # dataclasses look their module up there
_spec.loader.exec_module(ss)


def sw(t, cpu, prev, prev_comm, state, nxt, next_comm, pid=100):
    who = f"{pid}/{prev}" if pid is not None else str(prev)
    return (f"  {prev_comm} {who} [{cpu:03d}] {t:.6f}: sched:sched_switch: prev_comm={prev_comm} "
            f"prev_pid={prev} prev_prio=120 prev_state={state} ==> next_comm={next_comm} next_pid={nxt} next_prio=120")


def test_charges_waits_to_the_thread_that_took_the_cpu():
    b = "bench"
    lines = [
        # main (100) is runnable-preempted by worker 101 for 2 ms
        sw(1.000, 0, 100, b, "R", 101, b),
        sw(1.002, 0, 101, b, "R", 100, b),  # worker 101 preempted by main, waits 3 ms ...
        sw(1.005, 0, 100, b, "S", 101, b),  # ... main blocks: 101 runs again
        # worker 102 waits 1 ms behind a kernel thread
        sw(1.010, 1, 102, b, "R", 7, "kworker/1:1"),
        sw(1.011, 1, 7, "kworker/1:1", "S", 102, b),
        # workers 101 and 102 share CPU 1: 102 waits 4 ms behind 101
        sw(1.020, 1, 102, b, "R", 101, b),
        sw(1.024, 1, 101, b, "R", 102, b),
        # a thread that blocks (S) does not wait
        sw(1.030, 1, 102, b, "S", 0, "swapper/1"),
        sw(1.040, 1, 0, "swapper/1", "R", 102, b),
    ]
    (p,) = ss.analyse(lines, b)
    assert p.main == 100
    assert p.main_runnable == pytest.approx(2.0)
    assert p.workers_behind_main == pytest.approx(3.0)
    assert p.workers_behind_others == pytest.approx(1.0)
    # 101, switched out runnable at 1.024, never runs again in the trace: an open wait is not counted
    assert p.workers_behind_workers == pytest.approx(4.0)


def test_processes_are_thread_groups_when_perf_prints_pids():
    b = "bench"
    lines = [
        sw(2.000, 0, 201, b, "R", 301, b, pid=200),
        sw(2.001, 0, 301, b, "R", 201, b, pid=300),
        sw(2.003, 0, 200, b, "S", 0, "swapper/0", pid=200),
        sw(2.004, 0, 300, b, "S", 0, "swapper/0", pid=300),
    ]
    procs = {p.main: p for p in ss.analyse(lines, b)}
    assert set(procs) == {200, 300}
    # 201 (a worker of 200) waited 1 ms behind 301, a thread of another process of the same program
    assert procs[200].workers_behind_others == pytest.approx(1.0)
    assert procs[200].workers_behind_workers == 0.0


def test_long_names_are_matched_as_the_kernel_truncates_them():
    name = "sparselu-plait-extra"  # comm holds the first 15 characters
    lines = [sw(3.0, 0, 11, name[:15], "R", 12, name[:15], pid=11), sw(3.002, 0, 12, name[:15], "R", 11, name[:15], pid=11)]
    (p,) = ss.analyse(lines, name)
    assert p.main == 11 and p.main_runnable == pytest.approx(2.0)


def test_text_without_pids_is_refused_rather_than_guessed(tmp_path, capsys):
    # Two processes started back to back have consecutive tids (40, 41 and 42, 43): without the
    # pid column nothing tells them apart.
    lines = [sw(4.0, 0, 41, "bench", "R", 43, "bench", pid=None), sw(4.001, 0, 43, "bench", "R", 41, "bench", pid=None)]
    with pytest.raises(ValueError, match="perf script -F \\+pid"):
        ss.analyse(lines, "bench")
    f = tmp_path / "p.txt"
    f.write_text("\n".join(lines) + "\n")
    assert ss.main(["x", str(f), "bench"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "-F +pid" in err


def test_bad_input_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "p.txt"
    bad.write_text("  bench 5 [000] 1.0: sched:sched_switch: garbage\n")
    assert ss.main(["x", str(bad), "bench"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a sched_switch line" in err
    assert ss.main(["x", str(tmp_path / "missing.txt"), "bench"]) == 2
    assert "cannot read" in capsys.readouterr().err
    empty = tmp_path / "e.txt"
    empty.write_text("")
    assert ss.main(["x", str(empty), "bench"]) == 2
    assert "no sched_switch events of 'bench'" in capsys.readouterr().err
