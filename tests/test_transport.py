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
