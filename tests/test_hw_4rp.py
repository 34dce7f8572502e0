"""hw-4rp with PAUSE: conditions (c) and (d) and the experiment's own figures and table."""

from __future__ import annotations

import polars as pl
import qcnsim
from conftest import scenario_path
from qcnsim.reproduce import reproduce

# The whole 3-phase schedule squeezed into 60 ms (20 ms per phase).
SHORT = ["meta.duration=60ms", "schedule.1.at=20ms", "schedule.2.at=40ms"]


ALL = ["a-qcn", "b-qcn-delay", "c-pause", "d-qcn-pause", "c-pause-8023max", "d-qcn-pause-8023max"]


def test_variants_are_the_four_conditions_and_the_8023_response():
    sc = qcnsim.Scenario.load(scenario_path("hw-4rp"))
    names = [v["name"] for v in sc.variants()]
    assert names == ALL
    res = sc.resolved()
    assert res["flow_control"]["mode"] == "none"  # (a) and (b) without PAUSE
    assert (res["flow_control"]["xoff"], res["flow_control"]["xon"]) == ("130000B", "110000B")
    # the FPGA NIC's response (docs/models/pause.md) and the 802.3 maximum, 67 quanta at 10 Gb/s
    assert res["flow_control"]["response_delay"] == "100ns"
    assert sc.variant("c-pause-8023max").resolved()["flow_control"]["response_delay"] == "3430400ps"


def test_reproduce_draws_all_conditions(tmp_path):
    summary = reproduce(str(scenario_path("hw-4rp")), tmp_path, quick=True, overrides=SHORT, seed=2,
                        log=lambda s: None, echo=lambda s: None)
    for fig in ("throughput.png", "queue.png", "nic_throughput.png", "drops.png", "pause_frames.png",
                "host_queues.png"):
        assert (tmp_path / fig).stat().st_size > 1000, fig
    cond = pl.read_csv(tmp_path / "conditions.csv")
    assert cond["variant"].to_list() == ALL
    by = {r["variant"]: r for r in cond.iter_rows(named=True)}
    # PAUSE frames only where PAUSE is on; the PAUSE-only condition pauses the NICs most
    assert by["a-qcn"]["pause_frames_sent"] == 0 and by["b-qcn-delay"]["pause_frames_sent"] == 0
    assert by["c-pause"]["pause_frames_sent"] > 0
    assert by["c-pause"]["nic_paused_time_s"] > by["d-qcn-pause"]["nic_paused_time_s"]
    # everything the four sources offer beyond the bottleneck is dropped somewhere
    for v in by.values():
        assert v["host_dropped_frames"] > 0
    rows = summary.filter(pl.col("metric") == "host_dropped_frames")
    assert rows.height == 6
    c = qcnsim.Results.read(tmp_path / "c-pause")
    assert c.tables["pause_bins"]["pause_received"].sum() > 0
    assert c.tables["pause_events"].height == 0  # not recorded in this experiment (per-bin counts)
    assert set(c.tables["host_queues"]["flow"].unique().to_list()) == {"rp0", "rp1", "rp2", "rp3"}
