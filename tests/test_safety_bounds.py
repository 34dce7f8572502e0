"""Bounds (issue 10): time/rate limits with clear errors, the recording budget and its pre-run
estimate, absurd frame counts, and the inconsistencies resolved one way (seeds, sweep axes,
quick_duration, negative values)."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from qcnsim import cli
from qcnsim.reproduce import quick_duration
from qcnsim.sweeps import plan_sweep


def _err(sc, *overrides) -> qcnsim.ScenarioError:
    with pytest.raises(qcnsim.ScenarioError) as ei:
        sc.with_overrides(list(overrides)).validate()
    return ei.value


def test_negative_values_say_so(short_hotspot):
    for o, path in [("meta.duration=-5s", "meta.duration"), ("links.0.rate=-1Gbps", "links.0.rate"),
                    ("flows.0.frame=-1500B", "flows.0.frame")]:
        e = _err(short_hotspot, o)
        assert e.path == path and "must not be negative" in str(e), str(e)


def test_times_and_rates_beyond_the_engine_are_refused(short_hotspot):
    for o, path, text in [
        ("links.0.delay=18446744073709000000ps", "links.0.delay", "at most 1000000s"),
        ("meta.duration=18446744073709551615ps", "meta.duration", "at most 1000000s"),
        ("schedule.0.rate=0.0001bps", "schedule.0.rate", "from 1bps to 1000Tbps"),
        ("flows.0.rate=99999999Tbps", "flows.0.rate", "from 1bps to 1000Tbps"),
    ]:
        e = _err(short_hotspot, o)
        assert e.path == path and text in str(e), str(e)


def test_absurd_frame_count_is_refused_before_running(short_hotspot):
    e = _err(short_hotspot, "meta.max_frames=1000")
    assert e.path == "meta.max_frames" and "frames in 50ms" in str(e) and "raise meta.max_frames" in str(e)


def test_memory_budget_names_the_estimate_and_the_fields(short_hotspot):
    e = _err(short_hotspot, "metrics.memory_budget=1MB", "metrics.max_event_rows=100000")
    msg = str(e)
    assert e.path == "metrics.memory_budget"
    assert "events" in msg and "metrics.max_event_rows" in msg and "MiB" in msg, msg
    short_hotspot.with_overrides(["metrics.memory_budget=1MB", "metrics.events=[]"]).validate()


def test_sampling_is_decimated_to_the_row_budget(short_hotspot):
    # 1 ps over 50 ms: 5e10 samples asked for; the resolved interval keeps the table in budget
    res = short_hotspot.with_overrides(["metrics.queue_interval=1ps"]).resolved()
    iv = res["metrics"]["queue_interval"]
    assert iv != "1ps"
    full = qcnsim.run(short_hotspot, seed=3, progress=False)
    small = qcnsim.run(short_hotspot.with_overrides(["metrics.max_sample_rows=20"]), seed=3, progress=False)
    for name in ("rp_rates", "queue_samples"):
        a, b = full[name], small[name]
        assert 0 < b.height <= 20 < a.height
        # every recorded sample is one of the full run's, identical (sampling does not disturb the run)
        assert b.join(a, on=b.columns, how="anti").height == 0
    # The run itself is not disturbed: every summary row that does not come from the throughput
    # bins is identical. (Rows computed from port_throughput, the windowed mean throughput and the
    # recovery time, follow its coarser bin: the bin is part of what is recorded.)
    # Each widened interval is a warning row (issue 27), with the interval used.
    def run_rows(summary):
        return summary.filter(~pl.col("metric").is_in(["mean_throughput", "recovery_time",
                                                       "warning_interval_widened"]))

    assert run_rows(small.summary).equals(run_rows(full.summary))
    warned = small.summary.filter(pl.col("metric") == "warning_interval_widened")
    assert full.summary.filter(pl.col("metric") == "warning_interval_widened").height == 0
    assert full.summary.height + warned.height == small.summary.height
    detail = {d.split(" = ")[0]: d for d in warned["detail"]}
    assert set(detail) == {"metrics.throughput_bin", "metrics.queue_interval", "metrics.rate_interval"}, detail
    for key, d in detail.items():
        assert f"widened to {small.resolved['metrics'][key.split('.')[1]]} " in d, d
    assert small.resolved["metrics"]["rate_interval"] != full.resolved["metrics"]["rate_interval"]
    assert 0 < small["port_throughput"].height <= 20


def test_seeds_take_0_to_2_64_minus_1_everywhere(short_hotspot):
    top = 2**64 - 1
    sc = short_hotspot.with_overrides([f'meta.seed="{top}"'])
    assert sc.resolved()["meta"]["seed"] == top
    assert _err(short_hotspot, "meta.seed=-1").path == "meta.seed"
    assert _err(short_hotspot, f'meta.seed="{top + 1}"').path == "meta.seed"
    plan = plan_sweep(short_hotspot, ["meta.seed=1"], 1, None, top)
    assert plan.base_seed == top
    assert plan.scenario.resolved()["meta"]["seed"] == top
    res = qcnsim.run(short_hotspot, seed=top, progress=False)
    assert res.seed == top
    with pytest.raises(qcnsim.ScenarioError):
        plan_sweep(short_hotspot, None, 1, None, top + 1)


def test_sweep_fields_are_refused_as_axes_everywhere(short_hotspot, capsys, hotspot_path):
    for axes in (["sweep.replications=1,2"], {"sweep.replications": [1, 2]}, ["variants.0.name=a,b"]):
        with pytest.raises(qcnsim.ScenarioError, match=r"outside \[sweep\] and \[\[variants\]\]"):
            plan_sweep(short_hotspot, axes)
    code = cli.main(["sweep", str(hotspot_path), "--out", "/tmp/never-written", "--sweep", "sweep.replications=1,2"])
    err = capsys.readouterr().err
    assert code == 2 and "outside [sweep]" in err


def test_quick_duration_may_exceed_duration(hotspot):
    sc = hotspot.with_overrides(["meta.duration=20ms", "meta.quick_duration=1s", "schedule.0.at=5ms",
                                 "schedule.1.at=10ms"])
    resolved = sc.resolved()
    assert quick_duration(resolved) == "20ms"  # the quick run is the whole (shorter) run


def test_identical_tables_within_the_budget(short_hotspot):
    """A budget far above the tables changes nothing (the default one is above every shipped
    scenario; the golden table hashes of the Rust suite check those)."""
    a = qcnsim.run(short_hotspot, seed=5, progress=False)
    b = qcnsim.run(short_hotspot.with_overrides(["metrics.max_sample_rows=1000000000"]), seed=5, progress=False)
    for name, df in a.tables.items():
        assert df.equals(b[name]), name
    assert isinstance(a.summary, pl.DataFrame)
