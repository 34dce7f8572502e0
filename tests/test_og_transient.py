"""og-hotspot-10src end to end (shortened): every scheme runs, the experiment hook draws its
figures and the comparison table has one row per variant with the scheme-specific numbers."""

from __future__ import annotations

import polars as pl
from qcnsim.reproduce import reproduce

SHORT_OG = ["meta.duration=200ms", "schedule.0.at=40ms", "schedule.1.at=120ms"]


def test_og_hotspot_quick_reproduce(tmp_path):
    summary = reproduce("og-hotspot-10src", tmp_path, quick=True, overrides=SHORT_OG,
                        log=lambda s: None, echo=lambda s: None)
    variants = summary["variant"].unique().to_list()
    assert len(variants) == 11
    for f in ("recovery_throughput.png", "recovery_time.png", "downward.png", "trr_trace.png",
              "queue_transients.png", "sonar_events.png", "comparison.csv"):
        assert (tmp_path / f).is_file(), f
    comp = pl.read_csv(tmp_path / "comparison.csv")
    assert comp.height == 11
    # target-rate reduction on and off under both CP readings (the standard's and arrivals)
    assert {"rtt500-qcn", "rtt500-trr-off", "rtt500-arrivals", "rtt500-arrivals-trr-off",
            "rtt40-arrivals", "rtt40-arrivals-trr-off"} <= set(comp["variant"].to_list())
    sonar = comp.filter(pl.col("variant") == "rtt500-sonar")
    assert sonar["sonar_short_fuse"][0] >= sonar["sonar_false_alarms"][0] >= 0
    for v in ("rtt40-pushback-5ms", "rtt40-pushback-5ms-2ctr"):  # one and two cycle counters
        assert comp.filter(pl.col("variant") == v)["fb99_sent"][0] > 0
    # schemes without SONAR / push-back report no such rows
    assert comp.filter(pl.col("variant") == "rtt500-qcn")["fb99_sent"].null_count() == 1
    dt = summary.filter(pl.col("metric") == "downward_transient_time")
    assert dt.height == 11


def test_og_stability_quick_reproduce(tmp_path):
    summary = reproduce("og-stability", tmp_path, quick=True, overrides=["meta.duration=150ms"],
                        log=lambda s: None, echo=lambda s: None)
    for f in ("stability_queue.png", "stability_rates.png"):
        assert (tmp_path / f).is_file(), f
    rows = summary.filter(pl.col("metric") == "jain_fairness")
    assert rows["variant"].to_list() == ["n10-5ms", "n100-5ms", "n400-5ms", "n400-7ms"]
    # `count` expanded the sources: one rp_rates series per source
    for v, n in (("n10-5ms", 10), ("n100-5ms", 100), ("n400-7ms", 400)):
        flows = pl.read_parquet(tmp_path / v / "flows.parquet")
        assert flows.height == n
    # 400 sources into 10G: the CP throttles them with CNMs
    assert pl.read_parquet(tmp_path / "n400-5ms" / "flows.parquet")["cnm_received"].sum() > 400
    q = summary.filter(pl.col("metric") == "queue_std")
    assert q.height == 4 and (q["value"] >= 0).all()
