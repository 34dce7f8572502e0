"""og-hotspot-10src: the transient-response figures (docs/models/qcn-transient.md).

Figures written by :func:`post`:

* ``recovery_throughput.png``: aggregate throughput at the bottleneck around the end of the
  hotspot (t = 4 s), every scheme on one figure;
* ``recovery_time.png``: the recovery time of each scheme (from the summary);
* ``downward.png``: aggregate sending rate of the sources after the capacity drop (t = 2 s),
  target-rate reduction on vs off, with the downward-transient limit;
* ``trr_trace.png``: TR and CR of one source (``f0``) through the downward transient, target-rate
  reduction on vs off, one panel per CP reading (frames enqueued: the standard; arrivals, also
  those discarded at the full queue: the ``*-arrivals`` variants);
* ``queue_transients.png``: bottleneck queue around both transitions;
* ``sonar_events.png``: SONAR run: queue, BA state and short-fuse transitions (false alarms
  marked).

It also writes ``comparison.csv`` / ``comparison.md``: one row per variant with the recovery
time, downward transient time, SONAR short fuses and false alarms, and Fb99 messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .._tables import to_markdown  # noqa: E402
from ..plot import DPI  # noqa: E402

PS = 1e12

# What study 003 (Kabbani, Pan, Prabhakar, Seaman, "QCN: stably improving transient response")
# states for the OG hotspot runs. "350+" / "300+" are lower bounds, entered as 350 / 300 ms. The
# transient-time improvement of target-rate reduction is shown only as a figure (no number).
#: Which variants carry the headline result, and why (written into summary.md by reproduce).
HEADLINE = ("for path-based push-back, rtt40-pushback-5ms: one cycle counter (the slides: \"when timer "
            "or byte-counter expires: go to next cycle\", \"Fb99: go back one cycle\"; "
            "cc.qcn.pushback.cycle_counter = \"one\"); rtt40-pushback-5ms-2ctr runs the pseudo code's "
            "two stage counters beside it. docs/models/qcn-transient.md")
PUBLISHED = [
    dict(metric="recovery_time", variant="rtt500-qcn", value=350.0, unit="ms",
         source="003: 'Time improvement -- 350+ msces down to 38 msecs' (SONAR slide, RTT = 500 usec; "
                "the QCN value is a lower bound)"),
    dict(metric="recovery_time", variant="rtt500-sonar", value=38.0, unit="ms",
         source="003: 'Time improvement -- 350+ msces down to 38 msecs' (SONAR, RTT = 500 usec)"),
    dict(metric="sonar_false_alarms", variant="rtt500-sonar", value=0.0, unit="transitions",
         source="003: '0 false alarms' (SONAR, RTT = 500 usec)"),
    dict(metric="recovery_time", variant="rtt40-qcn", value=300.0, unit="ms",
         source="003: 'Time improvement -- 300+ msec to 28 msec' (path-based, RTT = 40 usec; the QCN value "
                "is a lower bound)"),
    dict(metric="recovery_time", variant="rtt40-pushback-5ms", value=28.0, unit="ms",
         source="003: 'Time improvement -- 300+ msec to 28 msec' (path-based push-back, 'Bandwidth recovery "
                "timer: 5 msecs', RTT = 40 usec)"),
]


def summary_value(res, metric: str) -> Optional[float]:
    """First value of ``metric`` in a run's summary, or None."""
    s = res.summary
    if s.height == 0:
        return None
    v = s.filter(pl.col("metric") == metric)["value"].to_list()
    return v[0] if v else None


def bottleneck(res) -> Optional[str]:
    return ((res.resolved or {}).get("analysis") or {}).get("bottleneck")


def schedule_times(res) -> List[float]:
    """Times (s) of the bottleneck's service-rate changes."""
    from ..reproduce import parse_time_ps

    b = bottleneck(res)
    out = []
    for s in (res.resolved or {}).get("schedule", []):
        if s.get("port") == b:
            out.append(parse_time_ps(s["at"]) / PS)
    return out


def aggregate_sending_rate(res) -> pl.DataFrame:
    """(t_s, rate_bps): sum over flows of min(CR, offered rate), as in the downward transient."""
    rates = res.tables["rp_rates"]
    flows = res.tables["flows"].select("flow", "offered_bps")
    if rates.height == 0:
        return pl.DataFrame({"t_s": [], "rate_bps": []})
    return (rates.join(flows, on="flow")
            .with_columns(pl.min_horizontal("cr_bps", "offered_bps").alias("e"))
            .sort("t_ps", "flow", maintain_order=True)  # a fixed summation order
            .group_by("t_ps", maintain_order=True).agg(pl.col("e").sum().alias("rate_bps"))
            .sort("t_ps").select((pl.col("t_ps") / PS).alias("t_s"), "rate_bps"))


def _window(df: pl.DataFrame, t0: float, t1: float, col: str = "t_s") -> pl.DataFrame:
    return df.filter((pl.col(col) >= t0) & (pl.col(col) <= t1))


def _throughput(res) -> pl.DataFrame:
    b = bottleneck(res)
    tp = res.tables["port_throughput"]
    return (tp.filter(pl.col("port") == b)
            .select((pl.col("t_ps") / PS).alias("t_s"), "throughput_bps").sort("t_s"))


def _queue(res) -> pl.DataFrame:
    b = bottleneck(res)
    q = res.tables["queue_samples"]
    return (q.filter(pl.col("port") == b)
            .select((pl.col("t_ps") / PS).alias("t_s"), "qlen_frames").sort("t_s"))


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def comparison(runs: List[Tuple[str, object]]) -> pl.DataFrame:
    rows: Dict[str, list] = {k: [] for k in (
        "variant", "recovery_time_s", "downward_transient_time_s", "sonar_short_fuse",
        "sonar_false_alarms", "fb99_sent", "bottleneck_drops")}
    for name, res in runs:
        rows["variant"].append(name)
        rows["recovery_time_s"].append(summary_value(res, "recovery_time"))
        rows["downward_transient_time_s"].append(summary_value(res, "downward_transient_time"))
        rows["sonar_short_fuse"].append(summary_value(res, "sonar_short_fuse"))
        rows["sonar_false_alarms"].append(summary_value(res, "sonar_false_alarms"))
        rows["fb99_sent"].append(summary_value(res, "fb99_sent"))
        rows["bottleneck_drops"].append(summary_value(res, "bottleneck_drops"))
    return pl.DataFrame(rows, schema={k: (pl.Utf8 if k == "variant" else pl.Float64)
                                      for k in rows})


def post(ctx):
    runs = ctx.runs
    out = ctx.out_dir
    figs: List[Path] = []
    if not runs:
        return figs, None
    changes = schedule_times(runs[0][1])
    t_up = changes[1] if len(changes) > 1 else None
    t_down = changes[0] if changes else None

    # aggregate throughput around the end of the hotspot
    if t_up is not None:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for name, res in runs:
            d = _window(_throughput(res), t_up - 0.05, t_up + 0.6)
            ax.plot(d["t_s"], d["throughput_bps"] / 1e9, label=name, lw=1)
        ax.axvline(t_up, color="k", ls=":", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("bottleneck throughput (Gb/s)")
        ax.set_title("Aggregate throughput around the end of the hotspot")
        ax.legend(fontsize=8)
        figs.append(_save(fig, out / "recovery_throughput.png"))

    table = comparison(runs)
    table.write_csv(out / "comparison.csv")
    (out / "comparison.md").write_text(
        f"# {ctx.name}{' (quick)' if ctx.quick else ''}: scheme comparison\n\n" + to_markdown(table),
        encoding="utf-8")

    # recovery time per scheme
    fig, ax = plt.subplots(figsize=(8, 4))
    names = table["variant"].to_list()
    rec = [v if v is not None and v == v else 0.0 for v in table["recovery_time_s"].to_list()]
    bars = ax.bar(names, [r * 1e3 for r in rec])
    for b, v in zip(bars, table["recovery_time_s"].to_list()):
        txt = "not recovered" if v is None or v != v else f"{v * 1e3:.0f} ms"
        ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                    va="bottom", fontsize=8)
    ax.set_ylabel("recovery time (ms)")
    ax.set_title("Bandwidth recovery time after the hotspot (90 % of 10 Gb/s)")
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    figs.append(_save(fig, out / "recovery_time.png"))

    # downward transient: target-rate reduction on vs off
    if t_down is not None:
        cap = None
        for s in (runs[0][1].resolved or {}).get("schedule", []):
            if s.get("port") == bottleneck(runs[0][1]):
                cap = s.get("rate")
                break
        factor = ((runs[0][1].resolved or {}).get("analysis") or {}).get("downward_factor")
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for name, res in runs:
            if "pushback" in name or "sonar" in name:
                continue
            d = _window(aggregate_sending_rate(res), t_down - 0.02, t_down + 0.3)
            dt = summary_value(res, "downward_transient_time")
            lab = name if dt is None or dt != dt else f"{name} ({dt * 1e3:.0f} ms)"
            ax.plot(d["t_s"], d["rate_bps"] / 1e9, label=lab, lw=1)
        if factor and cap:
            c = _rate_gbps(cap)
            ax.axhline(factor * c, color="k", ls="--", lw=0.8, label=f"{factor} x capacity")
            ax.axhline(c, color="grey", ls=":", lw=0.8, label="capacity")
        ax.axvline(t_down, color="k", ls=":", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("aggregate sending rate (Gb/s)")
        ax.set_title("Downward transient: target-rate reduction on (qcn) vs off")
        ax.legend(fontsize=8)
        figs.append(_save(fig, out / "downward.png"))

    if t_down is not None:
        p = trr_trace(runs, out, t_down)
        if p is not None:
            figs.append(p)

    # queue around both transitions
    if t_down is not None and t_up is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for name, res in runs:
            q = _queue(res)
            for ax, t in zip(axes, (t_down, t_up)):
                d = _window(q, t - 0.02, t + 0.3)
                ax.plot(d["t_s"], d["qlen_frames"], label=name, lw=0.8)
        for ax, t, lab in zip(axes, (t_down, t_up), ("capacity drop", "end of hotspot")):
            ax.axvline(t, color="k", ls=":", lw=0.8)
            ax.set_xlabel("time (s)")
            ax.set_title(f"Bottleneck queue around the {lab}")
        axes[0].set_ylabel("queue (frames)")
        axes[1].legend(fontsize=7)
        figs.append(_save(fig, out / "queue_transients.png"))

    # SONAR: queue, BA and short fuses
    for name, res in runs:
        if "sonar" not in name:
            continue
        ev = res.tables["events"]
        b = bottleneck(res)
        fig, ax = plt.subplots(figsize=(10, 4))
        q = _queue(res)
        ax.plot(q["t_s"], q["qlen_frames"], lw=0.6, color="C0", label="queue (frames)")
        ba = ev.filter((pl.col("kind") == "ba_change") & (pl.col("node") == b)).sort("t_ps")
        if ba.height:
            ax2 = ax.twinx()
            t = [0.0] + (ba["t_ps"] / PS).to_list()
            v = [0] + ba["value"].to_list()
            ax2.step(t, v, where="post", color="C2", lw=0.8, label="BA")
            ax2.set_ylim(-0.1, 3)
            ax2.set_yticks([0, 1])
            ax2.set_ylabel("BA")
        sf = ev.filter(pl.col("kind") == "sonar_short_fuse")
        for val, color, lab in ((0, "C1", "short fuse"), (1, "C3", "false alarm (BA = 0)")):
            s = sf.filter(pl.col("value") == val)
            if s.height:
                ax.scatter(s["t_ps"] / PS, [95] * s.height, marker="v", color=color, s=18,
                           label=lab, zorder=3)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue (frames)")
        ax.set_title(f"{name}: bottleneck queue, BA state and short-fuse transitions")
        ax.legend(fontsize=8, loc="upper left")
        figs.append(_save(fig, out / "sonar_events.png"))
    return figs, None


#: (panel title, [(variant with target-rate reduction on, variant with it off)]) of trr_trace.png
TRR_PAIRS = [
    ("CP samples the frames enqueued (802.1Q)", [("rtt500-qcn", "rtt500-trr-off"), ("rtt40-qcn", "rtt40-trr-off")]),
    ("CP samples arrivals, also those discarded", [("rtt500-arrivals", "rtt500-arrivals-trr-off"),
                                                   ("rtt40-arrivals", "rtt40-arrivals-trr-off")]),
]
TRACE_FLOW = "f0"


def trr_trace(runs: List[Tuple[str, object]], out: Path, t_down: float) -> Optional[Path]:
    """TR and CR of one source through the downward transient, target-rate reduction on (solid)
    and off (dashed), RTT 500 us: one panel per CP reading (whichever pairs ran)."""
    by = dict(runs)
    panels = [(title, [pr for pr in pairs if pr[0] in by and pr[1] in by][:1]) for title, pairs in TRR_PAIRS]
    panels = [(t, prs[0]) for t, prs in panels if prs]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), sharey=True, squeeze=False)
    for ax, (title, pair) in zip(axes[0], panels):
        for name, ls in zip(pair, ("-", "--")):
            r = by[name].tables["rp_rates"].filter(pl.col("flow") == TRACE_FLOW).sort("t_ps")
            d = _window(r.with_columns((pl.col("t_ps") / PS).alias("t_s")), t_down - 0.005, t_down + 0.15)
            dt = summary_value(by[name], "downward_transient_time")
            lab = name if dt is None or dt != dt else f"{name} ({dt * 1e3:.0f} ms)"
            ax.step(d["t_s"], d["tr_bps"] / 1e9, where="post", color="C1", ls=ls, lw=1, label=f"TR, {lab}")
            ax.step(d["t_s"], d["cr_bps"] / 1e9, where="post", color="C0", ls=ls, lw=1, label=f"CR, {lab}")
        ax.axvline(t_down, color="k", ls=":", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("time (s)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel(f"{TRACE_FLOW}: rate (Gb/s)")
    fig.suptitle("Target-rate reduction on (solid) and off (dashed): TR and CR of one source after the "
                 "capacity drop", fontsize=10)
    return _save(fig, out / "trr_trace.png")


def _rate_gbps(s) -> float:
    import re

    m = re.fullmatch(r"\s*([0-9.]+)\s*([kMG]?)bps\s*", str(s))
    if not m:
        return float("nan")
    return float(m.group(1)) * {"": 1e-9, "k": 1e-6, "M": 1e-3, "G": 1.0}[m.group(2)]


#: Figure captions for the reproduction report.
CAPTIONS = {
    "recovery_throughput.png": "Aggregate throughput of the ten sources around the end of the hotspot, per scheme.",
    "recovery_time.png": "Bandwidth recovery time after the hotspot (to 90 % of 10 Gb/s) per scheme and RTT.",
    "downward.png": "Downward transient at the start of the hotspot: target-rate reduction on against off, "
                    "with a CP that samples the frames enqueued (802.1Q) and one that samples arrivals.",
    "trr_trace.png": "TR and CR of one source through the downward transient, target-rate reduction on against "
                     "off, for each CP reading: the reduction (TR/8 at the end of the first cycle) acts only "
                     "when CNMs come in bursts.",
    "queue_transients.png": "Bottleneck queue around the start and the end of the hotspot, per scheme.",
    "sonar_events.png": "SONAR: bottleneck queue, the bandwidth-available state and the short-fuse transitions.",
}
