"""TIMELY and Swift in the packet simulator from Python, and their experiments' quick forms:
timely-fixedpoint (two flows from different starts, packet runs beside the TIMELY fluid model;
CoNEXT 2016: no unique fixed point) and swift-incast (the fabric delay beside Swift's target)."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path
from qcnsim.reproduce import reproduce


def _val(summary, variant, metric):
    row = summary.filter((pl.col("variant") == variant) & (pl.col("metric") == metric))
    assert row.height == 1, (variant, metric)
    return row["value"][0]


def test_timely_run_has_its_columns_and_a_bad_start_list_names_the_field():
    sc = qcnsim.Scenario.load(scenario_path("timely-fixedpoint")).with_overrides(
        ["meta.duration=2ms", "analysis.stats_from=1ms", "meta.variant=7-3"])
    res = qcnsim.run(sc)
    fl = res.tables["flows"]
    assert {"timely_rate_min", "timely_rate_max", "timely_rate", "timely_samples"} <= set(fl.columns)
    assert fl["timely_rate_min"].min() >= 100e6 and fl["timely_rate_max"].max() <= 10e9
    assert res.resolved["cc"]["timely"]["start_rate"] == ["7Gbps", "3Gbps"]
    bad = qcnsim.Scenario.load(scenario_path("timely-fixedpoint")).with_overrides(
        ['cc.timely.start_rate=["1Gbps", "2Gbps", "3Gbps"]'])
    with pytest.raises(qcnsim.ScenarioError, match="cc.timely.start_rate"):
        qcnsim.run(bad)


def test_timely_fixedpoint_quick_reproduce(tmp_path):
    summary = reproduce("timely-fixedpoint", tmp_path, quick=True, log=lambda s: None,
                        echo=lambda s: None)
    for f in ("timely_rates.png", "timely_queue.png"):
        assert (tmp_path / f).is_file(), f
    for v in ("5-5", "7-3", "3-7", "5-5-unscaled", "7-3-unscaled"):
        assert (tmp_path / f"{v}-fluid" / "run.json").is_file(), v
    # the fluid model: equal starts stay equal, 7 + 3 keeps the faster flow ahead
    assert _val(summary, "5-5", "share_f0_fluid") == pytest.approx(0.5, abs=1e-6)
    assert _val(summary, "7-3", "share_f0_fluid") > 0.7
    # the packet model: the faster start ends with more, and mirrored starts give mirrored splits
    # (quick form, 50 ms: 0.68 with the default step scaling, 0.74 in the fluid model)
    assert _val(summary, "7-3", "share_f0_packet") > 0.6
    assert _val(summary, "3-7", "share_f0_packet") < 0.4
    assert _val(summary, "7-3", "share_f0_packet") + _val(summary, "3-7", "share_f0_packet") == \
        pytest.approx(1.0, abs=1e-9)
    # equal packet starts do not stay equal (f1's frames lose the tie at the switch: one more
    # decrease at the first crossing of T_low, then the faster flow gains; docs/models/timely.md)
    assert _val(summary, "5-5", "share_f0_packet") > 0.55
    # unscaled steps (Algorithm 1 as printed): the faster flow gains more than with the scaling
    assert _val(summary, "7-3-unscaled", "share_f0_packet") > _val(summary, "7-3", "share_f0_packet") + 0.05
    for model in ("packet", "fluid"):
        assert _val(summary, "5-5", f"total_rate_{model}") > 9e9
    pub = pl.read_csv(tmp_path / "published.csv")
    assert pub.height == 2 and set(pub["metric"]) == {"queue_max_packet", "queue_max_fluid"}
    assert all("roughly 70KB" in s for s in pub["source"])


def test_swift_incast_quick_reproduce(tmp_path):
    summary = reproduce("swift-incast", tmp_path, quick=True, log=lambda s: None,
                        echo=lambda s: None)
    assert (tmp_path / "swift_queue.png").is_file()
    for v in ("n2", "n8"):
        # the delay settles within one RTT's aggregate additive increase of the target
        d, t = _val(summary, v, "delay_mean"), _val(summary, v, "target_mean")
        assert abs(d - t) <= _val(summary, v, "ai_per_rtt"), v
        assert _val(summary, v, "queue_delay") == pytest.approx(d, rel=0.05), v
    # flow scaling raises the target with N; with 64 flows the windows go below one packet (with
    # 32 they stayed at 1.2 or more once a window of 1-2 packets meant one packet in flight,
    # cc.swift.window_check = "after_send"; below 0.5 with "before_send")
    assert _val(summary, "n8", "target_mean") > _val(summary, "n2", "target_mean")
    assert _val(summary, "n64", "cwnd_min") < 1.0
    # the delay stays within one RTT's aggregate additive increase of the target at every N
    for v in ("n32", "n64"):
        d, t = _val(summary, v, "delay_mean"), _val(summary, v, "target_mean")
        assert abs(d - t) <= _val(summary, v, "ai_per_rtt"), v
    for v in ("n2", "n8", "n32", "n64"):
        assert _val(summary, v, "throughput") > 0.99 * 10e9, v
