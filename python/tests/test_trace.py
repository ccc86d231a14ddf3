"""plait-bench trace view|summary|check on small hand-made traces (CSV and trace-event JSON)."""

import json

import pytest
from click.testing import CliRunner

from plait_bench.cli import main
from plait_bench.trace import CSV_HEADER, analyse, load

# Two workers, 10 us. Worker 0: task 1 [0, 4000) and task 3 [5000, 10000). Worker 1: task 2
# [1000, 3000), created by worker 0 (a moved task), then nothing: idle at the end from 3000.
CSV_TRACE = f"""{CSV_HEADER}
0,0,1,0,1
1000,1,2,0,1
3000,1,2,0,0
4000,0,1,0,0
5000,0,3,0,1
10000,0,3,0,0
"""


def _otherdata(workers, tasks, runtime="plait"):
    return {"format": "plait-trace-1", "runtime": runtime, "program": "hand-made", "t0_unix_ns": 1, "workers": workers,
            "counters": {"tasks": tasks}}


def _x(cat, tid, ts_ns, dur_ns, **args):
    e = {"ph": "X", "name": "idle" if cat == "idle" else "task", "cat": cat, "pid": 1, "tid": tid,
         "ts": ts_ns / 1000, "dur": dur_ns / 1000}
    if args:
        e["args"] = args
    return e


# Worker 0: task 1 [0, 10000) with task 3 nested in it [2000, 4000) and a join wait (idle inside the
# task) [5000, 8000). Worker 1: idle [0, 1000), steals task 2 from worker 0 at 1000, runs it
# [1000, 6000), idle afterwards.
JSON_TRACE = {
    "displayTimeUnit": "ns",
    "otherData": _otherdata(2, 3),
    "traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "worker 0"}},
        _x("task", 0, 0, 10000, task=1, creator=0, label="root"),
        _x("task", 0, 2000, 2000, task=3, creator=0),
        _x("idle", 0, 5000, 3000),
        _x("idle", 1, 0, 1000),
        {"ph": "s", "name": "steal", "cat": "steal", "pid": 1, "tid": 0, "ts": 0.5, "id": 1},
        {"ph": "i", "name": "steal", "cat": "steal", "pid": 1, "tid": 1, "ts": 1.0, "s": "t",
         "args": {"task": 2, "victim": 0}},
        _x("task", 1, 1000, 5000, task=2, creator=0),
        {"ph": "f", "name": "steal", "cat": "steal", "pid": 1, "tid": 1, "ts": 1.0, "bp": "e", "id": 1},
    ],
}


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def csv_trace(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(CSV_TRACE)
    return p


@pytest.fixture
def json_trace(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(JSON_TRACE))
    return p


def run(runner, *args):
    return runner.invoke(main, ["trace", *map(str, args)])


def test_view_renders_and_prints_utilisation(runner, csv_trace, tmp_path):
    out = tmp_path / "fig" / "t.png"
    r = run(runner, "view", csv_trace, "-o", out, "--zoom-ms", "0.005")
    assert r.exit_code == 0, r.output + r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 20000  # three panels with bars, not an empty canvas
    # worker 0: 9 us useful of 10; worker 1: 2 us, idle while work remained 1 us (before its task), 7 us at the end
    assert "worker   0:  90.0%" in r.stdout
    assert "worker   1:  20.0%  (1 tasks, useful 0.002 ms, idle while work remained 0.001 ms, idle at the end 0.007 ms)" in r.stdout
    assert "mean      :  55.0%" in r.stdout
    assert not list(out.parent.glob(".*tmp*"))


def test_view_pdf_and_default_output(runner, json_trace):
    r = run(runner, "view", json_trace)
    assert r.exit_code == 0, r.output + r.stderr
    png = json_trace.with_suffix(".png")
    assert png.is_file() and png.stat().st_size > 20000
    pdf = json_trace.with_suffix(".pdf")
    r = run(runner, "view", json_trace, "-o", pdf)
    assert r.exit_code == 0 and pdf.read_bytes()[:5] == b"%PDF-"


def test_json_analysis_nesting_idle_inside_tasks_and_steals(json_trace):
    tr = load(json_trace)
    assert tr.fmt == "json" and tr.runtime == "plait" and tr.nworkers == 2 and tr.ntasks == 3
    assert dict(zip(tr.task.tolist(), tr.depth.tolist())) == {1: 0, 3: 1, 2: 0}
    assert tr.problems == []
    a = analyse(tr)
    assert (a.start, a.stop) == (0, 10000)
    w0, w1 = a.workers
    # worker 0: in a task all the time, but 3 us waiting at the join: 7 us useful
    assert (w0.tasks, w0.useful_ns, w0.red_ns, w0.green_ns, w0.moved, w0.steals) == (2, 7000, 3000, 0, 0, 0)
    assert (w1.tasks, w1.useful_ns, w1.red_ns, w1.green_ns, w1.moved, w1.steals) == (1, 5000, 1000, 4000, 1, 1)
    assert w0.utilisation == pytest.approx(0.7) and w1.utilisation == pytest.approx(0.5)
    assert a.gaps[0] == (3000, 0, 5000)  # the join wait is the longest idle gap


def test_summary_numbers(runner, csv_trace):
    r = run(runner, "summary", csv_trace)
    assert r.exit_code == 0, r.output + r.stderr
    out = r.stdout
    assert "span 0.010 ms" in out and "2 workers" in out
    assert "tasks 3, steals n/a (CSV has no steal events), moved tasks 1" in out
    # 3 tasks / 10 us / 2 threads = 150,000 per thread per second; 1 moved -> 50,000
    assert "per thread per second: tasks 150,000, steals n/a, moved 50,000" in out
    lines = out.splitlines()
    row0 = next(ln for ln in lines if ln.split()[:1] == ["0"])
    row1 = next(ln for ln in lines if ln.split()[:1] == ["1"])
    assert row0.split() == ["0", "2", "n/a", "0", "200,000", "90.0", "0.001", "0.000"]
    assert row1.split() == ["1", "1", "n/a", "1", "100,000", "20.0", "0.001", "0.007"]
    assert "mean utilisation 55.0%" in out
    gaps = lines[lines.index("longest idle gaps while work remained:") + 1:]
    assert gaps == ["  worker   0 at      0.004 ms: 0.001 ms", "  worker   1 at      0.000 ms: 0.001 ms"]


def test_summary_json_counts_steals(runner, json_trace):
    r = run(runner, "summary", json_trace)
    assert r.exit_code == 0, r.output + r.stderr
    assert "tasks 3, steals 1, moved tasks 1" in r.stdout
    assert "mean utilisation 60.0%" in r.stdout


def test_check_good_files(runner, csv_trace, json_trace):
    for p in (csv_trace, json_trace):
        r = run(runner, "check", p, "--expect-tasks", 3)
        assert r.exit_code == 0, r.output + r.stderr
        assert "ok (" in r.stdout


@pytest.mark.parametrize("body, msg", [
    ("0,0,1,0,1\n5,0,1,0,0\n0,0,2,0,1\n", "never ends"),                    # begin without end
    ("0,0,1,0,1\n5,0,2,0,0\n", "ends while task 1 is innermost"),           # wrong end
    ("0,1,1,0,1\n9,1,1,0,0\n5,1,2,0,1\n6,1,2,0,0\n", "before the previous"),  # time goes back
    ("0,0,1,0,1\n1,0,1,0,0\n2,0,1,0,1\n3,0,1,0,0\n", "second time"),          # duplicate id
])
def test_check_finds_problems(runner, tmp_path, body, msg):
    p = tmp_path / "bad.csv"
    p.write_text(f"{CSV_HEADER}\n{body}")
    r = run(runner, "check", p)
    assert r.exit_code == 1
    assert msg in r.stderr


def test_check_task_count_and_unfinished_json(runner, tmp_path, json_trace):
    r = run(runner, "check", json_trace, "--expect-tasks", 4)
    assert r.exit_code == 1 and "3 tasks, expected 4" in r.stderr
    doc = json.loads(json_trace.read_text())
    doc["traceEvents"][1]["args"]["unfinished"] = 1
    doc["traceEvents"].append(_x("task", 1, 5000, 2000, task=9, creator=1))  # overlaps task 2 partially
    p = tmp_path / "u.json"
    p.write_text(json.dumps(doc))
    r = run(runner, "check", p)
    assert r.exit_code == 1
    assert "task 1 (begun at 0 ns) never ends" in r.stderr
    assert "task 9 overlaps task 2" in r.stderr
    assert "counters.tasks = 3 but 4" in r.stderr


@pytest.mark.parametrize("content, msg", [
    (CSV_TRACE[:-9], "truncated"),
    (CSV_TRACE + "1,2,3\n", "expected 5 comma-separated integers"),
    (json.dumps(JSON_TRACE)[:-40], "not valid JSON (truncated?)"),
    ('{"traceEvents": [], "otherData": {}}', "not a Plait trace"),
    ('{"foo": 1}', "no traceEvents"),
    ("hello, world\n", "not a Plait trace"),
    ("", "empty file"),
    (json.dumps({**JSON_TRACE, "traceEvents": [{"ph": "X", "cat": "task", "tid": 0, "ts": 1}]}), "lacks a field"),
    # values that do not fit the int64 arrays, or worker numbers no trace has
    (json.dumps({**JSON_TRACE, "traceEvents": [_x("task", 0, 1e303, 1000, task=1)]}), "ts 1e+300 is out of range"),
    (json.dumps({**JSON_TRACE, "traceEvents": [_x("task", 0, 0, 1e303, task=1)]}), "dur 1e+300 is out of range"),
    (json.dumps({**JSON_TRACE, "traceEvents": [_x("task", 10**9, 0, 1000, task=1)]}), "tid 1000000000 is out of range"),
    (json.dumps({**JSON_TRACE, "traceEvents": [_x("task", 0, 0, 1000, task=10**30)]}), "args.task"),
    (json.dumps({**JSON_TRACE, "otherData": _otherdata(10**12, 1)}), "otherData.workers"),
    (f"{CSV_HEADER}\n{10**20},0,1,0,1\n", "line 2: a value does not fit in 64 bits"),
    (f"{CSV_HEADER}\n0,70000000,1,0,1\n5,70000000,1,0,0\n", "executing_thread 70000000 is out of range"),
    ('{"otherData": {"format": "plait-trace-1", "workers": Infinity}, "traceEvents": []}', "malformed otherData"),
    ('{"a": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
])
@pytest.mark.parametrize("cmd", ["view", "summary", "check"])
def test_bad_files_exit_2_with_one_line(runner, tmp_path, content, msg, cmd):
    p = tmp_path / "bad.trace"
    p.write_text(content)
    r = run(runner, cmd, p)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("plait-bench: error:"), r.stderr
    assert msg in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert not (tmp_path / "bad.png").exists()


def test_worker_that_ran_no_task(runner, tmp_path):
    """A worker with idle events only (it never got a task) has an empty lane: all red, 0 %."""
    doc = {"otherData": _otherdata(2, 1),
           "traceEvents": [_x("task", 0, 0, 10000, task=1, creator=0), _x("idle", 1, 0, 10000)]}
    p = tmp_path / "idle1.json"
    p.write_text(json.dumps(doc))
    out = tmp_path / "idle1.png"
    r = run(runner, "view", p, "-o", out)
    assert r.exit_code == 0, r.output + r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "worker   1:   0.0%  (0 tasks, useful 0.000 ms, idle while work remained 0.010 ms" in r.stdout
    r = run(runner, "summary", p)
    assert r.exit_code == 0 and "mean utilisation 50.0%" in r.stdout
    assert run(runner, "check", p).exit_code == 0


def test_missing_file_and_bad_options(runner, tmp_path, csv_trace):
    r = run(runner, "summary", tmp_path / "nope.json")
    assert r.exit_code == 2 and "cannot read" in r.stderr and r.stderr.count("\n") == 1
    r = run(runner, "view", csv_trace, "-o", tmp_path / "x.svg")
    assert r.exit_code == 2 and "accepted: .png, .pdf" in r.stderr
    r = run(runner, "view", csv_trace, "--zoom-ms", "-1")
    assert r.exit_code == 2 and "positive" in r.stderr
