"""Sweep axes keep their numeric order and units (tables, to_xarray, figures), and a sweep says
when an axis changed nothing (stderr, sweep.json, SweepResults.warnings, SweepWarning)."""

from __future__ import annotations

import json
import math
import warnings

import polars as pl
import pytest
import qcnsim
from conftest import run_cli
from qcnsim import plot, sweeps
from qcnsim.executors import LocalExecutor
from sweep_helpers import TRIVIAL

# TRIVIAL has cc.mode = "none": the QCN set point cannot change anything.
QEQ = "cc.qcn.cp.q_eq"
GIVEN = ["50KB", "5KB", "100KB", "20KB"]
SORTED = ["5KB", "20KB", "50KB", "100KB"]
#: For sweeps whose QCN axes (which change nothing here) are not the point of the test.
NO_WARNINGS = pytest.mark.filterwarnings("ignore::qcnsim.sweeps.SweepWarning")


@pytest.fixture
def trivial(tmp_path) -> qcnsim.Scenario:
    p = tmp_path / "trivial.toml"
    p.write_text(TRIVIAL, encoding="utf-8")
    return qcnsim.Scenario.load(p)


def quiet(_msg: str) -> None:
    pass


def run(trivial, axes, out, **kw):
    return qcnsim.sweep(trivial, axes, replications=1, executor=LocalExecutor(jobs=2), out=out, progress=False,
                        log=quiet, **kw)


# -- order ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis,given,want", [
    (QEQ, GIVEN, SORTED),                                                  # sizes
    ("cc.qcn.rp.timer", ["15ms", "500us", "2ms"], ["500us", "2ms", "15ms"]),  # times
    ("flows.0.rate", ["5Gbps", "500Mbps", "1Gbps"], ["500Mbps", "1Gbps", "5Gbps"]),  # rates
    ("cc.qcn.cp.w", ["4", "0.5", "2"], ["0.5", "2", "4"]),                 # plain numbers
    ("flows.0.traffic", ["poisson", "cbr", "bernoulli"], ["poisson", "cbr", "bernoulli"]),  # names: as given
])
def test_points_are_ordered_numerically_along_quantity_axes(trivial, axis, given, want):
    cli = sweeps.plan_sweep(trivial, [f"{axis}={','.join(given)}"])
    assert [p.overrides for p in cli.points] == [[f"{axis}={v}"] for v in want]
    if axis == "cc.qcn.cp.w":  # the API takes numbers as numbers
        given, want = [float(v) for v in given], [float(v) for v in want]
    api = sweeps.plan_sweep(trivial, {axis: given})
    assert [api.axes[0].raw[p.index[0]] for p in api.points] == want


def test_grid_and_zip_order(trivial):
    g = sweeps.plan_sweep(trivial, {"flows.0.traffic": ["poisson", "cbr"], QEQ: ["50KB", "5KB"]})
    assert [p.overrides for p in g.points] == [
        ["flows.0.traffic=poisson", f"{QEQ}=5KB"], ["flows.0.traffic=poisson", f"{QEQ}=50KB"],
        ["flows.0.traffic=cbr", f"{QEQ}=5KB"], ["flows.0.traffic=cbr", f"{QEQ}=50KB"]]
    # zip: along the first axis, the other axes' values move with it
    z = sweeps.plan_sweep(trivial, [f"{QEQ}=50KB,5KB,20KB", "flows.0.traffic=poisson,cbr,bernoulli"], mode="zip")
    assert [p.overrides for p in z.points] == [[f"{QEQ}=5KB", "flows.0.traffic=cbr"],
                                                [f"{QEQ}=20KB", "flows.0.traffic=bernoulli"],
                                                [f"{QEQ}=50KB", "flows.0.traffic=poisson"]]
    z = sweeps.plan_sweep(trivial, ["flows.0.traffic=poisson,cbr", f"{QEQ}=50KB,5KB"], mode="zip")
    assert [p.overrides for p in z.points] == [["flows.0.traffic=poisson", f"{QEQ}=50KB"],
                                                ["flows.0.traffic=cbr", f"{QEQ}=5KB"]]


def test_errors_index_the_values_as_given(trivial):
    with pytest.raises(qcnsim.ScenarioError) as ei:  # 50B is below the smallest set point (100B)
        sweeps.plan_sweep(trivial, {QEQ: ["50KB", "5KB", "50B"]})
    assert ei.value.path == f"axes['{QEQ}'][2]: {QEQ}", str(ei.value)


def test_size_axis_given_out_of_order_ends_sorted_everywhere(trivial, tmp_path):
    with pytest.warns(sweeps.SweepWarning):
        res = run(trivial, [f"{QEQ}={','.join(GIVEN)}"], tmp_path / "sw")
    assert res.points[QEQ].to_list() == SORTED
    assert res.points[f"{QEQ}_B"].to_list() == [5e3, 20e3, 50e3, 100e3]
    agg = res.metric("delivered_bytes")
    assert agg[QEQ].to_list() == SORTED and agg[f"{QEQ}_B"].to_list() == [5e3, 20e3, 50e3, 100e3]
    assert list(dict.fromkeys(res.aggregate[QEQ].to_list())) == SORTED
    assert list(dict.fromkeys(res.runs[QEQ].to_list())) == SORTED
    again = qcnsim.SweepResults.read(tmp_path / "sw")
    assert again.points[QEQ].to_list() == SORTED and again.aggregate.equals(res.aggregate)
    # sweep.json: the values as written, their SI values, the points in sweep order
    plan = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert plan["axes"][0]["values"] == GIVEN and plan["axes"][0]["si_values"] == [50e3, 5e3, 100e3, 20e3]
    assert [p["values"][QEQ] for p in plan["points"]] == SORTED


@NO_WARNINGS
def test_to_xarray_numeric_coordinates_with_units(trivial, tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pytest.importorskip("xarray")
    res = run(trivial, {"flows.0.traffic": ["poisson", "cbr"], QEQ: GIVEN, "cc.qcn.cp.w": [4, 0.5]},
              tmp_path / "x")
    ds = res.to_xarray()
    q = ds[QEQ]
    assert q.dtype.kind == "f" and q.values.tolist() == [5e3, 20e3, 50e3, 100e3]
    assert q.attrs["units"] == "B"
    assert ds[f"{QEQ}_label"].values.tolist() == SORTED
    assert ds[f"{QEQ}_B"].values.tolist() == [5e3, 20e3, 50e3, 100e3]  # the SI column, as before
    assert ds["cc.qcn.cp.w"].values.tolist() == [0.5, 4.0]  # plain numbers: numeric, ascending
    assert ds["flows.0.traffic"].values.tolist() == ["poisson", "cbr"]  # names: as given, not sorted
    assert ds["metric"].values.tolist() == res.metric_names()
    row = res.metric("delivered_bytes").filter(
        (pl.col(QEQ) == "20KB") & (pl.col("flows.0.traffic") == "cbr") & (pl.col("cc.qcn.cp.w") == 0.5))
    sel = {"flows.0.traffic": "cbr", "cc.qcn.cp.w": 0.5, "metric": "delivered_bytes", "detail": row["detail"][0]}
    assert ds["mean"].sel({**sel, QEQ: 20e3}).item() == pytest.approx(row["mean"][0])
    assert ds["mean"].sel({**sel, f"{QEQ}_label": "20KB"}).item() == pytest.approx(row["mean"][0])


@NO_WARNINGS
def test_to_xarray_time_and_rate_axes(trivial, tmp_path):
    pytest.importorskip("pyarrow")
    pytest.importorskip("xarray")
    res = run(trivial, {"flows.0.rate": ["5Gbps", "500Mbps"], "cc.qcn.rp.timer": ["15ms", "500us"]}, tmp_path / "t")
    ds = res.to_xarray()
    assert ds["flows.0.rate"].values.tolist() == [5e8, 5e9] and ds["flows.0.rate"].attrs["units"] == "bps"
    assert ds["cc.qcn.rp.timer"].values.tolist() == pytest.approx([5e-4, 1.5e-2])
    assert ds["cc.qcn.rp.timer"].attrs["units"] == "s"


# -- readable units in figures -------------------------------------------------------------------
@pytest.mark.parametrize("unit,values,want", [
    ("B", [5e3, 100e3], (1e3, "KB")),
    ("B", [2e6], (1e6, "MB")),
    ("B", [2048.0, 4096.0], (1024.0, "KiB")),
    ("B", [512.0], (1.0, "B")),
    ("s", [5e-4, 1.5e-2], (1e-3, "ms")),
    ("s", [5e-5], (1e-6, "µs")),
    ("s", [2.0], (1.0, "s")),
    ("bps", [5e8, 1e10], (1e9, "Gbps")),
    ("bps", [5e8], (1e6, "Mbps")),
    ("frames", [12345.0], (1.0, "frames")),
    ("B", [0.0], (1.0, "B")),
])
def test_readable_unit(unit, values, want):
    assert plot.readable_unit(unit, values) == want


@NO_WARNINGS
def test_sweep_plot_labels_axes_in_readable_units(trivial, tmp_path):
    res = run(trivial, {QEQ: GIVEN, "flows.0.traffic": ["poisson", "cbr"]}, tmp_path / "p")
    fig = plot.sweep_metric(res, "delivered_bytes", axis=QEQ)
    ax = fig.axes[0]
    assert ax.get_xlabel() == f"{QEQ} (KB)"
    assert ax.get_ylabel() in ("delivered_bytes (KB)", "delivered_bytes (MB)")
    assert [float(x) for x in ax.containers[0][0].get_xdata()] == [5.0, 20.0, 50.0, 100.0]
    fig = plot.sweep_metric(res, "delivered_bytes", axis="flows.0.traffic")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["poisson", "cbr"]
    rate = run(trivial, {"flows.0.rate": ["5Gbps", "500Mbps"]}, tmp_path / "r")
    ax = plot.sweep_metric(rate, "delivered_bytes").axes[0]
    assert ax.get_xlabel() == "flows.0.rate (Gbps)"
    assert [float(x) for x in ax.containers[0][0].get_xdata()] == [0.5, 5.0]


# -- axes that change nothing --------------------------------------------------------------------
MSG = f"axis {QEQ} changed nothing: every summary metric is identical at its 4 values"


def test_an_axis_that_cannot_matter_is_reported(trivial, tmp_path):
    with pytest.warns(sweeps.SweepWarning) as rec:
        res = run(trivial, {QEQ: GIVEN}, tmp_path / "n")
    assert res.warnings == [MSG]
    assert [str(w.message) for w in rec if issubclass(w.category, sweeps.SweepWarning)] == [MSG]
    assert json.loads((tmp_path / "n" / "sweep.json").read_text())["warnings"] == [MSG]
    assert qcnsim.SweepResults.read(tmp_path / "n").warnings == [MSG]
    assert MSG in res._repr_html_()


def test_a_parameter_that_matters_is_not_reported(trivial, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweeps.SweepWarning)
        res = run(trivial, {"flows.0.rate": ["2Gbps", "1Gbps"]}, tmp_path / "m")
    assert res.warnings == []
    assert json.loads((tmp_path / "m" / "sweep.json").read_text())["warnings"] == []


def test_only_the_axis_that_changed_nothing_is_reported(trivial, tmp_path):
    with pytest.warns(sweeps.SweepWarning):
        res = run(trivial, {"flows.0.rate": ["1Gbps", "2Gbps"], QEQ: ["50KB", "5KB"]}, tmp_path / "g")
    assert res.warnings == [f"axis {QEQ} changed nothing: every summary metric is identical at its 2 values "
                            "(for every combination of the other axes' values)"]


def test_run_sweep_logs_the_warning_or_passes_it_on(trivial, tmp_path):
    plan = sweeps.plan_sweep(trivial, {QEQ: ["5KB", "20KB"]})
    lines = []
    res = sweeps.run_sweep(plan, tmp_path / "l", executor=LocalExecutor(jobs=1), progress=False, log=lines.append)
    want = f"axis {QEQ} changed nothing: every summary metric is identical at its 2 values"
    assert res.warnings == [want] and f"warning: {want}" in lines
    got = []
    sweeps.run_sweep(plan, tmp_path / "l", executor=LocalExecutor(jobs=1), progress=False, log=quiet,
                     warn=got.append)
    assert got == [want]


def test_a_sweep_json_without_warnings_is_read(trivial, tmp_path):
    with pytest.warns(sweeps.SweepWarning):
        run(trivial, {QEQ: GIVEN}, tmp_path / "old")
    p = tmp_path / "old" / "sweep.json"
    plan = json.loads(p.read_text())
    del plan["warnings"]  # as written by an older qcnsim
    p.write_text(json.dumps(plan))
    assert qcnsim.SweepResults.read(tmp_path / "old").warnings == [MSG]


def _agg(rows):
    return pl.DataFrame(rows, schema={"a": pl.Utf8, "b": pl.Utf8, "metric": pl.Utf8, "unit": pl.Utf8,
                                      "detail": pl.Utf8, "mean": pl.Float64}, orient="row")


def test_no_effect_rule():
    same = _agg([("1", "x", "m", "B", "", 1.0), ("2", "x", "m", "B", "", 1.0 + 1e-13),
                 ("1", "y", "m", "B", "", 5.0), ("2", "y", "m", "B", "", 5.0)])
    assert sweeps.no_effect_warnings(same, ["a", "b"]) == [
        "axis a changed nothing: every summary metric is identical at its 2 values "
        "(for every combination of the other axes' values)"]
    # beyond the relative tolerance, at one combination only: the axis changed something
    diff = same.with_columns(pl.when((pl.col("a") == "2") & (pl.col("b") == "y")).then(5.0 * (1 + 1e-9))
                             .otherwise(pl.col("mean")).alias("mean"))
    assert sweeps.no_effect_warnings(diff, ["a", "b"]) == []
    # NaN equals NaN; a summary row present at one value only is a change
    nan = _agg([("1", "x", "m", "s", "", math.nan), ("2", "x", "m", "s", "", math.nan)])
    assert len(sweeps.no_effect_warnings(nan, ["a"])) == 1
    extra = _agg([("1", "x", "m", "B", "", 1.0), ("2", "x", "m", "B", "", 1.0), ("2", "x", "m", "B", "d", 1.0)])
    assert sweeps.no_effect_warnings(extra, ["a"]) == []
    # one value per combination (zip mode) or a single value: nothing to compare
    assert sweeps.no_effect_warnings(_agg([("1", "x", "m", "B", "", 1.0), ("2", "y", "m", "B", "", 1.0)]),
                                     ["a", "b"]) == []
    assert sweeps.no_effect_warnings(_agg([("1", "x", "m", "B", "", 1.0)]), ["a"]) == []


def test_cli_prints_the_warning_on_stderr(tmp_path):
    sc = tmp_path / "t.toml"
    sc.write_text(TRIVIAL, encoding="utf-8")
    out = tmp_path / "cli"
    r = run_cli("sweep", sc, "--out", out, "--sweep", f"{QEQ}=50KB,5KB", "--jobs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    want = f"warning: axis {QEQ} changed nothing: every summary metric is identical at its 2 values"
    assert want in r.stderr.splitlines()
    assert json.loads((out / "sweep.json").read_text())["warnings"] == [want[len("warning: "):]]
    table = [line for line in r.stdout.splitlines() if "delivered_bytes" in line]
    assert len(table) == 2 and "| 5KB " in table[0] and "| 50KB " in table[1]
    r = run_cli("sweep", sc, "--out", tmp_path / "ok", "--sweep", "flows.0.rate=2Gbps,1Gbps", "--jobs", "1",
                "--no-progress")
    assert r.returncode == 0 and not any(x.startswith("warning:") for x in r.stderr.splitlines()), r.stderr
