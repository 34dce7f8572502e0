"""The bcn-calibration experiment: its spike and fairness definitions, and a short reproduce run
(figures, summary rows, the sweep on the resumable sweep runner)."""

from __future__ import annotations

import math

import polars as pl
import pytest
from conftest import scenario_path
from qcnsim.experiments import bcn_calibration as bc
from qcnsim.reproduce import reproduce

MS = 1_000_000_000

# (name, samples (t in ms, queue in KB), expected (start ms, end ms) or None)
SPIKE_CASES = [
    ("no spike", [(0, 10), (1, 48), (2, 20)], (None, None)),
    ("spike settles", [(0, 10), (1, 60), (2, 70), (3, 40), (4, 30), (5, 20)], (1, 3)),
    ("a rise before the settle time restarts it",
     [(0, 60), (1, 40), (1.5, 50), (2, 40), (3, 40), (4, 40)], (0, 2)),
    ("settling needs the full settle time", [(0, 60), (1, 40), (1.9, 40)], (0, None)),
    ("never settles", [(0, 60), (1, 70), (2, 80)], (0, None)),
    ("exactly at the threshold is not above", [(0, 48), (1, 48)], (None, None)),
]


@pytest.mark.parametrize("samples,want", [c[1:] for c in SPIKE_CASES], ids=[c[0] for c in SPIKE_CASES])
def test_spike_definition(samples, want):
    t = [int(s[0] * MS) for s in samples]
    q = [s[1] * 1000.0 for s in samples]
    start, end = bc.spike(t, q, threshold=48_000, settle_ps=1 * MS)
    got = (None if start is None else start / MS, None if end is None else end / MS)
    assert got == want


def test_jain_index():
    assert bc.jain([1, 1, 1, 1]) == 1.0
    assert bc.jain([1, 0, 0, 0]) == 0.25
    assert bc.jain([3, 1]) == pytest.approx(16 / 20)
    assert math.isnan(bc.jain([0, 0]))


def test_reproduce_bcn_calibration_short(tmp_path, monkeypatch):
    # A short version: 10 ms runs, a two-window sweep of two runs each over t = 5-10 ms.
    monkeypatch.setattr(bc, "SWEEP_WINDOWS_KB", [10, 100])
    monkeypatch.setattr(bc, "SWEEP_REPS_QUICK", 2)
    monkeypatch.setattr(bc, "SWEEP_WINDOW_PS", (5 * MS, 10 * MS))
    logs = []
    kw = dict(quick=True, overrides=["meta.duration=10ms"], seed=3, log=logs.append, echo=lambda s: None)
    summary = reproduce(str(scenario_path("bcn-calibration")), tmp_path, **kw)
    for f in ["egress_throughput", "accepted_throughput", "rl_rate", "edge_occupancy", "core_queue",
              "spike", "sweep"]:
        assert (tmp_path / f"{f}.png").stat().st_size > 0, f
    # --quick leaves out the variants with quick = false (the two -fbsat-floor5M readings)
    variants = [v["name"] for v in bc_variants() if v["quick"]]
    assert len(variants) == 6 and not any(v.endswith("floor5M") for v in variants)
    spikes = summary.filter(pl.col("metric") == "core_spike_duration")
    assert spikes["variant"].to_list() == variants
    assert all(v >= 0 or math.isnan(v) for v in spikes["value"].to_list())
    # PAUSE builds the edge queues: with edge detection on their CPs send negative BCN, off none
    from qcnsim.results import Results

    def edge_neg(variant):
        p = Results.read(tmp_path / variant)["ports"]
        return p.filter(pl.col("port").str.starts_with("es"))["bcn_negative_sent"].sum()

    assert edge_neg("pause-bcn-edges-on") > 0
    assert edge_neg("pause-bcn-edges-off") == 0
    only = Results.read(tmp_path / "pause-only")
    assert only.summary.filter(pl.col("metric") == "pause_frames_sent")["value"][0] > 0
    assert only["rp_rates"].height == 0
    sweep = pl.read_csv(tmp_path / "sweep.csv")
    assert sweep["window_kb"].to_list() == [10, 100]
    assert sweep["runs"].to_list() == [2, 2]
    assert all(0.25 <= j <= 1.0 for j in sweep["jain_mean"].to_list())
    assert all(p > 0 for p in sweep["peak_queue_run_mean_bytes"].to_list())
    rows = summary.filter(pl.col("variant") == "sweep")
    assert set(rows["metric"].to_list()) == {"mean_peak_queue", "std_peak_queue", "mean_jain", "std_jain"}
    assert any("fewer replications" in s for s in logs)
    runs = pl.read_csv(tmp_path / "sweep_runs.csv")
    assert runs.height == 4 and runs["rep"].to_list() == [0, 1, 0, 1]
    assert runs["seed"].n_unique() == 2, "replications use different seeds, windows the same ones"
    done = sorted((tmp_path / "sweep").rglob("run.json"))
    assert len(done) == 4
    stamps = [p.stat().st_mtime_ns for p in done]

    # resumable: a second call runs nothing again
    def no_run(*a, **k):
        raise AssertionError("a finished run was run again")

    monkeypatch.setattr("qcnsim.reproduce.run", no_run)
    again = reproduce(str(scenario_path("bcn-calibration")), tmp_path, **kw)
    assert again.filter(pl.col("variant") == "sweep").equals(rows)
    assert [p.stat().st_mtime_ns for p in done] == stamps


def bc_variants():
    import qcnsim

    return qcnsim.Scenario.load(scenario_path("bcn-calibration")).variants()
