"""The fluid solver from Python and the fluid-xcheck experiment (quick form): qcnsim.fluid
returns packet-like tables, settles at Qeq at RTT 50 us and oscillates (emptying the queue) at
500 us; reproduce draws both models together and summarises each per variant."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path
from qcnsim.reproduce import reproduce

SHORT = ["meta.duration=50ms", "analysis.stats_from=25ms"]


def test_fluid_tables_and_fixed_point():
    sc = qcnsim.Scenario.load(scenario_path("fluid-xcheck")).with_overrides(SHORT)
    res = qcnsim.fluid(sc)
    assert res.run_info["solver"] == "fluid"
    q = res.tables["queue_samples"]
    assert q.columns == ["port", "t_ps", "qlen_bytes", "qlen_frames"]
    assert q["port"].unique().to_list() == ["sw->sink"]
    r = res.tables["rp_rates"]
    assert {"flow", "t_ps", "cr_bps", "tr_bps", "n_flows"} <= set(r.columns)
    assert r["cr_bps"][0] == pytest.approx(1e9)  # starts at C/N as the packet run does
    late = q.filter(pl.col("t_ps") >= 25 * 10**9)["qlen_bytes"]
    assert late.mean() == pytest.approx(33000, rel=0.01)
    inputs = dict(zip(res.tables["fluid_inputs"]["name"], res.tables["fluid_inputs"]["value"]))
    assert inputs["n_flows"] == 10 and inputs["sample_p"] == pytest.approx(0.01)
    # same scenario, same tables
    again = qcnsim.fluid(sc)
    assert again.tables["queue_samples"].equals(q)


def test_fluid_bad_input_is_a_scenario_error():
    sc = qcnsim.Scenario.load(scenario_path("fluid-xcheck")).with_overrides(
        ["analysis.bottleneck=sw->h0"])
    with pytest.raises(qcnsim.ScenarioError, match="analysis.bottleneck"):
        qcnsim.fluid(sc)


def test_fluid_xcheck_quick_reproduce(tmp_path):
    summary = reproduce("fluid-xcheck", tmp_path, quick=True, overrides=SHORT,
                        log=lambda s: None, echo=lambda s: None)
    for f in ("xcheck_queue.png", "xcheck_rates.png"):
        assert (tmp_path / f).is_file(), f
    for v in ("rtt50", "rtt100", "rtt200", "rtt500"):
        assert (tmp_path / f"{v}-fluid" / "run.json").is_file(), v

    def val(variant, metric):
        row = summary.filter((pl.col("variant") == variant) & (pl.col("metric") == metric))
        assert row.height == 1, (variant, metric)
        return row["value"][0]

    # the fluid model: at Qeq and stable at RTT 50 us, oscillating and emptying at 500 us
    assert val("rtt50", "queue_mean_fluid") == pytest.approx(33000, rel=0.01)
    assert val("rtt50", "stable_fluid") == 1.0
    assert val("rtt500", "stable_fluid") == 0.0
    assert val("rtt500", "queue_empty_fluid") > 0.1
    # both models share the fair rate, and the sources never needed more than they offer
    for v in ("rtt50", "rtt500"):
        assert val(v, "rate_mean_ratio") == pytest.approx(1.0, abs=0.02)
        assert val(v, "rate_max_packet") < 2e9
    # the packet queue sits near Qeq at RTT 50 us too
    assert val("rtt50", "queue_mean_ratio") == pytest.approx(1.0, abs=0.1)
