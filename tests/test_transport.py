"""Go-back-N from Python: the fct table's transport columns and the slowdown figure (a Figure,
saving optional). docs/models/transport.md."""

from __future__ import annotations

import qcnsim
from matplotlib.figure import Figure
from qcnsim import plot

INCAST = """
[meta]
duration = "10ms"
[defaults]
buffer = "30KB"
nic_buffer = "infinite"
[[switches]]
name = "sw"
""" + "".join(
    f'[[hosts]]\nname = "h{h}"\n[[links]]\nbetween = ["h{h}", "sw"]\nrate = "10Gbps"\n' for h in range(4)
) + "".join(
    f'[[flows]]\nsrc = "h{h}"\ndst = "h3"\nrate = "10Gbps"\nsize = "200KB"\nstart = "{h}us"\ntransport = "TP"\n'
    for h in range(3)
)


def test_gbn_flows_finish_where_udp_flows_do_not(tmp_path):
    gbn = qcnsim.run(qcnsim.Scenario.from_text(INCAST.replace("TP", "gbn"), name="gbn"))
    udp = qcnsim.run(qcnsim.Scenario.from_text(INCAST.replace("TP", "udp"), name="udp"))
    fg, fu = gbn.tables["fct"], udp.tables["fct"]
    assert fg["finished"].all() and fg["transport"].to_list() == ["gbn"] * 3
    assert (fg["retransmitted_bytes"] > 0).all() and (fg["delivered_bytes"] == fg["size_bytes"]).all()
    assert not fu["finished"].all() and (fu["retransmitted_bytes"] == 0).all()
    s = gbn.summary
    assert s.filter(s["metric"] == "retransmitted_bytes")["value"][0] == fg["retransmitted_bytes"].sum()
    # the figure: returned, written only when asked
    fig = plot.fct_slowdown({"gbn": gbn, "udp": udp})
    assert isinstance(fig, Figure) and fig.axes[0].get_xscale() == "log"
    assert not list(tmp_path.iterdir())
    out = plot.save(fig, tmp_path / "fct.png")
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert plot.fct_slowdown({"x": qcnsim.run(qcnsim.Scenario.from_text(
        INCAST.replace("TP", "udp").replace('size = "200KB"\n', ""), name="x"))}) is None


def test_cli_prints_the_runs_warnings(tmp_path):
    """Open-loop flows that lose frames cannot complete: the summary says so, and `qcnsim run`
    repeats it on stderr (docs/tables.md, "Warnings")."""
    from conftest import run_cli

    path = tmp_path / "incast.toml"
    path.write_text(INCAST.replace("TP", "udp"))
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "warning: unrecovered loss:" in r.stderr
    assert "at their senders" in r.stderr
    path.write_text(INCAST.replace("TP", "gbn"))
    r = run_cli("run", path, "--out", tmp_path / "out2")
    assert r.returncode == 0, r.stderr
    assert "warning:" not in r.stderr


def test_fct_rows_aggregate_over_seeds(tmp_path):
    """A sweep aggregates the FCT summary rows of each size bin over its seeds (one row per bin
    and metric with n = replications): their detail is the same text in every run."""
    import warnings

    from qcnsim.executors import LocalExecutor

    text = INCAST.replace("TP", "gbn").replace('size = "200KB"', 'size = "20KB"')
    sc = qcnsim.Scenario.from_text(text, name="fct-seeds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flow rate axis is what it is: no claim on it here
        res = qcnsim.sweep(sc, {"flows.0.rate": ["5Gbps", "10Gbps"]}, replications=3,
                           executor=LocalExecutor(jobs=2), out=tmp_path / "sw", progress=False,
                           log=lambda _m: None)
    agg = res.aggregate
    fct = agg.filter(agg["metric"].is_in(["fct_slowdown_p50", "flows_unfinished", "fct_flows"]))
    assert fct.height == 2 * 3 * 4  # points x metrics x bins (3 sizes + all): one row each
    counts = fct.filter(fct["metric"] != "fct_slowdown_p50")
    assert (counts["n"] == 3).all()
    # the slowdowns: every seed's value in the bins that hold the (20 KB) flows, none in the others
    p50 = fct.filter(fct["metric"] == "fct_slowdown_p50")
    held = p50["detail"].str.starts_with("all sizes") | p50["detail"].str.starts_with("size <100KB")
    assert (p50.filter(held)["n"] == 3).all() and (p50.filter(~held)["n"] == 0).all()
    flows = fct.filter((fct["metric"] == "fct_flows") & fct["detail"].str.starts_with("all sizes"))
    assert flows["mean"].to_list() == [3.0, 3.0]
