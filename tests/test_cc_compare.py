"""cc-compare: every congestion control on one leaf-spine, one variant per scheme
(docs/experiments/cc-compare.md). The quick form of every variant runs, the report has a row per
scheme (derived from the variants, not counted by hand), the per-workload statistics agree with
the core's, and a scheme added as one [[variants]] block is compared like the others."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
import qcnsim
from conftest import REPO, scenario_path
from qcnsim.experiments import cc_compare as cc
from qcnsim.reproduce import reproduce

PAGE = REPO / "docs" / "experiments" / "cc-compare.md"


def _quiet(**kw):
    return dict(log=lambda s: None, echo=lambda s: None, **kw)


def _schemes(path: Path):
    return [v["name"] for v in qcnsim.Scenario.load(path).variants() if v["quick"]]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("cc-compare")
    summary = reproduce("cc-compare", out, quick=True, **_quiet())
    return out, summary


def test_every_variant_runs_quick_with_a_row_per_scheme(quick):
    out, summary = quick
    schemes = _schemes(scenario_path("cc-compare"))
    assert len(schemes) >= 3 and len(set(schemes)) == len(schemes)
    table = pl.read_csv(out / "cc_compare.csv")
    assert table["scheme"].unique(maintain_order=True).to_list() == schemes
    # one row per (scheme, workload, metric, detail): nothing counted twice
    assert table.group_by(["scheme", "workload", "metric", "detail"]).len()["len"].max() == 1
    workloads = [w["name"] for w in qcnsim.Scenario.load(scenario_path("cc-compare")).resolved()["workloads"]]
    assert workloads == ["ws", "incast"]
    for s in schemes:
        mine = table.filter(pl.col("scheme") == s)
        for w in workloads:
            rows = {r["metric"]: r["value"] for r in mine.filter(pl.col("workload") == w).iter_rows(named=True)}
            # drain mode: every flow finished, so none is excluded; the slowdowns are real numbers
            assert rows["flows"] > 0 and rows["flows_unfinished"] == 0 and rows["flows_excluded"] == 0, (s, w)
            assert 1.0 <= rows["slowdown_p50"] <= rows["slowdown_p99"], (s, w)
        run = {r["metric"]: r["value"] for r in mine.filter(pl.col("workload") == "all").iter_rows(named=True)}
        assert run["drain_cap_reached"] == 0 and run["dropped_frames"] == 0  # lossless, drained
        assert run["pause_frames"] > 0  # the incast makes every scheme's switches pause
        tp = mine.filter(pl.col("metric") == "throughput")
        assert tp.height == 3 and (tp["value"] > 0).all() and (tp["value"] <= 40e9).all()
        assert mine.filter(pl.col("metric") == "queue_p99").height == 3
        # the incast's bursts: every one finished, within the run
        assert 0 < rows_of(mine, "incast", "burst_completion_max") < run["run_end"]
    # the same flows for every scheme (same seed): the workloads' flow counts agree, and every flow
    # has the same source, destination, size and start in every run
    counts = table.filter(pl.col("metric") == "flows").group_by("workload").agg(pl.col("value").n_unique())
    assert (counts["value"] == 1).all()
    cols = ["flow", "src", "dst", "size_bytes", "start_ps"]
    flows = [qcnsim.Results.read(out / s).tables["fct"].select(cols) for s in schemes]
    assert all(f.equals(flows[0]) for f in flows[1:])
    # the rows are in the experiment's summary too, with the scheme as the variant
    assert set(summary.filter(pl.col("workload").is_not_null())["variant"].unique()) == set(schemes)
    for f in ("cc_compare.md", "cc_compare_key.csv", "cc_fct_bins.csv", "cc_fct_slowdown.png", "cc_incast_slowdown.png",
              "cc_queue_cdf.png", "published.md"):
        assert (out / f).is_file(), f
    assert "No published numbers exist" in (out / "cc_compare.md").read_text(encoding="utf-8")


def test_the_report_section_shows_the_comparison(quick):
    # `qcnsim reproduce --all` renders the experiment as one section: its figures with their
    # captions, the key metrics with a column per scheme, the tidy table
    import html as _html

    from qcnsim import report

    out, summary = quick
    schemes = _schemes(scenario_path("cc-compare"))
    key = pl.read_csv(out / "cc_compare_key.csv")
    assert key.columns == ["workload", "metric", "where", "unit", *schemes]
    assert {"slowdown_p99", "pause_frames", "queue_p99", "throughput", "flows_excluded"} <= set(key["metric"])
    figs = [out / f for f in ("cc_fct_slowdown.png", "cc_incast_slowdown.png", "cc_queue_cdf.png")]
    page = report.render([report.ExperimentReport(name="cc-compare", out_dir=out, figures=figs, summary=summary)],
                         {"mode": "quick"})
    for cap in cc.CAPTIONS.values():
        assert _html.escape(cap, quote=True) in page
    for title in cc.REPORT_TABLES.values():
        assert _html.escape(title, quote=True) in page
    assert "<th>workload</th><th>metric</th><th>where</th><th>unit</th>" + "".join(
        f"<th>{s}</th>" for s in schemes) in page


def rows_of(t, workload, metric):
    r = t.filter((pl.col("workload") == workload) & (pl.col("metric") == metric))
    assert r.height == 1, (workload, metric)
    return r["value"][0]


class _AsOneWorkload:
    """A run whose flows are renamed into one workload, so that the experiment's per-workload
    statistics must equal the core's fct_stats over all flows."""

    def __init__(self, res):
        self.tables = dict(res.tables)
        self.tables["fct"] = res.tables["fct"].with_columns(
            pl.concat_str([pl.lit("all."), pl.int_range(pl.len()).cast(pl.Utf8)]).alias("flow"))
        self.resolved = {**res.resolved, "workloads": [{"name": "all"}]}
        self.summary = res.summary


@pytest.mark.parametrize("unfinished", ["exclude", "lower_bound"])
def test_bins_agree_with_the_core(quick, unfinished, tmp_path):
    out, _ = quick
    res = qcnsim.Results.read(out / "pfc")
    if unfinished == "lower_bound":
        # a short drain cap leaves flows unfinished: they enter as lower bounds
        sc = qcnsim.Scenario.load(scenario_path("cc-compare")).with_overrides(
            ["meta.variant=dcqcn", "meta.duration=2ms", "meta.drain_until=4ms", "analysis.fct_unfinished=lower_bound"])
        res = qcnsim.run(sc, progress=False)
    mine = cc.fct_bins("x", _AsOneWorkload(res))
    core = res.tables["fct_stats"].filter(pl.col("binning").is_in(["quantile", "all"]))
    if unfinished == "lower_bound":
        assert core["unfinished"].max() > 0
    j = core.join(mine, on=["binning", "size_bin", "stat"], how="inner", suffix="_mine")
    assert j.height == core.height == mine.height
    for a, b in (("flows", "flows_mine"), ("unfinished", "unfinished_mine"), ("size_bin_lo", "size_bin_lo_mine"),
                 ("size_bin_hi", "size_bin_hi_mine"), ("unfinished_as", "unfinished_as_mine")):
        assert j[a].cast(pl.Utf8).to_list() == j[b].cast(pl.Utf8).to_list(), a
    ok = [(x == y) or (x != x and y != y) or abs(x - y) <= 1e-9 * abs(x)
          for x, y in zip(j["slowdown"].to_list(), j["slowdown_mine"].to_list())]
    assert all(ok)


def test_percentile_is_the_nearest_rank():
    v = [float(x) for x in range(1, 101)]
    assert cc.percentile(v, 50) == 50 and cc.percentile(v, 99) == 99 and cc.percentile([3.0], 95) == 3
    assert cc.percentile([], 50) != cc.percentile([], 50)  # NaN
    assert cc.workload_of("ws.17", ["ws", "incast"]) == "ws" and cc.workload_of("f0", ["ws"]) is None


def _page_block() -> str:
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(r"<!-- example-variant -->\s*```toml\n(.*?)```", text, flags=re.S)
    assert m, "the page shows the block to add (marked <!-- example-variant -->)"
    return m.group(1)


def test_a_scheme_added_as_one_block_is_compared(tmp_path):
    # the page's example block, appended to a copy of the scenario, adds one scheme to the report
    block = _page_block()
    text = scenario_path("cc-compare").read_text(encoding="utf-8") + "\n" + block
    d = tmp_path / "scen"
    d.mkdir()
    (d / "cc-compare.toml").write_text(text, encoding="utf-8")
    schemes = _schemes(d / "cc-compare.toml")
    added = re.search(r'name = "([^"]+)"', block).group(1)
    assert schemes[-1] == added and len(schemes) == len(_schemes(scenario_path("cc-compare"))) + 1
    out = tmp_path / "out"
    # a shorter quick form (2 ms of arrivals, one incast) to keep the test short
    reproduce(str(d / "cc-compare.toml"), out, quick=True, overrides=["meta.quick_duration=2ms"], **_quiet())
    table = pl.read_csv(out / "cc_compare.csv")
    assert table["scheme"].unique(maintain_order=True).to_list() == schemes
    assert rows_of(table.filter(pl.col("scheme") == added), "ws", "flows") == \
        rows_of(table.filter(pl.col("scheme") == schemes[0]), "ws", "flows")
