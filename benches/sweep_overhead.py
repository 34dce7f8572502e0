"""Per-point overhead of `qcnsim sweep`: 1000 short points of a trivial scenario (two hosts, one
switch, one Poisson flow, 1 ms simulated, about 0.1 ms of simulation each), one replication,
with the local executor and with a Dask LocalCluster. Prints points per second.

    python benches/sweep_overhead.py [--points 1000] [--jobs 2] [--tables all|summary] [--only local|dask]

The numbers are reported in docs/performance.md. The sweep directory is a fresh temporary one.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import qcnsim
from qcnsim.executors import DaskExecutor, LocalExecutor

TRIVIAL = """
[meta]
name = "trivial"
duration = "1ms"
seed = 1
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
[[links]]
between = ["s", "b"]
[[flows]]
name = "f"
src = "a"
dst = "b"
traffic = "poisson"
rate = "5Gbps"
frame = "1500B"
"""


def one(executor, n: int, tables, label: str) -> None:
    sc = qcnsim.Scenario.from_text(TRIVIAL, name="trivial")
    axes = {"flows.0.rate": [f"{10 * (i + 1)}Mbps" for i in range(n)]}
    d = Path(tempfile.mkdtemp(prefix="qcnsim-sweep-bench-"))
    try:
        t0 = time.perf_counter()
        res = qcnsim.sweep(sc, axes, 1, executor, out=d, tables=tables, progress=False, log=lambda s: None)
        wall = time.perf_counter() - t0
        assert res.complete, res.failed
        print(f"{label:<40} {n} points in {wall:6.2f} s = {n / wall:7.1f} points/s")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tables", choices=("all", "summary"), default=None)
    ap.add_argument("--only", choices=("local", "dask"))
    a = ap.parse_args()
    for tables in ([a.tables] if a.tables else ["all", "summary"]):
        keep = None if tables == "all" else ["summary"]
        if a.only in (None, "local"):
            one(LocalExecutor(jobs=a.jobs), a.points, keep, f"local jobs={a.jobs} tables={tables}")
        if a.only in (None, "dask"):
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=a.jobs, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                one(DaskExecutor(client), a.points, keep, f"dask LocalCluster {a.jobs}x1 tables={tables}")


if __name__ == "__main__":
    main()
