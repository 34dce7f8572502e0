"""The TIMELY fluid model (Zhu et al., CoNEXT 2016) from Python: fluid.model = "timely" gives
per-flow rates and gradients, the split two flows end with depends on where they start (the
model has no unique fixed point), and its knobs are checked (docs/models/fluid.md)."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim

TEXT = """
[meta]
name = "timely-fluid"
duration = "100ms"
[defaults]
link_rate = "10Gbps"
switch_latency = "0us"
[[switches]]
name = "sw"
buffer = "infinite"
[[hosts]]
name = "sink"
[[hosts]]
name = "h{i}"
count = 2
[[links]]
between = ["sw", "sink"]
delay = "1us"
[[links]]
between = ["h{i}", "sw"]
delay = "1us"
count = 2
[[flows]]
name = "f{i}"
src = "h{i}"
dst = "sink"
traffic = "greedy"
frame = "1000B"
count = 2
[analysis]
bottleneck = "sw->sink"
stats_from = "50ms"
[fluid]
model = "timely"
"""


def _share(res, t0_ms: int) -> float:
    r = res.tables["rp_rates"].filter(pl.col("t_ps") >= t0_ms * 10**9)
    m = r.group_by("flow").agg(pl.col("cr_bps").mean()).sort("flow")
    rates = m["cr_bps"].to_list()
    return rates[0] / sum(rates)


def test_timely_fluid_tables():
    sc = qcnsim.Scenario.from_text(TEXT).with_overrides(["meta.duration=5ms", "analysis.stats_from=1ms"])
    res = qcnsim.fluid(sc)
    assert res.run_info["solver"] == "fluid"
    r = res.tables["rp_rates"]
    assert r.columns == ["flow", "t_ps", "cr_bps", "gradient", "n_flows"]
    assert sorted(r["flow"].unique().to_list()) == ["f0", "f1"]
    assert r["cr_bps"][0] == pytest.approx(5e9)  # "fair": C/N each
    s = res.tables["summary"]
    assert s.filter(pl.col("metric") == "fluid_flow_rate_mean").height == 2
    assert s.filter(pl.col("metric") == "fixed_rate").height == 0  # no fixed point (Theorem 1)
    inputs = dict(zip(res.tables["fluid_inputs"]["name"], res.tables["fluid_inputs"]["value"]))
    assert inputs["alpha"] == 0.875 and inputs["seg"] == 64000


def test_timely_split_depends_on_the_start():
    # Seg = 16 KB: from 5 + 5 Gb/s equal shares; from 7 + 3 Gb/s about 80 % / 20 %
    base = qcnsim.Scenario.from_text(TEXT).with_overrides(
        ["fluid.timely.seg=16KB", "meta.duration=400ms", "analysis.stats_from=300ms"])
    fair = qcnsim.fluid(base.with_overrides(['fluid.timely.start_rate=["5Gbps", "5Gbps"]']))
    skew = qcnsim.fluid(base.with_overrides(['fluid.timely.start_rate=["7Gbps", "3Gbps"]']))
    assert _share(fair, 300) == pytest.approx(0.5, abs=1e-6)
    assert 0.75 < _share(skew, 300) < 0.85


def test_timely_fluid_bad_knobs_name_the_field():
    sc = qcnsim.Scenario.from_text(TEXT)
    with pytest.raises(qcnsim.ScenarioError, match="fluid.timely.start_rate"):
        qcnsim.fluid(sc.with_overrides(['fluid.timely.start_rate=["1Gbps"]']))
    with pytest.raises(qcnsim.ScenarioError, match="fluid.timely.t_high"):
        qcnsim.fluid(sc.with_overrides(["fluid.timely.t_high=10us"]))
