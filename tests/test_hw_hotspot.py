"""hw-hotspot-1src: recovery at the study's 10 ms resolution and at 1 ms, from the 1 ms bins."""

from __future__ import annotations

import math

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path
from qcnsim.experiments.hw_hotspot_1src import HEADLINE, coarsen, recoveries, recovery_from_bins
from qcnsim.reproduce import reproduce

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


def test_quick_reproduce_ships_every_cell_of_the_grid(tmp_path):
    """scheme (standard, nic, nic-hw) x stage gate (both, byte_counter, either) x hotspot: every
    cell has a run, a row in recovery.csv (with the study's value), a cell in recovery.md, a
    published row and a recovery row in the summary; the grid figure is drawn. Not the numbers."""
    summary = reproduce(str(scenario_path("hw-hotspot-1src")), tmp_path, quick=True,
                        overrides=[*SHORT, "meta.quick_duration=150ms"],
                        log=lambda s: None, echo=lambda s: None)
    rec = pl.read_csv(tmp_path / "recovery.csv")
    cells = sorted(zip(rec["hotspot"], rec["scheme"], rec["gate"]))
    assert cells == sorted((h, s, g) for h in ("0.5G", "1G") for s in ("standard", "nic", "nic-hw")
                           for g in ("both", "byte_counter", "either"))
    assert rec["study_s"].null_count() == 0
    md = (tmp_path / "recovery.md").read_text().split("## Every variant")[0]
    assert "not run" not in md and md.count("| standard | ") == 2 and md.count("| nic-hw | ") == 2
    assert "gate byte_counter" in md and "gate either" in md
    pub = pl.read_csv(tmp_path / "published.csv")
    pub = pub.filter(pl.col("metric") == "recovery_time_10ms")
    assert sorted(pub["variant"].to_list()) == sorted(rec["variant"].to_list())
    rows = summary.filter(pl.col("metric") == "recovery_time_10ms")
    assert sorted(rows["variant"].to_list()) == sorted(rec["variant"].to_list())
    assert (tmp_path / "recovery_grid.png").is_file() and (tmp_path / "by_hotspot.png").is_file()
    assert HEADLINE.startswith("nic-hw-0.5G and nic-hw-1G") and "Headline: nic-hw-0.5G" in (
        tmp_path / "published.md").read_text()
