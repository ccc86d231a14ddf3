"""Study 003 report section (plait_bench.amr, plait_bench.report_amr): normalisation to each runtime's
loop variant, the task-2 vs loop verdicts, Fig. 2 PNGs, and the hook in write_report, from hand-made runs."""

from __future__ import annotations

import json

import pytest

from plait_bench import db
from plait_bench.amr import bars, has_amr, task2_vs_loop, utilisation
from plait_bench.analysis import Dataset, Run
from plait_bench.report import write_report
from plait_bench.report_amr import amr_section

_id = [0]
FIG2 = {"preset": "study003", "num_tsteps": "14"}
SMALL = {"preset": "study003", "nx": "8", "ny": "8", "nz": "8", "num_tsteps": "14"}


def run(runtime, time_s, threads=2, case=None, variant=None, status="ok", stats=None, sweep=True):
    """A measured amr run. sweep=True: variant is a shared parameter (studies/amr.toml's `sweep`), so
    it is in base and the series is the bare runtime; sweep=False: a runtime-only parameter."""
    _id[0] += 1
    base = dict(case or FIG2)
    params = dict(base)
    series = runtime
    if variant is not None:
        params["variant"] = variant
        if sweep:
            base["variant"] = variant
        else:
            series = f"{runtime}[variant={variant}]"
    return Run(id=_id[0], kernel="amr", runtime=runtime, series=series,
               threads=1 if runtime == "serial" else threads, params=params, base=base, round=1,
               kind="measured", status=status, time_s=time_s, stats=dict(stats or {}), message=None)


def fig2_runs(sweep=True):
    rs = [run("serial", t, sweep=sweep) for t in (8.0, 8.2, 7.9)]
    times = {
        # runtime: variant -> three times (median in the middle)
        "plait": {"loop": (4.0, 4.4, 4.2), "loop-dyn": (4.1, 4.3, 4.2), "task-1": (3.9, 4.1, 4.0),
                  "task-2": (3.6, 3.8, 3.7)},
        "gomp": {"loop": (5.0, 5.0, 5.0), "loop-dyn": (5.5, 5.5, 5.5), "task-1": (5.2, 5.4, 5.3),
                 "task-2": (5.1, 4.9, 5.2)},
    }
    for P, scale in ((1, 2.0), (2, 1.0)):
        for rt, vs in times.items():
            for v, ts in vs.items():
                rs += [run(rt, t * scale, threads=P, variant=v, sweep=sweep) for t in ts]
    return rs


def by_key(bs):
    return {(b.line, b.variant, b.threads): b for b in bs}


@pytest.mark.parametrize("sweep", [True, False])
def test_normalised_to_same_runtime_loop(sweep):
    ds = Dataset(fig2_runs(sweep))
    assert has_amr(ds)
    b = by_key(bars(ds))
    assert {k[0] for k in b} == {"plait", "gomp"}  # serial is not a bar, the variant is not in the label
    t2 = b[("plait", "task-2", 2)]
    assert t2.time.median == pytest.approx(3.7)
    assert t2.ref.median == pytest.approx(4.2)
    assert t2.norm.median == pytest.approx(3.7 / 4.2)
    assert t2.norm.lo == pytest.approx(3.6 / 4.2)
    assert t2.norm.hi == pytest.approx(3.8 / 4.2)
    lp = b[("plait", "loop", 2)]
    assert lp.norm.median == pytest.approx(1.0)
    assert (lp.norm.lo, lp.norm.hi) == (pytest.approx(4.0 / 4.2), pytest.approx(4.4 / 4.2))
    # each runtime against its own loop, at its own thread count
    assert b[("gomp", "loop-dyn", 2)].norm.median == pytest.approx(1.1)
    assert b[("plait", "task-1", 1)].norm.median == pytest.approx(4.0 / 4.2)
    assert b[("plait", "task-1", 1)].time.median == pytest.approx(8.0)
    # speedup over the case's serial median (8.0), per run
    assert t2.speedup.median == pytest.approx(8.0 / 3.7)
    assert b[("gomp", "loop", 1)].speedup.median == pytest.approx(8.0 / 10.0)


def test_cases_are_separate_and_missing_loop_gives_no_norm():
    rs = fig2_runs()
    rs += [run("plait", 2.0, case=SMALL, variant="loop"), run("plait", 1.0, case=SMALL, variant="task-2"),
           run("serial", 3.0, case=SMALL)]
    rs += [run("libomp", 1.5, case=SMALL, variant="task-2")]  # libomp has no loop run in this case
    bs = bars(Dataset(rs))
    small = {(b.line, b.variant): b for b in bs if dict(b.case).get("nx") == "8"}
    assert small[("plait", "task-2")].norm.median == pytest.approx(0.5)
    assert small[("plait", "task-2")].speedup.median == pytest.approx(3.0)
    assert small[("libomp", "task-2")].norm is None
    assert small[("libomp", "task-2")].time.median == pytest.approx(1.5)
    fig2 = by_key(b for b in bs if "nx" not in dict(b.case))
    assert fig2[("plait", "task-2", 2)].norm.median == pytest.approx(3.7 / 4.2)  # unchanged by the other case


def test_task2_vs_loop_verdicts():
    vs = {(v.line, v.threads): v for v in task2_vs_loop(bars(Dataset(fig2_runs())))}
    p = vs[("plait", 2)]
    assert p.beats is True
    assert "task-2 beats loop" in p.text and "0.881×" in p.text and "every task-2 run faster" in p.text
    g = vs[("gomp", 2)]
    assert g.beats is False  # 5.1 > 5.0
    assert "does not beat loop" in g.text and "1.020×" in g.text and "overlap" in g.text


def test_failed_runs_are_counted_not_timed(tmp_path):
    rs = fig2_runs()
    rs.append(run("gomp", None, variant="task-2", status="unverified"))
    rs += [run("libomp", 1.0, variant="loop"), run("libomp", None, variant="task-2", status="timeout")]
    bs = by_key(bars(Dataset(rs)))
    assert bs[("gomp", "task-2", 2)].n_failed == 1
    assert bs[("gomp", "task-2", 2)].time.n == 3
    assert bs[("libomp", "task-2", 2)].time is None and bs[("libomp", "task-2", 2)].norm is None
    vs = {(v.line, v.threads): v for v in task2_vs_loop(list(bs.values()))}
    assert vs[("libomp", 2)].beats is None and "no successful task-2 run" in vs[("libomp", 2)].text
    md, files = amr_section(Dataset(rs), tmp_path, lambda n, f, extra="": f"{n} runs, {f} failed")
    text = "\n".join(md)
    assert "| gomp | task-2 | 1.020 [0.980–1.040] |" in text and "| **1** |" in text
    assert all(p.exists() for p in files)


def test_section_writes_pngs_tables_and_skips_utilisation(tmp_path):
    rs = fig2_runs() + [run("plait", 2.0, case=SMALL, variant="loop"), run("plait", 1.0, case=SMALL, variant="task-2")]
    md, files = amr_section(Dataset(rs), tmp_path, lambda n, f, extra="": f"{n} runs, {f} failed")
    text = "\n".join(md)
    assert sorted(p.name for p in files) == ["amr_fig2_p1.png", "amr_fig2_p2.png"]
    for p in files:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    assert "![amr_fig2_p2](./amr_fig2_p2.png)" in text
    assert "#### num_tsteps=14,preset=study003, P = 2" in text
    assert "#### num_tsteps=14,nx=8,ny=8,nz=8,preset=study003, P = 2" in text
    # normalised [min-max], absolute median [min-max], speedup over serial
    assert "| plait | task-2 | 0.881 [0.857–0.905] | 3.7000 [3.6000–3.8000] | 2.16 [2.11–2.22] | 3 | 0 |" in text
    assert "| plait | loop | 1.000 [0.952–1.048] | 4.2000 [4.0000–4.4000] |" in text
    assert "Serial: 8.0000 s [7.9000–8.2000] over 3 run(s)." in text
    assert "- **plait**: task-2 beats loop" in text and "- **gomp**: task-2 does not beat loop" in text
    assert "utilisation" not in text.lower()  # the runs carry no per-thread utilisation


def test_utilisation_listed_when_runs_carry_it(tmp_path):
    rs = fig2_runs()
    rs += [run("plait", 1.0, case=SMALL, variant="loop", stats={"util_0": 0.9, "util_1": 80.0}),
           run("plait", 1.2, case=SMALL, variant="loop", stats={"util_0": 0.7, "util_1": 60.0})]
    u = utilisation(Dataset(rs))
    (key, per), = u.items()
    assert key[1:] == ("plait", "loop", 2)
    assert per[0].median == pytest.approx(0.8) and per[1].median == pytest.approx(0.7)
    md, _ = amr_section(Dataset(rs), tmp_path, lambda n, f, extra="": "c")
    assert "t0: 80.0% [70.0–90.0]; t1: 70.0% [60.0–80.0]" in "\n".join(md)


def test_write_report_hook(tmp_path):
    """A tiny hand-made database: write_report draws the amr section and lists amr nowhere else."""
    con = db.connect(tmp_path / "amr.db")
    mid = db.upsert_machine(con, {"hostname": "h", "cpu_model": "cpu", "logical_cpus": 2})
    with db.Tx(con):
        sid = con.execute(
            "INSERT INTO sessions (study, study_path, plan_hash, seed, rounds, warmup, commit_hash, commit_short,"
            " dirty, machine_id, started_at, status) VALUES ('amr', 'studies/amr.toml', 'x', 1, 3, 0, 'c', 'c', 0,"
            " ?, ?, 'complete')", (mid, db.now())).lastrowid
        for seq, r in enumerate(fig2_runs()):
            pid = con.execute(
                "INSERT INTO planned_runs (session_id, seq, round, kind, config_key, kernel, runtime, series, threads,"
                " params_json, base_json, timeout_s, state) VALUES (?,?,1,'measured',?, 'amr',?,?,?,?,?,600,'done')",
                (sid, seq, f"k{seq}", r.runtime, r.series, r.threads, json.dumps(r.params), json.dumps(r.base))).lastrowid
            con.execute(
                "INSERT INTO runs (session_id, planned_id, kernel, runtime, series, threads, params_json, base_json,"
                " config_key, round, kind, status, time_s, verified, stats_json, command, binary, started_at)"
                " VALUES (?,?,'amr',?,?,?,?,?,?,1,'measured','ok',?,1,?,'cmd','bin',?)",
                (sid, pid, r.runtime, r.series, r.threads, json.dumps(r.params), json.dumps(r.base), f"k{seq}",
                 r.time_s, json.dumps({"variant": r.params.get("variant", "loop")}), db.now()))
    out = tmp_path / "report"
    files = write_report(con, sid, out)
    names = sorted(f.name for f in files)
    assert names == ["amr_fig2_p1.png", "amr_fig2_p2.png", "index.md"]
    md = (out / "index.md").read_text()
    assert "## miniAMR proxy: loops vs tasks (study 003" in md
    assert "All configurations of the other kernels" not in md
    assert "| plait | task-2 | 0.881 [0.857–0.905] |" in md
