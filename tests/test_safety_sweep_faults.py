"""Sweep faults (issue 10): an unreachable or dying Dask scheduler (a real scheduler and worker
processes) and a killed sweep give a message, a non-zero exit, the finished runs kept and a
resumable directory; workers of a killed sweep print no traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHORT, scenario_path

pytest.importorskip("distributed")

SETS = [x for o in SHORT for x in ("--set", o)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _qcnsim(*args, **kw) -> subprocess.Popen:
    env = dict(os.environ, QCNSIM_PROGRESS="0")
    return subprocess.Popen([sys.executable, "-m", "qcnsim", *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _wait_for(cond, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _done_runs(out: Path) -> int:
    return len(list(out.glob("point=*/rep=*/run.json")))


def test_unreachable_scheduler_is_a_message(tmp_path):
    out = tmp_path / "sw"
    p = _qcnsim("sweep", scenario_path("hw-hotspot-1src"), *SETS, "--sweep", "meta.seed=1,2", "--out", out,
                "--scheduler", f"tcp://127.0.0.1:{_free_port()}", "--connect-timeout", "1")
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert "Traceback" not in err
    assert "cannot reach the Dask scheduler" in err and "rerun the same command to resume" in err


@pytest.fixture
def cluster(tmp_path):
    """A real Dask scheduler and one single-threaded worker process."""
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = []
    log = open(tmp_path / "dask.log", "w")
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", str(port),
                                   "--dashboard-address", ":0", "--no-show"], stdout=log, stderr=log))

    def listening() -> bool:
        with socket.socket() as c:
            return c.connect_ex(("127.0.0.1", port)) == 0

    _wait_for(listening, 60, "the Dask scheduler")
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
                                   "--nworkers", "1", "--no-dashboard"], stdout=log, stderr=log))
    try:
        yield addr, procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        log.close()


def test_scheduler_dying_mid_sweep_keeps_the_finished_runs(tmp_path, cluster):
    addr, (scheduler, _) = cluster
    out = tmp_path / "sw"
    n = 12
    seeds = ",".join(str(s) for s in range(1, n + 1))
    # 12 runs of 0.3 s simulated on one worker (chunks of 3 runs): the sweep outlives the kill
    args = ("sweep", scenario_path("hw-hotspot-1src"), *SETS, "--set", "meta.duration=300ms", "--sweep",
            f"meta.seed={seeds}", "--out", out, "--tables", "summary")
    p = _qcnsim(*args, "--scheduler", addr, "--connect-timeout", "2")
    try:
        _wait_for(lambda: _done_runs(out) >= 2 or p.poll() is not None, 180, "two finished runs")
        scheduler.send_signal(signal.SIGKILL)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, err
    assert "Traceback" not in err, err
    assert "lost the Dask scheduler" in err and "rerun the same command to resume" in err
    kept = _done_runs(out)
    assert 2 <= kept < n
    # resumable: the same sweep on the local executor runs only what is missing
    r = subprocess.run([sys.executable, "-m", "qcnsim", *map(str, args), "--jobs", "1"], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, QCNSIM_PROGRESS="0"))
    assert r.returncode == 0, r.stderr
    assert f"{kept} of {n} runs already done" in r.stderr
    assert _done_runs(out) == n


def test_workers_of_a_killed_sweep_print_no_traceback(tmp_path):
    out = tmp_path / "sw"
    p = _qcnsim("sweep", scenario_path("hw-hotspot-1src"), "--set", "meta.duration=400ms",
                "--set", "schedule.0.at=10ms", "--set", "schedule.1.at=30ms",
                "--sweep", "meta.seed=1,2,3,4,5,6", "--out", out, "--jobs", "2", start_new_session=True)
    # wait until the workers are simulating, then kill the sweep process only (not its workers)
    time.sleep(4.0)
    p.send_signal(signal.SIGKILL)
    # stderr stays open while a worker holds it: reading to its end waits for every worker
    _, err = p.communicate(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
