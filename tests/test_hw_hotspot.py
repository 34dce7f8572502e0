"""hw-hotspot-1src: recovery at the study's 10 ms resolution and at 1 ms, from the 1 ms bins."""

from __future__ import annotations

import math

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path
from qcnsim.experiments.hw_hotspot_1src import coarsen, recoveries, recovery_from_bins

# A short hotspot from 10 ms to 30 ms, 150 ms in all (recovery well inside the run).
SHORT = ["meta.duration=150ms", "schedule.0.at=10ms", "schedule.1.at=30ms"]


def test_recovery_from_bins_rule():
    bins = pl.DataFrame({"t_ps": [0, 10, 20, 30, 40], "throughput_bps": [9.0, 1.0, 5.0, 9.5, 8.0]})
    assert recovery_from_bins(bins, 10, 10, 9.0) == pytest.approx(30 / 1e12)  # bin 30..40 ends 30 after 10
    assert recovery_from_bins(bins, 10, 41, 9.0) is None
    c = coarsen(bins, 10, 20)  # (0, 10) -> 5, (20, 30) -> 7.25, 40 incomplete
    assert c["t_ps"].to_list() == [0, 20] and c["throughput_bps"].to_list() == [5.0, 7.25]
    with pytest.raises(ValueError):
        coarsen(bins, 10, 15)


@pytest.mark.parametrize("variant", ["hotspot-1G", "nic-hw-0.5G"])
def test_recovery_at_1ms_matches_the_summary_and_10ms_matches_a_10ms_run(variant):
    base = qcnsim.Scenario.load(scenario_path("hw-hotspot-1src")).with_overrides([f"meta.variant={variant}", *SHORT])
    fine = qcnsim.run(base, seed=5, progress=False)
    rec = recoveries(fine)
    summary = fine.summary.filter(pl.col("metric") == "recovery_time")["value"][0]
    assert rec["1ms"] is not None and math.isclose(rec["1ms"], summary, rel_tol=1e-12)
    coarse = qcnsim.run(base.with_overrides(["metrics.throughput_bin=10ms"]), seed=5, progress=False)
    ten = coarse.summary.filter(pl.col("metric") == "recovery_time")["value"][0]
    assert rec["10ms"] is not None and math.isclose(rec["10ms"], ten, rel_tol=1e-12)
    assert rec["10ms"] >= rec["1ms"]
