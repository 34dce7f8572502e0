"""dcqcn-incast: a 16:1 incast at 40 Gb/s with PFC, DCQCN vs no congestion control vs QCN.

:func:`post` adds per variant (``variant``, ``metric``), from each run's tables:

* ``throughput`` (bps): the bottleneck's mean throughput (``port_throughput``, data and control
  frames) over the bins inside [``analysis.stats_from``, end);
* ``jain_fairness``: Jain's index (sum x)^2 / (n sum x^2) of the flows' received bytes over the
  whole run (1 = equal shares, 1/n = one flow takes everything);
* ``queue_mean`` / ``queue_max`` (B): the sampled bottleneck queue over the window;
* ``paused_fraction``: the mean over the senders' NIC ports of the share of the run they had
  their priority paused (``ports.paused_ps``); ``pause_frames``: PFC frames sent by the switch;
* ``feedback_frames``: CNPs (DCQCN) or CNMs (QCN) delivered to the sources.

and draws ``incast_queue.png`` (the bottleneck queue of every variant) and
``incast_throughput.png`` (the bottleneck throughput).

``PUBLISHED`` is empty: the DCQCN paper (Zhu et al., SIGCOMM 2015) measures incast and PFC on a
testbed, but its text could not be read (only its abstract, which states no number); the
experiment's page (docs/models/dcqcn.md, ``dcqcn-incast``) says what it checks instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

import polars as pl

from .fluid_xcheck import PS, _save, _stats_from_ps, plt, queue

#: No published number entered (see the module docstring): ``published.md`` says so.
PUBLISHED: List[dict] = []


def jain(x: List[float]) -> float:
    """Jain's fairness index of ``x`` (NaN when empty or all zero)."""
    s, s2 = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * s2) if x and s2 > 0 else float("nan")


def incast_stats(name: str, res) -> pl.DataFrame:
    from ..reproduce import parse_time_ps

    t0 = _stats_from_ps(res)
    end = parse_time_ps(res.resolved["meta"]["duration"])
    b = res.resolved["analysis"]["bottleneck"]
    tp = res.tables["port_throughput"].filter(
        (pl.col("port") == b) & (pl.col("t_ps") >= t0)
        & (pl.col("t_ps") + pl.col("bin_ps") <= end))
    q = queue(res).filter(pl.col("t_s") >= t0 / PS)["qlen_bytes"]
    flows = res.tables["flows"]
    ports = res.tables["ports"]
    # the senders' NIC ports: a host's only port, "<src>->..."
    src = set(flows["src"].to_list())
    senders = ports.filter(pl.col("port").str.split("->").list.first().is_in(list(src)))
    dur = float(end)
    fb = int(flows["cnp_received"].sum() + flows["cnm_received"].sum())
    rows = [
        ("throughput", float(tp["throughput_bps"].mean()) if tp.height else float("nan"), "bps",
         f"bottleneck {b}, from {t0 / PS:g} s"),
        ("jain_fairness", jain([float(v) for v in flows["rx_bytes"]]), "",
         f"received bytes of {flows.height} flows, whole run"),
        ("queue_mean", float(q.mean()) if q.len() else float("nan"), "B", f"{b}, from {t0 / PS:g} s"),
        ("queue_max", float(q.max()) if q.len() else float("nan"), "B", f"{b}, from {t0 / PS:g} s"),
        ("paused_fraction", float(senders["paused_ps"].mean()) / dur if senders.height else float("nan"),
         "", f"mean over {senders.height} sender NIC ports, whole run"),
        ("pause_frames", float(ports["pause_sent"].sum()), "frames", "all ports"),
        ("feedback_frames", float(fb), "frames", "CNPs or CNMs delivered to the sources"),
    ]
    return pl.DataFrame({"variant": [name] * len(rows), "metric": [r[0] for r in rows],
                         "value": [float(r[1]) for r in rows], "unit": [r[2] for r in rows],
                         "detail": [r[3] for r in rows]})


def post(ctx):
    out: Path = ctx.out_dir
    if not ctx.runs:
        return [], None
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for name, res in ctx.runs:
        q = queue(res)
        ax.plot(q["t_s"] * 1e3, q["qlen_bytes"] / 1e3, lw=0.7, label=name)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("bottleneck queue (KB)")
    ax.legend(fontsize=8)
    figs = [_save(fig, out / "incast_queue.png")]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for name, res in ctx.runs:
        b = res.resolved["analysis"]["bottleneck"]
        tp = res.tables["port_throughput"].filter(pl.col("port") == b)
        ax.step(tp["t_ps"] / PS * 1e3, tp["throughput_bps"] / 1e9, where="post", lw=0.8, label=name)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("bottleneck throughput (Gb/s)")
    ax.legend(fontsize=8)
    figs.append(_save(fig, out / "incast_throughput.png"))
    return figs, pl.concat([incast_stats(name, res) for name, res in ctx.runs])
