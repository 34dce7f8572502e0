"""Tidy data (seconds beside picoseconds, typed sweep axis values, xarray and pandas exports, the
sweep plot) and provenance in run.json and sweep.json."""

from __future__ import annotations

import hashlib
import json
import sys

import polars as pl
import pytest
import qcnsim
from qcnsim import _core, plot
from qcnsim.cli import main


def test_seconds_beside_picoseconds(short_results):
    q = short_results.table("queue_samples")
    assert q.columns.index("t_s") == q.columns.index("t_ps") + 1
    assert (q["t_s"] * 1e12 - q["t_ps"].cast(pl.Float64)).abs().max() < 1e-3
    thr = qcnsim.with_seconds(short_results["port_throughput"])
    assert {"t_s", "bin_s"} <= set(thr.columns)
    assert short_results.table("queue_samples", seconds=False).columns == short_results["queue_samples"].columns
    with pytest.raises(KeyError, match="did you mean 'queue_samples'"):
        short_results.table("queue_sample")


def test_si_values_parse_like_the_scenario_reader():
    assert _core.si_value("16KB") == (16000.0, "B")
    assert _core.si_value("2KiB") == (2048.0, "B")
    assert _core.si_value("10us") == (1e-05, "s")
    assert _core.si_value("5Gbps") == (5e9, "bps")
    assert _core.si_value("standard") is None and _core.si_value("5") is None


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    from conftest import SHORT, scenario_path

    sc = qcnsim.Scenario.load(scenario_path("hw-hotspot-1src")).with_overrides(SHORT)
    out = tmp_path_factory.mktemp("sw") / "sw"
    return qcnsim.sweep(sc, {"cc.qcn.cp.q_eq": ["16KB", "33KB"], "cc.qcn.rp.hai_mode": ["multiplied", "constant"]},
                        replications=2, out=out, progress=False, log=lambda s: None)


def test_sweep_axes_carry_si_values(small_sweep):
    pts = small_sweep.points
    assert pts["cc.qcn.cp.q_eq_B"].to_list() == [16000.0, 16000.0, 33000.0, 33000.0]
    assert "cc.qcn.rp.hai_mode_B" not in pts.columns  # names, not quantities
    for df in (small_sweep.runs, small_sweep.aggregate):
        assert "cc.qcn.cp.q_eq_B" in df.columns and df["cc.qcn.cp.q_eq_B"].dtype == pl.Float64
    plan = json.loads((small_sweep.out_dir / "sweep.json").read_text())
    assert plan["axes"][0]["si_column"] == "cc.qcn.cp.q_eq_B" and plan["axes"][0]["si_values"] == [16000.0, 33000.0]
    again = qcnsim.SweepResults.read(small_sweep.out_dir)
    assert again.axis_columns() == {"cc.qcn.cp.q_eq": "cc.qcn.cp.q_eq_B", "cc.qcn.rp.hai_mode": None}


def test_sweep_to_pandas_and_xarray(small_sweep):
    pytest.importorskip("pyarrow")
    xr = pytest.importorskip("xarray")
    pdf = small_sweep.aggregate.to_pandas()
    assert len(pdf) == small_sweep.aggregate.height
    ds = small_sweep.to_xarray()
    assert isinstance(ds, xr.Dataset)
    assert set(ds["mean"].dims) == {"cc.qcn.cp.q_eq", "cc.qcn.rp.hai_mode", "metric", "detail"}
    assert list(ds["cc.qcn.cp.q_eq_B"].values) == [16000.0, 33000.0]
    m = small_sweep.metric("dropped_frames").filter(
        (pl.col("cc.qcn.cp.q_eq") == "33KB") & (pl.col("cc.qcn.rp.hai_mode") == "constant"))
    # a quantity axis's coordinate is numeric (bytes); its values as written select too
    assert list(ds["cc.qcn.cp.q_eq"].values) == [16000.0, 33000.0]
    got = ds["mean"].sel({"cc.qcn.cp.q_eq": 33000.0, "cc.qcn.rp.hai_mode": "constant", "metric": "dropped_frames",
                          "detail": m["detail"][0]}).item()
    assert got == pytest.approx(m["mean"][0])


def test_sweep_plot_figure_and_cli(small_sweep, tmp_path, capsys):
    fig = plot.sweep_metric(small_sweep, "bottleneck_max_queue")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "cc.qcn.cp.q_eq (KB)"
    assert len(ax.containers) == 2  # one error-bar line per value of the other axis
    xs = sorted(set(float(x) for line in ax.get_lines() for x in line.get_xdata()))
    assert xs == [16.0, 33.0]
    fig2 = plot.sweep_metric(small_sweep, "bottleneck_max_queue", axis="cc.qcn.rp.hai_mode")
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["multiplied", "constant"]
    with pytest.raises(KeyError, match="did you mean"):
        plot.sweep_metric(small_sweep, "bottleneck_max_queue", axis="cc.qcn.cp.qeq")
    assert main(["plot", str(small_sweep.out_dir), "--metric", "bottleneck_max_queue", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "sweep_bottleneck_max_queue.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(small_sweep.out_dir), "--axis", "nope", "--out", str(tmp_path)]) == 2
    assert "no axis 'nope'" in capsys.readouterr().err


def test_run_json_provenance(tmp_path, hotspot_path, monkeypatch):
    from conftest import SHORT

    monkeypatch.setattr(sys, "argv", ["qcnsim", "run", "x"])
    sc = qcnsim.Scenario.load(hotspot_path).with_overrides(SHORT)
    qcnsim.run(sc, seed=3, progress=False).write(tmp_path / "r")
    prov = json.loads((tmp_path / "r" / "run.json").read_text())["provenance"]
    assert prov["qcnsim_version"] == qcnsim.__version__
    assert prov["scenario_path"] == str(hotspot_path.resolve())
    assert prov["scenario_sha256"] == hashlib.sha256(hotspot_path.read_bytes()).hexdigest()
    assert prov["command_line"] == ["qcnsim", "run", "x"]
    assert prov["python"] == ".".join(map(str, sys.version_info[:3]))
    assert prov["polars"] == pl.__version__
    assert prov["rust_core"]["version"] == _core.version() and prov["rust_core"]["rustc"].startswith("rustc ")
    assert prov["platform"] and prov["started"].endswith("+00:00")
    build = _core.build_info()
    assert prov["git_commit"] == build["git_commit"]
    assert len(prov["git_commit"]) in (0, 40)


def test_sweep_json_provenance(small_sweep):
    plan = json.loads((small_sweep.out_dir / "sweep.json").read_text())
    prov = plan["provenance"]
    assert prov["scenario_path"].endswith("hw-hotspot-1src.toml") and len(prov["scenario_sha256"]) == 64
    run = json.loads((small_sweep.run_dir(small_sweep.points["point"][0]) / "run.json").read_text())
    assert run["provenance"]["started"] == prov["started"]
