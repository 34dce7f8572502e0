"""qcnsim.sweep / qcnsim sweep: planning, point ids, seeds, aggregation, resumability, failures,
executors (local processes and a Dask LocalCluster), the CLI."""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import qcnsim
from conftest import run_cli
from qcnsim import _stats, sweeps
from qcnsim.executors import LocalExecutor
from sweep_helpers import TRIVIAL

RATES = {"flows.0.rate": ["1Gbps", "2Gbps", "3Gbps"]}


@pytest.fixture
def trivial(tmp_path) -> qcnsim.Scenario:
    p = tmp_path / "trivial.toml"
    p.write_text(TRIVIAL, encoding="utf-8")
    return qcnsim.Scenario.load(p)


def quiet(_msg: str) -> None:
    pass


def leftovers(d: Path):
    """Temporary or half-written entries anywhere under a sweep directory."""
    return [p for p in d.rglob("*") if ".tmp-" in p.name or ".old-" in p.name]


def run_dirs(d: Path):
    return sorted(p for p in d.glob("point=*/rep=*") if p.is_dir())


# -- statistics --------------------------------------------------------------------------------
@pytest.mark.parametrize("df,want", [(1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (9, 2.2621572),
                                     (24, 2.0638986), (30, 2.0422725), (120, 1.9799304), (10**6, 1.9599664)])
def test_t_quantile_matches_tables(df, want):
    assert _stats.t_quantile(0.975, df) == pytest.approx(want, abs=2e-7)


def test_mean_std_ci():
    n, mean, sd, half = _stats.mean_std_ci([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert (n, mean) == (8, 5.0)
    assert sd == pytest.approx(np.std([2, 4, 4, 4, 5, 5, 7, 9], ddof=1))
    assert half == pytest.approx(2.3646243 * sd / math.sqrt(8), rel=1e-7)
    n, mean, sd, half = _stats.mean_std_ci([3.0])
    assert (n, mean) == (1, 3.0) and math.isnan(sd) and math.isnan(half)
    assert _stats.mean_std_ci([1.0, float("nan"), 3.0])[:2] == (2, 2.0)


# -- seeds and ids -------------------------------------------------------------------------------
def test_replication_seeds():
    # SplitMix64 reference output: the first value of a generator seeded with 0.
    assert sweeps.splitmix64(0) == 0xE220A8397B1DCDAF
    assert sweeps.replication_seed(7, 0) == 7  # replication 0 is the plain run
    seeds = [sweeps.replication_seed(7, r) for r in range(1000)]
    assert len(set(seeds)) == 1000
    assert all(0 <= s < 2**64 for s in seeds)
    assert sweeps.replication_seed(7, 1) == sweeps.splitmix64((7 + 0x9E3779B97F4A7C15) % 2**64)
    assert seeds == [sweeps.replication_seed(7, r) for r in range(1000)]


def test_point_id_is_sha256_of_canonical_payload():
    resolved = {"meta": {"name": "x", "description": "d", "duration": "1ms", "seed": 3, "quick_duration": "1ms"},
                "flows": [{"rate": "1Gbps"}], "overrides": ["a=b"], "variants": [], "sweep": {"mode": "grid"}}
    payload = {"qcnsim_point": 1, "scenario": {"flows": [{"rate": "1Gbps"}], "meta": {"duration": "1ms", "seed": 3}}}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert sweeps.id_payload(resolved) == payload
    assert sweeps.point_id(resolved) == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_point_ids_follow_the_resolved_scenario(trivial):
    a = sweeps.plan_sweep(trivial, {"flows.0.frame": ["1000B", "1KB", "1500B"]})
    ids = [p.id for p in a.points]
    assert ids[0] == ids[1] != ids[2]  # 1000B and 1KB resolve to the same scenario
    # The same point given on the command line, through --set, or with another description.
    b = sweeps.plan_sweep(trivial, ["flows.0.frame=1000B"])
    c = sweeps.plan_sweep(trivial.with_overrides(["flows.0.frame=1000B", "meta.description=other"]), None)
    assert b.points[0].id == c.points[0].id == ids[0]
    # The base seed is part of the id; the plan records it.
    d = sweeps.plan_sweep(trivial, ["flows.0.frame=1000B"], seed=8)
    assert d.points[0].id != ids[0] and d.base_seed == 8
    assert len(a.tasks()) == 2  # the duplicate point runs once


def test_grid_and_zip(trivial):
    axes = {"flows.0.rate": ["1Gbps", "2Gbps"], "flows.0.frame": ["500B", "1000B"]}
    g = sweeps.plan_sweep(trivial, axes, replications=3)
    assert [p.overrides for p in g.points] == [
        ["flows.0.rate=1Gbps", "flows.0.frame=500B"], ["flows.0.rate=1Gbps", "flows.0.frame=1000B"],
        ["flows.0.rate=2Gbps", "flows.0.frame=500B"], ["flows.0.rate=2Gbps", "flows.0.frame=1000B"]]
    assert g.n_runs == 12 and len(g.tasks()) == 12
    z = sweeps.plan_sweep(trivial, axes, mode="zip")
    assert [p.overrides for p in z.points] == [["flows.0.rate=1Gbps", "flows.0.frame=500B"],
                                                ["flows.0.rate=2Gbps", "flows.0.frame=1000B"]]
    none = sweeps.plan_sweep(trivial, None, replications=4)
    assert len(none.points) == 1 and none.points[0].overrides == [] and none.n_runs == 4


def test_split_values():
    assert sweeps.split_values("1,2, 3") == ["1", "2", "3"]
    assert sweeps.split_values('["a", "b"],[1, 2],"x,y"') == ['["a", "b"]', "[1, 2]", '"x,y"']


def test_sweep_table_in_the_scenario_file(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(TRIVIAL + '\n[sweep]\nmode = "zip"\nreplications = 2\n[sweep.axes]\n'
                 '"flows.0.rate" = ["1Gbps", "2Gbps"]\n"flows.0.frame" = ["500B", "1000B"]\n', encoding="utf-8")
    plan = sweeps.plan_sweep(qcnsim.Scenario.load(p))
    assert (plan.mode, plan.replications, len(plan.points)) == ("zip", 2, 2)
    # command-line axes and replications replace the file's
    plan = sweeps.plan_sweep(qcnsim.Scenario.load(p), ["flows.0.rate=1Gbps,2Gbps,3Gbps"], replications=1)
    assert (plan.mode, plan.replications, len(plan.points)) == ("grid", 1, 3)
    # a single run ignores the table
    assert qcnsim.run(qcnsim.Scenario.load(p), progress=False).summary.height > 0


@pytest.mark.parametrize("axes,kw,path", [
    ({"flows.0.rate": ["1Gbps", "2Gbit"]}, {}, "axes['flows.0.rate'][1]: flows.0.rate"),
    ({"flows.0.ratex": ["1Gbps"]}, {}, "axes['flows.0.ratex'][0]: flows.0.ratex"),
    (["flows.0.rate=1Gbps,20Gbps"], {}, "--sweep flows.0.rate[1]: flows.0.rate"),
    (["flows.0.rate"], {}, "--sweep"),
    (["flows.0.rate=1Gbps,,2Gbps"], {}, "--sweep flows.0.rate"),
    (["flows.0.rate=1Gbps", "flows.0.rate=2Gbps"], {}, "--sweep flows.0.rate"),
    ({"flows.0.rate": []}, {}, "axes['flows.0.rate']"),
    (RATES, {"replications": 0}, "replications"),
    (RATES, {"mode": "cube"}, "mode"),
    ({"flows.0.rate": ["1Gbps"], "flows.0.frame": ["500B", "600B"]}, {"mode": "zip"}, "axes['flows.0.rate']"),
])
def test_bad_axes_name_the_field(trivial, axes, kw, path):
    with pytest.raises(qcnsim.ScenarioError) as ei:
        sweeps.plan_sweep(trivial, axes, **kw)
    assert ei.value.path == path, str(ei.value)


def test_bad_value_in_the_file_axes_names_it(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(TRIVIAL + '\n[sweep.axes]\n"flows.0.rate" = ["1Gbps", "5Gbit"]\n', encoding="utf-8")
    with pytest.raises(qcnsim.ScenarioError) as ei:
        sweeps.plan_sweep(qcnsim.Scenario.load(p))
    assert ei.value.path == 'sweep.axes."flows.0.rate"[1]: flows.0.rate'
    assert "5Gbit" in str(ei.value)


# -- running -------------------------------------------------------------------------------------
def test_sweep_layout_aggregation_determinism_and_resume(trivial, tmp_path):
    out = tmp_path / "sw"
    res = qcnsim.sweep(trivial, RATES, replications=3, executor=LocalExecutor(jobs=2), out=out, log=quiet)
    assert isinstance(res, qcnsim.SweepResults) and res.complete
    assert len(run_dirs(out)) == 9 and not leftovers(out)
    for f in ("sweep.json", "points.parquet", "runs.parquet", "aggregate.parquet"):
        assert (out / f).is_file()
    assert res.points["status"].to_list() == ["done"] * 3
    assert res.points["flows.0.rate"].to_list() == RATES["flows.0.rate"]

    # every run.json names its point, replication and derived seed
    for d in run_dirs(out):
        info = json.loads((d / "run.json").read_text())
        rep = int(d.name.split("=")[1])
        assert info["sweep"]["point"] == d.parent.name.split("=")[1] and info["sweep"]["rep"] == rep
        assert info["seed"] == sweeps.replication_seed(7, rep)

    # the aggregate is the mean / sample std / t-interval of the runs table
    db = res.metric("delivered_bytes").sort("flows.0.rate")
    assert db["n"].to_list() == [3, 3, 3]
    for row in db.iter_rows(named=True):
        vals = res.runs.filter((pl.col("point") == row["point"]) & (pl.col("metric") == "delivered_bytes"))["value"].to_numpy()
        assert len(vals) == 3
        assert row["mean"] == pytest.approx(float(np.mean(vals)))
        assert row["std"] == pytest.approx(float(np.std(vals, ddof=1)))
        half = 4.302652729749752 * row["std"] / math.sqrt(3)
        assert (row["ci95_low"], row["ci95_high"]) == pytest.approx((row["mean"] - half, row["mean"] + half))
    means = db["mean"].to_list()
    assert means[0] < means[1] < means[2]  # more offered load, more delivered bytes
    assert set(res.metrics) == set(res.metric_names()) and "delivered_bytes" in res.metrics

    # replication 0 is exactly the plain run with the base seed
    p0 = res.points["point"][0]
    plain = qcnsim.run(trivial.with_overrides(["flows.0.rate=1Gbps"]), progress=False)
    assert res.result(p0, 0).summary.equals(plain.summary)

    # same sweep in another directory: bit-identical tables
    again = qcnsim.sweep(trivial, RATES, replications=3, executor=LocalExecutor(jobs=1), out=tmp_path / "sw2",
                         log=quiet)
    assert again.aggregate.equals(res.aggregate) and again.runs.equals(res.runs)

    # resume: a rerun skips everything; a lost run is redone and only it
    seen = []
    qcnsim.sweep(trivial, RATES, replications=3, out=out, log=seen.append, executor=LocalExecutor(jobs=1))
    assert any("9 of 9 runs already done" in s for s in seen)
    victim = run_dirs(out)[4]
    mtimes = {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(out) if d != victim}
    import shutil

    shutil.rmtree(victim)
    (victim.parent / ".rep=9.tmp-zzz").mkdir()  # litter of a killed writer
    states = []
    resumed = qcnsim.sweep(trivial, RATES, replications=3, out=out, log=quiet, progress=states.append,
                           executor=LocalExecutor(jobs=1))
    assert victim.is_dir() and not leftovers(out)
    assert states[-1]["runs"] == 9 and len(states) == 1  # exactly one run executed
    assert all((d / "run.json").stat().st_mtime_ns == m for d, m in mtimes.items())
    assert resumed.aggregate.equals(res.aggregate)
    assert qcnsim.SweepResults.read(out).aggregate.equals(res.aggregate)


def test_csv_format_and_kept_tables(trivial, tmp_path):
    res = qcnsim.sweep(trivial, ["flows.0.rate=1Gbps,2Gbps"], executor=LocalExecutor(jobs=1), out=tmp_path / "o",
                       fmt="csv", tables=["flows"], log=quiet)
    assert (tmp_path / "o" / "aggregate.csv").is_file()
    d = run_dirs(tmp_path / "o")[0]
    assert sorted(p.name for p in d.iterdir()) == ["flows.csv", "run.json", "summary.csv"]
    assert qcnsim.SweepResults.read(tmp_path / "o").aggregate.shape == res.aggregate.shape


def test_a_killed_worker_is_retried(trivial, tmp_path):
    ex = LocalExecutor(jobs=2, chunk=1, task_fn=__import__("sweep_helpers").slow_run_task)
    killed = []

    def kill_one(state):
        if not killed:
            # Both workers are busy with 0.3 s runs: kill one of them mid-run.
            pid = ex.worker_pids[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    res = qcnsim.sweep(trivial, RATES, replications=2, executor=ex, out=tmp_path / "k", progress=kill_one,
                       log=quiet)
    assert killed and res.complete and len(run_dirs(tmp_path / "k")) == 6 and not leftovers(tmp_path / "k")
    attempts = [json.loads((d / "run.json").read_text())["sweep"]["attempt"] for d in run_dirs(tmp_path / "k")]
    assert sorted(attempts) == [1, 1, 1, 1, 1, 2]  # the one run that was on the killed worker
    # two workers, a replacement while runs were left, one more for the retry pass
    assert len(ex.worker_pids) >= 3


def _reaped(pid: int) -> bool:
    """The process has exited and its parent has waited for it (no /proc entry, not a zombie)."""
    return not Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="uses /proc")
@pytest.mark.parametrize("when", ["mid-sweep", "after the last result"])
def test_ctrl_c_in_the_consumer_stops_and_reaps_every_worker(trivial, when):
    """SIGINT while the caller handles a result: no exception at an arbitrary point; the next
    step stops and reaps every worker, restores the handler, then raises KeyboardInterrupt."""
    import sweep_helpers
    from qcnsim.executors import Task

    ex = LocalExecutor(jobs=2, chunk=1, task_fn=sweep_helpers.slow_run_task)
    tasks = [Task(f"p{i}", 0, (f"flows.0.rate={i + 1}Gbps",), 1) for i in range(6)]
    it = ex.map(trivial.text, tasks)
    got = [next(it)]
    if when == "after the last result":
        got += [next(it) for _ in range(len(tasks) - 1)]
    assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # the executor's flag
    signal.raise_signal(signal.SIGINT)  # only sets the flag: nothing raised here
    with pytest.raises(KeyboardInterrupt):
        got += list(it)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert len(got) < len(tasks) if when == "mid-sweep" else len(got) == len(tasks)
    assert ex.worker_pids and all(_reaped(pid) for pid in ex.worker_pids), ex.worker_pids


def test_an_application_sigint_handler_is_left_alone(trivial):
    from qcnsim.executors import Task

    def handler(signum, frame):
        pass

    old = signal.signal(signal.SIGINT, handler)
    try:
        during = [(status, signal.getsignal(signal.SIGINT))
                  for _, status, _ in LocalExecutor(jobs=1).map(trivial.text, [Task("p", 0, (), 1)])]
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, old)
    assert during == [("ok", handler)] and after is handler


@pytest.mark.parametrize("fn,needle", [("erroring_run_task", "RuntimeError: injected failure"),
                                       ("dying_run_task", "died (exit code 3)")])
def test_a_point_that_fails_twice_is_recorded_and_the_sweep_goes_on(trivial, tmp_path, fn, needle):
    import sweep_helpers

    ex = LocalExecutor(jobs=2, task_fn=getattr(sweep_helpers, fn))
    res = qcnsim.sweep(trivial, RATES, replications=2, executor=ex, out=tmp_path / "f", log=quiet)
    st = dict(zip(res.points["flows.0.rate"], res.points["status"]))
    assert st == {"1Gbps": "done", "2Gbps": "failed", "3Gbps": "done"}
    bad = res.failed.row(0, named=True)
    assert bad["runs_failed"] == 2 and bad["runs_done"] == 0 and needle in bad["error"]
    assert len(run_dirs(tmp_path / "f")) == 4 and not leftovers(tmp_path / "f")
    assert res.metric("delivered_bytes").height == 2  # the failed point has no aggregate rows


def test_full_disk_stops_cleanly_and_resumes(trivial, tmp_path, monkeypatch):
    out = tmp_path / "full"
    calls = {"n": 0}
    real = pl.DataFrame.write_parquet
    n_tables = len(qcnsim.run(trivial).tables)  # the tables one run writes

    def flaky(self, *a, **k):
        calls["n"] += 1
        if calls["n"] > 2 * n_tables + 3:  # run 3 fails after writing 3 of its tables
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", flaky)
    monkeypatch.setattr(sweeps, "WRITER_THREADS", 1)
    with pytest.raises(sweeps.SweepStopped, match="disk is full"):
        qcnsim.sweep(trivial, RATES, replications=2, executor=LocalExecutor(jobs=1), out=out, log=quiet)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    done = run_dirs(out)
    assert len(done) == 2 and not leftovers(out)
    assert all(sweeps._finished_summary(d, d.parent.name[6:], int(d.name[4:])) is not None for d in done)
    res = qcnsim.sweep(trivial, RATES, replications=2, executor=LocalExecutor(jobs=1), out=out, log=quiet)
    clean = qcnsim.sweep(trivial, RATES, replications=2, executor=LocalExecutor(jobs=1), out=tmp_path / "clean",
                         log=quiet)
    assert res.complete and res.aggregate.equals(clean.aggregate)


def test_one_sweep_per_directory(trivial, tmp_path):
    out = tmp_path / "locked"
    out.mkdir()
    with sweeps._Lock(out):
        with pytest.raises(qcnsim.ScenarioError, match="another sweep is running"):
            qcnsim.sweep(trivial, RATES, executor=LocalExecutor(jobs=1), out=out, log=quiet)


def test_progress_line():
    bar = sweeps.SweepProgress(100, 10, stream=open(os.devnull, "w"), clock=lambda: 0.0)
    bar.skipped = 20
    line = bar.render_sweep(60, 6, 2, 40.0)
    assert "points 6/10" in line and "runs 60/100" in line and "2 failed" in line
    assert line.endswith("ETA   40s")  # 40 runs in 40 s, 40 left


# -- Dask ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_executor_matches_local(trivial, tmp_path, dask_client):
    from qcnsim.executors import DaskExecutor

    local = qcnsim.sweep(trivial, RATES, replications=2, executor=LocalExecutor(jobs=2), out=tmp_path / "l",
                         log=quiet)
    dask = qcnsim.sweep(trivial, RATES, replications=2, executor=DaskExecutor(dask_client, chunk=2),
                        out=tmp_path / "d", log=quiet)
    assert dask.complete and dask.aggregate.equals(local.aggregate) and dask.runs.equals(local.runs)


def test_dask_failed_point_is_recorded(trivial, tmp_path, dask_client):
    import sweep_helpers
    from qcnsim.executors import DaskExecutor

    ex = DaskExecutor(dask_client, task_fn=sweep_helpers.erroring_run_task)
    res = qcnsim.sweep(trivial, RATES, executor=ex, out=tmp_path / "df", log=quiet)
    assert res.points["status"].to_list() == ["done", "failed", "done"]
    assert "injected failure" in res.failed["error"][0]


def test_dask_worker_death_is_retried_then_recorded(trivial, tmp_path):
    """A run that kills its Dask worker process: the batch it was in is retried task by task,
    the sweep retries it once more, then records it as failed; every other run completes (and
    the nanny restarts the worker each time). With Dask's own retries off, a run that waited on
    the dying worker behind the killer would fail with it: the executor keeps at most one chunk
    per worker thread in flight so that none waits there (the form of this test before that
    failed 4 times in 10 on a loaded machine)."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    import sweep_helpers
    from qcnsim.executors import DaskExecutor

    rates = {"flows.0.rate": ["1Gbps", "2Gbps", "3Gbps", "4Gbps", "5Gbps"]}
    # Dask itself reruns a task that killed a worker up to `allowed-failures` times: 0 keeps this fast.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        try:
            ex = DaskExecutor(client, chunk=2, task_fn=sweep_helpers.dying_run_task)
            res = qcnsim.sweep(trivial, rates, replications=3, executor=ex, out=tmp_path / "dd", log=quiet)
        finally:
            client.close()
            cluster.close()
    st = dict(zip(res.points["flows.0.rate"], res.points["status"]))
    assert st == {r: "failed" if r == "2Gbps" else "done" for r in rates["flows.0.rate"]}
    bad = res.failed.row(0, named=True)
    assert bad["runs_failed"] == 3 and "KilledWorker" in bad["error"], bad
    assert len(run_dirs(tmp_path / "dd")) == 12 and not leftovers(tmp_path / "dd")


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_sweep(tmp_path):
    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL, encoding="utf-8")
    out = tmp_path / "cli"
    r = run_cli("sweep", sc, "--out", out, "--sweep", "flows.0.rate=1Gbps,2Gbps", "--replications", "2",
                "--jobs", "1", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "delivered_bytes" in r.stdout and "2 of 2 point(s) done" in r.stderr
    assert len(run_dirs(out)) == 4 and (out / "aggregate.csv").is_file()
    r = run_cli("sweep", sc, "--out", out, "--sweep", "flows.0.rate=1Gbps,2Gbps", "--replications", "2",
                "--jobs", "1", "--format", "csv")
    assert r.returncode == 0 and "4 of 4 runs already done" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--sweep", "flows.0.rate=1Gbps,2Gbit"], "--sweep flows.0.rate[1]: `flows.0.rate` = \"2Gbit\""),
    (["--sweep", "flows.0.ratee=1Gbps"], "flows.0.ratee"),
    (["--sweep", "flows.0.rate"], "--sweep"),
    (["--replications", "0"], "--replications"),
    (["--jobs", "x"], "--jobs"),
    (["--set", "meta.seed=-1"], "meta.seed"),
    (["--scheduler", "tcp://127.0.0.1:1", "--executor", "local"], "--scheduler needs --executor dask"),
    (["--tables", "flowz"], "--tables: unknown table 'flowz'"),
    (["--zip", "--sweep", "flows.0.rate=1Gbps", "--sweep", "flows.0.frame=500B,600B"], "zip mode"),
])
def test_cli_sweep_bad_input(tmp_path, capsys, args, needle):
    from qcnsim.cli import main

    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL, encoding="utf-8")
    try:
        rc = main(["sweep", str(sc), "--out", str(tmp_path / "o"), *args])
    except SystemExit as e:  # argparse errors
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2, (rc, err)
    assert "Traceback" not in err and needle in err, err
    assert not (tmp_path / "o").exists()  # nothing ran


def test_cli_sweep_keeps_any_run_table(tmp_path, capsys):
    """`--tables` offers every table a run writes (docs/tables.md), the FCT tables among them."""
    from qcnsim.cli import RUN_TABLES, main

    assert {"fct", "fct_stats", "pause_events", "switch_buffer", "link_events"} <= set(RUN_TABLES)
    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL, encoding="utf-8")
    rc = main(["sweep", str(sc), "--out", str(tmp_path / "o"), "--sweep", "flows.0.rate=1Gbps",
               "--tables", "summary,fct_stats,pause_events"])
    assert rc == 0, capsys.readouterr().err


def test_cli_sweep_bad_input_subprocess(tmp_path):
    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL, encoding="utf-8")
    r = run_cli("sweep", sc, "--out", tmp_path / "o", "--sweep", "flows.0.rate=1Gbps,2Gbit")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == ('error: --sweep flows.0.rate[1]: `flows.0.rate` = "2Gbit": expected a bit rate '
                                'with a unit: bps, Kbps, Mbps, Gbps or Tbps (e.g. "10Gbps", "0.5Gbps")')


@pytest.mark.skipif(sys.platform != "linux", reason="uses process groups, pgrep and /proc")
def test_cli_sweep_interrupted_keeps_finished_runs(tmp_path):
    """Ctrl-C (SIGINT to the process group): exit 130, finished runs complete, nothing half-written,
    no worker left behind; a rerun finishes the sweep."""
    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL.replace('duration = "1ms"', 'duration = "300ms"'), encoding="utf-8")
    out = tmp_path / "int"
    n = 30  # enough that the sweep is far from done when the signal arrives
    args = [sys.executable, "-m", "qcnsim", "sweep", str(sc), "--out", str(out), "--jobs", "2",
            "--sweep", "flows.0.rate=" + ",".join(f"{0.5 + 0.25 * i}Gbps" for i in range(n)), "--no-progress"]
    env = dict(os.environ, PYTHONFAULTHANDLER="1")  # SIGABRT dumps every thread's stack
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(run_dirs(out)) < 2:
        time.sleep(0.05)
    assert len(run_dirs(out)) >= 2, "no run finished in time"
    workers = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert workers, "no worker processes found"
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGABRT)
        _, err = p.communicate(timeout=30)
        pytest.fail(f"the sweep did not stop within 60 s of SIGINT; its stderr and stacks:\n{err}")
    assert p.returncode == 130, err
    assert "Traceback" not in err
    done = run_dirs(out)
    assert not leftovers(out)
    assert all(sweeps._finished_summary(d, d.parent.name[6:], int(d.name[4:])) is not None for d in done)
    left = [w for w in workers if not _reaped(int(w))]  # the sweep reaps its workers before it exits
    assert not left, f"worker processes left behind: {left}"
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"{len(done)} of {n} runs already done" in r.stderr
    assert len(run_dirs(out)) == n
