"""DCTCP from Python and its two experiments (quick forms): dctcp-analysis (the queue of N long
flows beside the SIGCOMM 2010 §3.3 analysis) and dctcp-testbed (two flows at the testbed's
thresholds). docs/models/dctcp.md."""

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


def test_dctcp_run_from_python_has_its_columns_and_resolved_section():
    sc = qcnsim.Scenario.load(scenario_path("dctcp-analysis")).with_overrides(
        ["meta.variant=n2", "meta.duration=5ms", "analysis.stats_from=1ms"])
    res = qcnsim.run(sc)
    fl = res.tables["flows"]
    assert {"acks_received", "ece_acks_received", "window_cuts", "window_bytes", "dctcp_alpha"} <= set(fl.columns)
    assert (fl["ecn_marked"] > 0).all() and (fl["window_cuts"] > 0).all()
    # one ACK per frame received (those of the frames in flight at the end still on their way)
    assert (fl["acks_received"] <= fl["rx_frames"]).all() and (fl["acks_received"] > 0.9 * fl["rx_frames"]).all()
    d = res.resolved["cc"]["dctcp"]
    assert d["k"] == 40 and d["echo"] == "state_machine" and d["cwr_growth"] == "hold"
    # the other modes' runs keep their columns
    other = qcnsim.run(qcnsim.Scenario.load(scenario_path("dcqcn-incast")).with_overrides(
        ["meta.duration=1ms", "analysis.stats_from=0.5ms"]))
    assert "dctcp_alpha" not in other.tables["flows"].columns


def test_dctcp_needs_go_back_n_flows():
    sc = qcnsim.Scenario.load(scenario_path("dctcp-analysis")).with_overrides(
        ["meta.variant=n2", "flows.0.transport=udp"])
    with pytest.raises(qcnsim.ScenarioError) as e:
        qcnsim.run(sc)
    assert "cc.mode" in str(e.value) and "gbn" in str(e.value)


def test_dctcp_analysis_quick_reproduce(tmp_path):
    summary = reproduce("dctcp-analysis", tmp_path, quick=True, log=lambda s: None, echo=lambda s: None)
    assert (tmp_path / "dctcp_queue.png").is_file()
    for v, n in (("n2", 2), ("n10", 10), ("n40", 40), ("n10-grow", 10)):
        # Q_max = K + N (eq. 12) within two packets
        assert abs(_val(summary, v, "queue_max") - (40 + n)) <= 2, v
        assert _val(summary, v, "queue_max_analysis") == 40 + n
    # the amplitude (eq. 10) within 25 % and the queue's rise within 20 % of T_C (eq. 11) where
    # the windows are large enough for the analysis (W* = 63 and 13 packets)
    for v in ("n2", "n10"):
        assert abs(_val(summary, v, "queue_amplitude") / _val(summary, v, "queue_amplitude_analysis") - 1) < 0.25, v
        assert abs(_val(summary, v, "queue_rise_rtts") / _val(summary, v, "queue_period_rtts_analysis") - 1) < 0.2, v
    # the published table: the analysis's formulas at each variant, every row matched
    pub = pl.read_csv(tmp_path / "published.csv")
    assert pub.height == 16
    assert pub["note"].fill_null("").str.contains("missing").sum() == 0
    assert pub["source"].str.starts_with("DCTCP10: 'Q_max = K + N'").sum() == 4


def test_dctcp_testbed_quick_reproduce(tmp_path):
    summary = reproduce("dctcp-testbed", tmp_path, quick=True, log=lambda s: None, echo=lambda s: None)
    assert (tmp_path / "dctcp_testbed_queue.png").is_file()
    # 10 Gb/s, K = 65: the sawtooth of the analysis (Q_max = 67, period 6.1 RTTs)
    assert 66 <= _val(summary, "10g-k65", "queue_max") <= 69
    assert abs(_val(summary, "10g-k65", "queue_period_rtts") / 6.13 - 1) < 0.1
    # the queue stays near K and the link busy at both speeds
    for v, k in (("1g-k20", 20), ("10g-k65", 65)):
        assert abs(_val(summary, v, "queue_mean") - k) < 0.25 * k, v
        assert _val(summary, v, "queue_min") > 0, v
