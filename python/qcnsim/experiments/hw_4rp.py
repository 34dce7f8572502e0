"""hw-4rp: the four conditions of the hardware study side by side.

``qcnsim reproduce hw-4rp`` runs (a) QCN, (b) QCN with a 200 us delay line, (c) PAUSE only and
(d) QCN + PAUSE; the common figures show the bottleneck throughput, queue and rates. This hook
adds what they lack:

- ``throughput.png`` redrawn for the bottleneck port only, and ``nic_throughput.png``: the
  aggregate throughput of the four NICs (the hardware study's "aggregate NIC throughput");
- ``drops.png``: cumulative dropped frames vs time, at the switch and at the hosts (rate-limiter
  and NIC queues);
- ``pause_frames.png``: PAUSE frames per throughput bin (received by the four NICs, i.e. sent
  by the switch a few microseconds earlier), and ``host_queues.png``: the frames waiting at the
  hosts (rate-limiter plus NIC queues, all four hosts);
- ``conditions.md`` / ``conditions.csv``: per condition, drops at the switch and at the hosts,
  recovery time after the 2 Gb/s period, PAUSE frames sent and the time the NICs were paused.

Extra summary rows: ``host_dropped_frames`` per condition.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

# What study 004 (NEC / Stanford, 10G QCN hardware, 4 RPs; docs/sources.md#hardware-study) reports for its four conditions.
#: Which variants carry the headline result, and why (written into summary.md by reproduce).
HEADLINE = ("a-qcn .. d-qcn-pause: the NICs answer PAUSE after 0.1 us (flow_control.response_delay), "
            "the order of an FPGA MAC's receive path (the study's NIC is an FPGA board; "
            "docs/models/pause.md); c-pause-8023max and d-qcn-pause-8023max run the 802.3 maximum "
            "(67 quanta) beside them")
PUBLISHED = [
    dict(metric="recovery_time", variant="a-qcn", value=70.0, unit="ms",
         source="004: 'Recovery Time: 70 msec' (4-RPs, QCN, Delay Line: disabled; "
                "'Data sampling interval in HW = 5msec')"),
    dict(metric="dropped_frames", variant="c-pause", value=0.0, unit="frames",
         source="004: 'Zero Packet Drop' (4-RPs, Pause (No QCN); Watermark_hi= 130K, Watermark_lo= 110K)"),
    dict(metric="dropped_frames", variant="d-qcn-pause", value=0.0, unit="frames",
         source="004: 'Zero Packet Drop' (4-RPs, QCN + Pause); 'We confirmed Zero-loss delivery at QCN + Pause.'"),
]

from .. import plot  # noqa: E402
from .._tables import to_markdown  # noqa: E402

BOTTLENECK = "sw->sink"


def _bottleneck(res) -> str:
    try:
        return res.resolved.get("analysis", {}).get("bottleneck") or BOTTLENECK
    except AttributeError:
        return BOTTLENECK


def _summary_value(res, metric: str, detail: str = "") -> float:
    s = res.summary
    if s.height == 0:
        return math.nan
    rows = s.filter((pl.col("metric") == metric) & pl.col("detail").str.contains(detail, literal=True))
    return float(rows["value"][0]) if rows.height else math.nan


def _time_axis(runs) -> Tuple[float, str]:
    tmax = 0.0
    for _, r in runs:
        tp = r.tables.get("port_throughput")
        if tp is not None and tp.height:
            tmax = max(tmax, float(tp["t_ps"].max()))
    return plot._time_scale(tmax)


def _finish(fig, ax, title: str, ylabel: str, unit: str, out: Path) -> Path:
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    if ax.get_lines():
        ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=plot.DPI)
    plt.close(fig)
    return out


def nic_throughput(runs, out: Path) -> Optional[Path]:
    """Aggregate throughput of the host NIC ports (``h*->sw``) per condition."""
    div, unit = _time_axis(runs)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, r in runs:
        tp = r.tables.get("port_throughput")
        if tp is None or tp.height == 0:
            continue
        nic = tp.filter(pl.col("port").str.ends_with("->sw"))
        if nic.height == 0:
            continue
        agg = nic.group_by("t_ps").agg(pl.col("throughput_bps").sum()).sort("t_ps")
        ax.step(agg["t_ps"].to_numpy() / div, agg["throughput_bps"].to_numpy() / 1e9, where="post",
                label=label, linewidth=1.0)
    if not ax.get_lines():
        plt.close(fig)
        return None
    return _finish(fig, ax, "Aggregate NIC throughput (4 hosts)", "throughput (Gb/s)", unit, out)


def drops(runs, out: Path) -> Optional[Path]:
    """Cumulative dropped frames vs time: at the switch (events) and at the hosts (host_queues)."""
    div, unit = _time_axis(runs)
    fig, (ax_sw, ax_h) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    drawn = False
    for label, r in runs:
        ev = r.tables.get("events")
        if ev is not None and ev.height:
            d = ev.filter((pl.col("kind") == "drop") & pl.col("node").str.starts_with("sw->")).sort("t_ps")
            if d.height:
                t = d["t_ps"].to_numpy() / div
                ax_sw.step(t, range(1, d.height + 1), where="post", label=label, linewidth=1.0)
                drawn = True
        hq = r.tables.get("host_queues")
        if hq is not None and hq.height:
            agg = (hq.group_by("t_ps")
                   .agg((pl.col("rl_dropped_frames") + pl.col("nic_dropped_frames")).sum().alias("d"))
                   .sort("t_ps"))
            ax_h.plot(agg["t_ps"].to_numpy() / div, agg["d"].to_numpy(), label=label, linewidth=1.0)
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax_sw.set_title("Frames dropped at the switch (cumulative)")
    ax_sw.set_ylabel("frames")
    ax_h.set_title("Frames dropped at the hosts: rate-limiter + NIC queues (cumulative)")
    ax_h.set_ylabel("frames")
    for ax in (ax_sw, ax_h):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        if ax.get_lines():
            ax.legend(fontsize="small", loc="best")
    ax_h.set_xlabel(f"time ({unit})")
    fig.tight_layout()
    fig.savefig(out, dpi=plot.DPI)
    plt.close(fig)
    return out


def pause_frames(runs, out: Path) -> Optional[Path]:
    """PAUSE frames received by the four NICs per bin (from ``pause_bins``), per condition."""
    div, unit = _time_axis(runs)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bin_txt = ""
    for label, r in runs:
        pb = r.tables.get("pause_bins")
        if pb is None or pb.height == 0:
            continue
        nic = pb.filter(pl.col("port").str.ends_with("->sw"))
        agg = nic.group_by("t_ps").agg(pl.col("pause_received").sum()).sort("t_ps")
        ax.step(agg["t_ps"].to_numpy() / div, agg["pause_received"].to_numpy(), where="post",
                label=label, linewidth=1.0)
        bin_txt = f" per {int(pb['bin_ps'][0]) / 1e9:g} ms"
    if not ax.get_lines():
        plt.close(fig)
        return None
    return _finish(fig, ax, f"PAUSE frames (XOFF, refresh, XON) received by the NICs{bin_txt}", "frames",
                   unit, out)


def host_queues(runs, out: Path) -> Optional[Path]:
    """Bytes waiting at the hosts (rate-limiter + NIC queues of the four hosts)."""
    div, unit = _time_axis(runs)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, r in runs:
        hq = r.tables.get("host_queues")
        if hq is None or hq.height == 0:
            continue
        agg = (hq.group_by("t_ps")
               .agg((pl.col("rl_qlen_bytes") + pl.col("nic_qlen_bytes")).sum().alias("b"))
               .sort("t_ps"))
        ax.plot(agg["t_ps"].to_numpy() / div, agg["b"].to_numpy() / 1e3, label=label, linewidth=1.0)
    if not ax.get_lines():
        plt.close(fig)
        return None
    return _finish(fig, ax, "Frames waiting at the hosts (rate-limiter + NIC queues)", "bytes (KB)", unit, out)


def conditions_table(runs) -> pl.DataFrame:
    rows = []
    for label, r in runs:
        ports = r.tables.get("ports")
        paused = 0.0
        if ports is not None and ports.height and "paused_ps" in ports.columns:
            paused = float(ports.filter(pl.col("port").str.ends_with("->sw"))["paused_ps"].sum()) / 1e12
        rl = _summary_value(r, "rl_dropped_frames")
        nic = _summary_value(r, "nic_dropped_frames")
        pf = _summary_value(r, "pause_frames_sent")
        rows.append({
            "variant": label,
            "switch_dropped_frames": _summary_value(r, "dropped_frames"),
            "host_dropped_frames": rl + nic,
            "recovery_time_s": _summary_value(r, "recovery_time", _bottleneck(r)),
            "pause_frames_sent": 0.0 if math.isnan(pf) else pf,
            "nic_paused_time_s": paused,
            "bottleneck_max_queue_bytes": _summary_value(r, "bottleneck_max_queue"),
        })
    return pl.DataFrame(rows)


def post(ctx) -> Tuple[List[Path], Optional[pl.DataFrame]]:
    runs = ctx.runs
    out = ctx.out_dir
    bottleneck = _bottleneck(runs[0][1]) if runs else BOTTLENECK
    figs = [
        plot.save(plot.throughput(runs, ports=[bottleneck], title="Throughput at the switch's rate-limited port"),
                  out / "throughput.png"),
        nic_throughput(runs, out / "nic_throughput.png"),
        drops(runs, out / "drops.png"),
        pause_frames(runs, out / "pause_frames.png"),
        host_queues(runs, out / "host_queues.png"),
    ]
    table = conditions_table(runs)
    table.write_csv(out / "conditions.csv")
    (out / "conditions.md").write_text(
        f"# hw-4rp conditions{' (quick)' if ctx.quick else ''}\n\n" + to_markdown(table), encoding="utf-8")
    extra = pl.DataFrame({
        "variant": table["variant"],
        "metric": ["host_dropped_frames"] * table.height,
        "value": table["host_dropped_frames"].cast(pl.Float64),
        "unit": ["frames"] * table.height,
        "detail": ["at the hosts: rate-limiter + NIC queues"] * table.height,
    })
    # throughput.png is redrawn (bottleneck only): keep it once in the list reproduce prints
    return [f for f in figs if f is not None and f.name != "throughput.png"], extra


#: Figure captions for the reproduction report.
CAPTIONS = {
    "throughput.png": "Throughput at the switch's rate-limited port (9.5G, 2G, 9.5G) for conditions (a)-(d).",
    "nic_throughput.png": "Aggregate throughput of the four host NIC ports per condition.",
    "drops.png": "Cumulative frames dropped at the switch (top) and at the hosts' rate-limiter and NIC queues "
                 "(bottom), per condition.",
    "pause_frames.png": "PAUSE frames received by the four NICs per bin, per condition.",
    "host_queues.png": "Bytes waiting at the hosts (rate-limiter and NIC queues of the four hosts) per condition.",
}
