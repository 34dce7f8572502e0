"""The Python API on the real core: Scenario, run, Results."""

from __future__ import annotations

import json

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path

EXPECTED_COLUMNS = {
    "summary": ["metric", "value", "unit", "detail"],
    "port_throughput": ["port", "t_ps", "bin_ps", "bytes", "frames", "throughput_bps"],
    "queue_samples": ["port", "t_ps", "qlen_bytes", "qlen_frames"],
    "rp_rates": ["flow", "t_ps", "cr_bps", "tr_bps", "rl_active"],
    "events": ["t_ps", "kind", "node", "flow", "value"],
}
# Columns that must be present (the core may add more).
REQUIRED_COLUMNS = {
    "flows": ["flow", "src", "dst", "start_t_ps", "tx_frames", "tx_bytes", "rx_frames", "rx_bytes",
              "dropped_frames", "in_flight_frames", "fct_ps", "mean_delay_ps", "throughput_bps"],
    "ports": ["port", "link_rate_bps", "tx_frames", "tx_bytes", "drop_frames", "drop_bytes", "cnm_sent",
              "max_qlen_bytes", "mean_qlen_bytes"],
}


def test_public_names():
    for name in ("Scenario", "run", "Results", "ScenarioError", "__version__"):
        assert hasattr(qcnsim, name)
    assert issubclass(qcnsim.ScenarioError, ValueError)
    assert issubclass(qcnsim.ScenarioError, qcnsim._core.ScenarioError)
    assert qcnsim.__version__ == qcnsim._core.version()


def test_scenario_load_and_accessors(hotspot_path):
    sc = qcnsim.Scenario.load(hotspot_path)
    assert sc.path == hotspot_path
    assert sc.text == hotspot_path.read_text()
    assert sc.overrides == []
    assert sc.name == "hw-hotspot-1src"
    r = sc.resolved()
    assert isinstance(r, dict) and r["meta"]["name"] == "hw-hotspot-1src"


def test_with_overrides_returns_new_object(hotspot):
    sc2 = hotspot.with_overrides(["cc.qcn.cp.q_eq=26KB"])
    assert sc2 is not hotspot
    assert hotspot.overrides == []
    assert sc2.overrides == ["cc.qcn.cp.q_eq=26KB"]
    sc3 = sc2.with_overrides(["flows.0.rate=5Gbps"])
    assert sc3.overrides == ["cc.qcn.cp.q_eq=26KB", "flows.0.rate=5Gbps"]
    assert sc3.resolved()["flows"][0]["rate"] == "5Gbps"
    assert hotspot.resolved()["flows"][0]["rate"] == "10Gbps"


def test_from_text(hotspot_path):
    sc = qcnsim.Scenario.from_text(hotspot_path.read_text(), name="mine")
    assert sc.path is None and sc.name == "mine"
    sc.validate()


def test_variants(hotspot):
    vs = hotspot.variants()
    assert [v["name"] for v in vs] == ["hotspot-0.5G", "hotspot-1G", "nic-0.5G", "nic-1G", "nic-hw-0.5G", "nic-hw-1G"] + [
        f"{s}-gate-{g}-{h}" for s in ("hotspot", "nic", "nic-hw") for g in ("bc", "either") for h in ("0.5G", "1G")]
    for v in vs:
        assert isinstance(v["set"], dict)
    v1 = hotspot.variant("hotspot-1G")
    assert v1.resolved()["schedule"][0]["rate"] == "1Gbps"
    assert v1.resolved()["cc"]["qcn"]["feedback"] == "switch"
    hw = hotspot.variant("nic-hw-1G").resolved()
    assert hw["cc"]["qcn"]["feedback"] == "nic" and hw["schedule"][0]["rate"] == "1Gbps"
    assert (hw["cc"]["qcn"]["rp"]["min_rate"], hw["cc"]["qcn"]["rp"]["r_ai"], hw["cc"]["qcn"]["rp"]["r_hai"]) == (
        "9.6Mbps", "3.1Mbps", "51.2Mbps")
    with pytest.raises(qcnsim.ScenarioError) as ei:
        hotspot.variant("nope")
    assert ei.value.path == "variants"


def test_user_overrides_win_over_variant(hotspot):
    sc = hotspot.with_overrides(["schedule.0.rate=2Gbps"]).variant("hotspot-1G")
    assert sc.resolved()["schedule"][0]["rate"] == "2Gbps"


@pytest.mark.parametrize("name", ["hw-hotspot-1src", "hw-4rp"])
def test_reference_scenarios_validate(name):
    sc = qcnsim.Scenario.load(scenario_path(name))
    sc.validate()
    for v in sc.variants():
        sc.variant(v["name"]).validate()


def test_run_returns_polars_tables(short_results):
    res = short_results
    assert isinstance(res, qcnsim.Results)
    for name, cols in EXPECTED_COLUMNS.items():
        assert name in res.tables, name
        assert isinstance(res.tables[name], pl.DataFrame)
        assert res.tables[name].columns == cols, name
    for name, cols in REQUIRED_COLUMNS.items():
        missing = set(cols) - set(res.tables[name].columns)
        assert not missing, (name, missing)
    thr = res.tables["port_throughput"]
    assert thr.height > 0
    assert thr["t_ps"].dtype == pl.Int64 and thr["throughput_bps"].dtype == pl.Float64
    assert res.tables["rp_rates"]["rl_active"].dtype == pl.Boolean
    # physical sanity: nothing exceeds the 10 Gb/s line rate
    assert thr["throughput_bps"].max() <= 10e9 * 1.001


def test_summary_and_run_info(short_results):
    res = short_results
    s = res.summary
    assert s.columns == ["metric", "value", "unit", "detail"]
    assert "recovery_time" in s["metric"].to_list()
    assert s.filter(pl.col("metric") == "recovery_time")["unit"].to_list()[0] == "s"
    info = res.run_info
    assert info["seed"] == 11
    assert info["qcnsim_version"] == qcnsim.__version__
    assert info["resolved"]["meta"]["duration"] == "50ms"
    assert info["sim_time_s"] == pytest.approx(0.05)
    assert info["events"] > 0 and info["wall_s"] >= 0 and info["frames_forwarded"] > 0
    json.dumps(info)  # serialisable as is


def test_flow_conservation(short_results):
    f = short_results.tables["flows"].row(0, named=True)
    # every frame handed to the network is delivered, dropped or still in flight
    assert f["tx_frames"] >= f["rx_frames"]


def test_write_and_read_real_run(tmp_path, short_results):
    out = short_results.write(tmp_path / "run")
    back = qcnsim.Results.read(out)
    assert set(back.tables) == set(short_results.tables)
    for name, df in short_results.tables.items():
        assert back.tables[name].equals(df), name
    assert back.run_info["resolved"] == short_results.run_info["resolved"]


def test_run_accepts_a_path(tmp_path, hotspot_path):
    text = hotspot_path.read_text().replace('duration = "4s"', 'duration = "40ms"')
    text = text.replace('quick_duration = "4s"', 'quick_duration = "40ms"')
    text = text.replace('at = "1s"', 'at = "10ms"').replace('at = "3s"', 'at = "30ms"')
    p = tmp_path / "s.toml"
    p.write_text(text)
    res = qcnsim.run(p, seed=1, progress=False)
    assert res.run_info["sim_time_s"] == pytest.approx(0.04)
    res2 = qcnsim.run(str(p), seed=1, progress=False)
    assert res2.tables["summary"].equals(res.tables["summary"])


def test_progress_callback_gets_fractions(short_hotspot):
    fr = []
    qcnsim.run(short_hotspot.with_overrides(["meta.duration=2s", "schedule.0.at=0.5s", "schedule.1.at=1s"]),
               progress=fr.append)
    assert all(0.0 <= f <= 1.0 for f in fr)
    assert fr == sorted(fr)


LONG = ["meta.duration=20s", "schedule.0.at=1s", "schedule.1.at=3s"]


def test_progress_callback_exception_cancels_run(short_hotspot):
    """An exception raised by the callback stops the run (which would otherwise take many
    seconds) and propagates unchanged."""

    def boom(frac):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        qcnsim.run(short_hotspot.with_overrides(LONG), progress=boom)


def test_sigint_during_run_raises_keyboardinterrupt(short_hotspot):
    """Ctrl-C while the core runs (GIL released) cancels the run and raises KeyboardInterrupt."""
    import signal

    calls = []

    def ctrl_c(frac):
        calls.append(frac)
        signal.raise_signal(signal.SIGINT)

    # Python's own Ctrl-C handler, as in an interactive session: a process started as a shell's
    # background job (`cmd &` without job control) inherits SIGINT ignored, and Python then
    # installs no handler, so the raised signal would go nowhere.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            qcnsim.run(short_hotspot.with_overrides(LONG), progress=ctrl_c)
    finally:
        signal.signal(signal.SIGINT, old)
    assert len(calls) == 1


def test_bad_seed_rejected(short_hotspot):
    with pytest.raises(ValueError):
        qcnsim.run(short_hotspot, seed=-1)


def test_gil_released_during_run(short_hotspot):
    """While the core simulates in one thread, other Python threads keep running."""
    import threading
    import time

    out = {}
    sc = short_hotspot.with_overrides(["meta.duration=3s", "schedule.0.at=1s", "schedule.1.at=2s"])
    t = threading.Thread(target=lambda: out.update(res=qcnsim.run(sc, progress=False)))
    t.start()
    ticks = 0
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert "res" in out
    # With the GIL held for the whole run, this loop could not have run more than once or twice.
    assert ticks >= 5, ticks
