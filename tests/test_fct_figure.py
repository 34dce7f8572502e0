"""The FCT slowdown figure (qcnsim.plot.fct_slowdown): one panel per load, x = flow size (log) at
each quantile bin's upper size, a colour per scheme fixed across panels, a line style per
statistic, one legend outside every panel's data; the fabric-websearch figure and its place in
the HTML report. docs/tables.md ("Figures of fct_stats")."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from qcnsim import plot

#: A small leaf-spine with a Poisson workload of small messages (about 50 to 120 flows per run),
#: PFC; cc.mode and the load are set per run.
FABRIC = """
[meta]
name = "small-fabric"
duration = "3ms"
seed = 1
[topology]
kind = "leaf-spine"
leaves = 2
spines = 1
hosts_per_leaf = 4
host_rate = "10Gbps"
spine_rate = "40Gbps"
leaf_buffer = "infinite"
spine_buffer = "infinite"
[defaults]
link_delay = "1us"
switch_latency = "500ns"
[[workloads]]
name = "w"
cdf = [[1000, 0.0], [10000, 0.5], [200000, 1.0]]
load = 0.3
stop = "1ms"
[flow_control]
mode = "pfc"
watermark = "ingress"
xoff = "100KB"
xon = "90KB"
[cc]
mode = "none"
"""
SCHEMES = {"pfc": "none", "dcqcn": "dcqcn"}
LOADS = (0.3, 0.6)


@pytest.fixture(scope="module")
def runs():
    sc = qcnsim.Scenario.from_text(FABRIC, name="small-fabric")
    return [(f"{name}-{int(load * 100)}", qcnsim.run(sc.with_overrides([f"cc.mode={mode}", f"workloads.0.load={load}"]),
                                                     progress=False))
            for name, mode in SCHEMES.items() for load in LOADS]


def _check_figure(fig, n_panels: int, schemes, stats=("p50", "p99")):
    """The paper-figure rules, on the matplotlib objects."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    axes = fig.axes
    assert len(axes) == n_panels
    for ax in axes:
        assert ax.get_xscale() == "log"
        assert ax.get_xlabel() in ("", "flow size (bytes, bin's upper size)")
    assert axes[0].get_ylabel() == "FCT slowdown (FCT / ideal FCT)"
    assert any(ax.get_xlabel() for ax in axes)
    # one legend, outside every panel (bounding boxes in display units do not overlap), inside the figure
    legends = fig.legends
    assert len(legends) == 1 and not any(ax.get_legend() for ax in axes)
    lb = legends[0].get_window_extent(renderer)
    for ax in axes:
        assert not lb.overlaps(ax.get_window_extent(renderer)), (lb, ax.get_window_extent(renderer))
    fb = fig.bbox
    assert fb.x0 <= lb.x0 and lb.x1 <= fb.x1 and fb.y0 <= lb.y0 and lb.y1 <= fb.y1
    texts = [t.get_text() for t in legends[0].get_texts()]
    assert texts == [*schemes, *stats]
    # one colour per scheme, the same in every panel; one line style per statistic
    colour_of, style_of = {}, {}
    for ax in axes:
        drawn = set()
        for line in ax.get_lines():
            scheme, stat = line.get_label().rsplit(", ", 1)
            assert colour_of.setdefault(scheme, to_hex(line.get_color())) == to_hex(line.get_color())
            assert style_of.setdefault(stat, line.get_linestyle()) == line.get_linestyle()
            drawn.add(scheme)
        assert drawn  # every panel has data
    assert set(colour_of) <= set(schemes) and len(set(colour_of.values())) == len(colour_of)
    assert set(style_of) == set(stats) and len(set(style_of.values())) == len(stats)
    # the legend's colours are the lines' colours
    handles = legends[0].legend_handles
    for text, h in zip(texts[:len(schemes)], handles):
        if text in colour_of:
            assert to_hex(h.get_color()) == colour_of[text]
    return colour_of


def test_fct_slowdown_panels_per_load_colours_per_scheme(runs, tmp_path):
    table = plot.fct_stats_table(runs, scheme=lambda v, r: v.rsplit("-", 1)[0],
                                 load=lambda v, r: r.resolved["workloads"][0]["load"])
    assert {"variant", "scheme", "load", "size_bin_hi", "stat", "slowdown"} <= set(table.columns)
    fig = plot.fct_slowdown(table, panel="load", scheme="scheme")
    colours = _check_figure(fig, len(LOADS), list(SCHEMES))
    assert colours == {s: c.lower() for s, c in zip(SCHEMES, plot.SCHEME_COLORS)}
    assert [ax.get_title().split("\n")[0] for ax in fig.axes] == ["30 % load", "60 % load"]
    # x: each quantile bin's upper size (20 bins of 5 % of the flows); y: the table's values
    q = table.filter((pl.col("binning") == "quantile") & (pl.col("stat") == "p99") & (pl.col("variant") == "dcqcn-60"))
    assert q.height == 20
    line = next(ln for ln in fig.axes[1].get_lines() if ln.get_label() == "dcqcn, p99")
    assert list(line.get_xdata()) == sorted(q["size_bin_hi"].to_list())
    assert list(line.get_ydata()) == q.sort("size_bin_hi")["slowdown"].to_list()
    # the unfinished flows are stated in each panel, per scheme (not summed over the schemes)
    flows = {r.tables["fct"].height for v, r in runs if v.endswith("-30")}
    assert len(flows) == 1  # every scheme runs the same flows
    assert f"no unfinished flow ({flows.pop()} flows per scheme), excluded" in fig.axes[0].get_title()
    assert fig.get_size_inches()[0] == pytest.approx(plot.PAPER_WIDTH)
    assert not list(tmp_path.iterdir())
    assert plot.save(fig, tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_fct_slowdown_from_runs_sweep_aggregates_and_bad_tables(runs):
    # runs directly: one panel, one scheme per run; scheme and panel as callables
    fig = plot.fct_slowdown(runs[:2])
    _check_figure(fig, 1, [v for v, _ in runs[:2]])
    fig = plot.fct_slowdown(runs, scheme=lambda v, r: v.split("-")[0],
                            panel=lambda v, r: r.resolved["workloads"][0]["load"], stats=("p50", "p95", "p99"))
    _check_figure(fig, 2, list(SCHEMES), stats=("p50", "p95", "p99"))
    # a table of means over seeds draws the mean and its CI band
    t = plot.fct_stats_table(runs, scheme=lambda v, r: v.split("-")[0], load=lambda v, r: v.split("-")[1])
    agg = t.rename({"slowdown": "mean"}).with_columns(ci95_low=pl.col("mean") * 0.9, ci95_high=pl.col("mean") * 1.1)
    fig = plot.fct_slowdown(agg, panel="load", scheme="scheme")
    _check_figure(fig, 2, list(SCHEMES))
    assert all(ax.collections for ax in fig.axes)  # the bands
    assert "95 % CI" in fig.legends[0].get_title().get_text()
    # rows that cannot be told apart, an open-ended bin, a missing column: refused with the reason
    with pytest.raises(ValueError, match="several rows"):
        plot.fct_slowdown(t, scheme="scheme")
    with pytest.raises(ValueError, match="open-ended"):
        plot.fct_slowdown(t, panel="load", scheme="scheme", binning="fixed")
    with pytest.raises(ValueError, match="no column 'load'"):
        plot.fct_slowdown(t.drop("load"), panel="load", scheme="scheme")
    with pytest.raises(ValueError, match="stats"):
        plot.fct_slowdown(t, panel="load", scheme="scheme", stats=("p42",))
    assert plot.fct_slowdown(pl.DataFrame()) is None


def test_fabric_websearch_figure_and_report(runs, tmp_path):
    """The experiment's figure: a panel per load, a colour per scheme (the variant name without
    its load), and the report embeds it with its caption."""
    from qcnsim.experiments import fabric_websearch as fw
    from qcnsim.report import ExperimentReport, render

    assert fw.scheme_of("qcn-gbn-shallow-50") == "qcn-gbn-shallow" and fw.scheme_of("pfc") == "pfc"
    fig = fw.slowdown_figure(runs)
    _check_figure(fig, len(LOADS), list(SCHEMES))
    # a variant outside the main schemes gets a panel of its own at its load, beside QCN there
    # (the runs stand in for QCN ones: only their labels matter here)
    d = dict(runs)
    more = [*runs, ("qcn-60", d["dcqcn-60"]), ("qcn-gbn-60", d["pfc-60"])]
    fig = fw.slowdown_figure(more)
    colours = _check_figure(fig, 3, ["pfc", "dcqcn", "qcn", "qcn-gbn"])
    assert [ax.get_title().split("\n")[0] for ax in fig.axes] == [
        "30 % load", "60 % load", "60 % load: buffers, transport, link failure"]
    in_group = {ln.get_label() for ln in fig.axes[2].get_lines()}
    assert in_group == {"qcn, p50", "qcn, p99", "qcn-gbn, p50", "qcn-gbn, p99"}
    assert len(set(colours.values())) == 4
    path = plot.save(fig, tmp_path / "fct_slowdown.png")
    html = render([ExperimentReport(name="fabric-websearch", out_dir=tmp_path, figures=[path])], {"qcnsim": "test"})
    assert html.count("<img ") == 1 and fw.CAPTIONS["fct_slowdown.png"][:40] in html


def test_unfinished_note_counts_per_scheme():
    t = pl.DataFrame({"scheme": ["a", "a", "b", "b"], "unfinished": [0, 1, 0, 0], "flows": [10, 10, 10, 10]})
    assert plot._unfinished_note(t, "scheme", ["a", "b"]) == "unfinished a 1 of 20 flows each"
    t = t.with_columns(pl.Series("unfinished", [0, 0, 0, 0]))
    assert plot._unfinished_note(t, "scheme", ["a", "b"]) == "no unfinished flow (20 flows per scheme)"
    t = pl.DataFrame({"scheme": ["a", "b"], "unfinished": [2, 0], "flows": [10, 12]})
    assert plot._unfinished_note(t, "scheme", ["a", "b"]) == "unfinished a 2/10, b 0/12 flows"
    assert plot._unfinished_note(t.filter(pl.col("scheme") == "a"), "scheme", ["a"]) == "unfinished 2 of 10 flows"
