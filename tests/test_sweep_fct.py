"""A sweep aggregates FCT statistics over seeds with the size bin as columns (SweepResults.fct,
fct_aggregate.<fmt>), n = seeds and a confidence interval, one row per point; to_xarray() gives
them a numeric size-bin coordinate instead of text in ``detail``. docs/sweeps.md."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest
import qcnsim
from qcnsim import plot
from qcnsim.executors import LocalExecutor
from test_fct_figure import FABRIC

LOAD = "workloads.0.load"
SEEDS = 3


def _sweep(out):
    sc = qcnsim.Scenario.from_text(FABRIC, name="small-fabric")
    with warnings.catch_warnings():
        warnings.simplefilter("error", qcnsim.sweeps.SweepWarning)  # the load changes the results
        return qcnsim.sweep(sc, {LOAD: [0.6, 0.3]}, replications=SEEDS, executor=LocalExecutor(jobs=2), out=out,
                            tables=["summary"], progress=False, log=lambda _m: None)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sw") / "fct"
    return _sweep(out)


def test_fct_statistics_over_seeds(swept):
    fct = swept.fct
    assert {"binning", "size_bin", "size_bin_lo", "size_bin_hi", "stat", "n", "mean", "ci95_low",
            "ci95_high", "flows", "unfinished", "unfinished_as"} <= set(fct.columns)
    assert fct[LOAD].dtype == pl.Float64 and fct["size_bin_lo"].dtype == pl.Float64
    # one row per (point, bin, statistic): a series per point, not per seed
    keys = fct.group_by(["point", "binning", "size_bin", "stat"]).len()
    assert (keys["len"] == 1).all() and fct["point"].n_unique() == 2
    assert set(fct.filter(pl.col("binning") == "quantile")["size_bin"]) == {f"p{5 * i}-{5 * i + 5}" for i in range(20)}
    # every flow of these runs finishes: every bin with flows has a slowdown in every seed; the
    # >1MB bin has none (sizes up to 200 KB): n = 0, a NaN mean, not a made-up value
    assert (fct["runs"] == SEEDS).all() and (fct["unfinished"] == 0).all()
    held = fct["flows"] > 0
    assert (fct.filter(held)["n"] == SEEDS).all()
    empty = fct.filter(~held)
    assert set(empty["size_bin"]) == {">1MB"} and (empty["n"] == 0).all() and empty["mean"].is_nan().all()
    allsz = fct.filter((pl.col("size_bin") == "all sizes") & (pl.col("stat") == "p99")).sort(LOAD)
    assert allsz[LOAD].to_list() == [0.3, 0.6]
    for r in allsz.iter_rows(named=True):
        assert r["ci95_low"] < r["mean"] < r["ci95_high"] and math.isfinite(r["std"]) and r["std"] > 0
    # the mean is the mean of the runs' own fct_stats (kept per run although tables=["summary"])
    for r in fct.filter(pl.col("size_bin").is_in(["all sizes", "p50-55", "<100KB"])).iter_rows(named=True):
        vals, his = [], []
        for rep in range(SEEDS):
            res = swept.result(r["point"], rep)
            assert set(res.tables) == {"summary", "fct_stats"}
            t = res.tables["fct_stats"].filter((pl.col("size_bin") == r["size_bin"]) & (pl.col("stat") == r["stat"]))
            vals.append(t["slowdown"][0])
            his.append(t["size_bin_hi"][0])
        assert r["mean"] == pytest.approx(sum(vals) / SEEDS)
        assert r["size_bin_hi"] == pytest.approx(sum(his) / SEEDS)
    assert swept.fct_runs.height == 2 * SEEDS * fct.filter(pl.col("point") == fct["point"][0]).height
    # the summary's FCT rows aggregate over the seeds too: n = seeds, one row per point
    p99 = swept.aggregate.filter((pl.col("metric") == "fct_slowdown_p99")
                                 & pl.col("detail").str.starts_with("all sizes")).sort(LOAD)
    assert p99.height == 2 and (p99["n"] == SEEDS).all()
    assert p99["mean"].to_list() == pytest.approx(allsz["mean"].to_list())


def test_fct_statistics_read_back_and_resumed(swept):
    again = qcnsim.SweepResults.read(swept.out_dir)
    assert again.fct.equals(swept.fct) and again.fct_runs.equals(swept.fct_runs)
    assert (swept.out_dir / "fct_aggregate.parquet").is_file()
    resumed = _sweep(swept.out_dir)  # every run done: the fct tables are read from the runs on disk
    assert resumed.fct.equals(swept.fct)


def test_fct_to_xarray_numeric_size_bins(swept):
    pytest.importorskip("pyarrow")
    pytest.importorskip("xarray")
    ds = swept.to_xarray()
    assert ds["fct_mean"].dims == (LOAD, "size_bin", "stat")
    assert ds[LOAD].values.tolist() == [0.3, 0.6]
    assert ds["stat"].values.tolist() == ["mean", "p50", "p95", "p99"]
    bins = ds["size_bin"].values.tolist()
    assert bins[:3] == ["<100KB", "100KB-1MB", ">1MB"] and bins[-1] == "all sizes" and len(bins) == 24
    assert ds["binning"].values.tolist() == ["fixed"] * 3 + ["quantile"] * 20 + ["all"]
    for c in ("size_bin_lo", "size_bin_hi"):
        assert ds[c].dtype.kind == "f" and ds[c].dims == (LOAD, "size_bin") and ds[c].attrs["units"] == "B"
    assert ds["size_bin_hi"].sel({LOAD: 0.3, "size_bin": "<100KB"}).item() == 100_000.0
    q = ds["size_bin_hi"].sel({LOAD: 0.6}).where(ds["binning"] == "quantile", drop=True).values.tolist()
    assert q == sorted(q) and all(0 < v <= 200_000 for v in q)
    row = swept.fct.filter((pl.col(LOAD) == 0.6) & (pl.col("size_bin") == "p90-95") & (pl.col("stat") == "p95"))
    sel = {LOAD: 0.6, "size_bin": "p90-95", "stat": "p95"}
    assert ds["fct_mean"].sel(sel).item() == pytest.approx(row["mean"][0])
    assert ds["fct_n"].sel(sel).item() == SEEDS
    assert ds["fct_ci95_low"].sel(sel).item() == pytest.approx(row["ci95_low"][0])
    # the size bin is a coordinate, not text in `detail`: the summary's FCT rows are left out there
    assert not any(m.startswith("fct_") or m == "flows_unfinished" for m in ds["metric"].values.tolist())
    assert not any("size" in str(d) for d in ds["detail"].values.tolist())
    assert "delivered_bytes" in ds["metric"].values.tolist()


def test_fct_sweep_figures(swept):
    # the sweep's FCT metric against the axis: one error-bar series with a point per axis value
    detail = swept.metric("fct_slowdown_p99").filter(pl.col("detail").str.starts_with("all sizes"))["detail"][0]
    fig = plot.sweep_metric(swept, "fct_slowdown_p99", axis=LOAD, detail=detail)
    ax = fig.axes[0]
    assert len(ax.containers) == 1
    assert list(ax.containers[0].lines[0].get_xdata()) == [0.3, 0.6]
    # the slowdown figure from the sweep's means over seeds: a panel per load, CI bands
    fig = plot.fct_slowdown(swept.fct.with_columns(scheme=pl.lit("PFC only")), panel=LOAD, scheme="scheme")
    assert len(fig.axes) == 2 and all(ax.collections for ax in fig.axes)
