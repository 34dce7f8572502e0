"""og-stability: stability runs of path-based push-back QCN (docs/models/qcn-transient.md).

Figures written by :func:`post`:

* ``stability_queue.png``: bottleneck queue vs time, one panel per variant;
* ``stability_rates.png``: per-source current rate CR vs time (up to 10 sources per variant,
  with the mean over all sources and the fair share);

and the extra summary rows (variant, metric):

* ``queue_mean`` / ``queue_std`` (B): mean and standard deviation of the sampled bottleneck
  queue over the statistics window;
* ``rate_mean`` / ``rate_std_time`` (bps): the sending rate of a source is min(CR, offered
  rate) (CR may exceed what the source offers); its mean over all sources and samples, and the
  mean over sources of each source's standard deviation over time;
* ``jain_fairness``: Jain's index of the sources' mean sending rates.

The statistics window is [``STATS_FROM_S``, end) to leave out the start-up transient
(**[interpretation]**: 1 s, or the second half of shorter runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .og_hotspot_10src import PS, _queue, _save, bottleneck  # noqa: E402

STATS_FROM_S = 1.0
MAX_SOURCES_DRAWN = 10

# The transient-response proposals (study 003) show the stability runs ('2ptQCN 5msec timer - 10sources - RTT=400usec' ... '400sources',
# '7msec timer') only as figures ('Stability improves due to cycle-stretching when Fb99 is
# received'): it states no number to compare with, so the published table is empty.
PUBLISHED: list = []


def _window_start(res) -> float:
    q = res.tables["queue_samples"]
    end = float(q["t_ps"].max()) / PS if q.height else 0.0
    return STATS_FROM_S if end > 2 * STATS_FROM_S else end / 2


def stats(name: str, res) -> pl.DataFrame:
    t0 = _window_start(res)
    q = _queue(res).filter(pl.col("t_s") >= t0)
    b = bottleneck(res)
    qb = (res.tables["queue_samples"].filter(pl.col("port") == b)
          .filter(pl.col("t_ps") >= int(t0 * PS))["qlen_bytes"].cast(pl.Float64))
    offered = res.tables["flows"].select("flow", "offered_bps")
    # a fixed order (a join's and a group-by's row order are not stated): rows by (flow, t),
    # flows in name order, so every sum below adds its terms in the same order in every run
    r = (res.tables["rp_rates"].filter(pl.col("t_ps") >= int(t0 * PS)).join(offered, on="flow")
         .with_columns(pl.min_horizontal("cr_bps", "offered_bps").alias("rate"))
         .sort("flow", "t_ps", maintain_order=True))
    per = r.group_by("flow", maintain_order=True).agg(pl.col("rate").mean().alias("m"),
                                                      pl.col("rate").std(ddof=0).alias("s"))
    m = per["m"]
    jain = float(m.sum() ** 2 / (m.len() * (m ** 2).sum())) if m.len() else float("nan")
    detail = f"{b} from {t0:g} s; {per.height} sources; queue sampled {q.height} times"
    rows = [
        ("queue_mean", float(qb.mean()), "B"),
        ("queue_std", float(qb.std(ddof=0)), "B"),
        ("rate_mean", float(r["rate"].mean()), "bps"),
        ("rate_std_time", float(per["s"].mean()), "bps"),
        ("jain_fairness", jain, ""),
    ]
    return pl.DataFrame({"variant": [name] * len(rows), "metric": [x[0] for x in rows],
                         "value": [x[1] for x in rows], "unit": [x[2] for x in rows],
                         "detail": [detail] * len(rows)})


def post(ctx):
    runs = ctx.runs
    out: Path = ctx.out_dir
    figs: List[Path] = []
    if not runs:
        return figs, None
    n = len(runs)

    fig, axes = plt.subplots(n, 1, figsize=(10, 2.2 * n), sharex=True, squeeze=False)
    for ax, (name, res) in zip(axes[:, 0], runs):
        q = _queue(res)
        ax.plot(q["t_s"], q["qlen_frames"], lw=0.5)
        ax.set_ylabel("queue (frames)")
        ax.set_title(name, fontsize=9)
    axes[-1, 0].set_xlabel("time (s)")
    figs.append(_save(fig, out / "stability_queue.png"))

    fig, axes = plt.subplots(n, 1, figsize=(10, 2.4 * n), sharex=True, squeeze=False)
    for ax, (name, res) in zip(axes[:, 0], runs):
        r = res.tables["rp_rates"]
        flows = r["flow"].unique(maintain_order=True).to_list()
        for f in flows[:MAX_SOURCES_DRAWN]:
            d = r.filter(pl.col("flow") == f)
            ax.plot(d["t_ps"] / PS, d["cr_bps"] / 1e6, lw=0.5)
        mean = r.group_by("t_ps").agg(pl.col("cr_bps").mean()).sort("t_ps")
        ax.plot(mean["t_ps"] / PS, mean["cr_bps"] / 1e6, color="k", lw=1.2,
                label=f"mean of {len(flows)} sources")
        line = (res.tables["ports"].filter(pl.col("port") == bottleneck(res))["link_rate_bps"])
        if line.len() and flows:
            ax.axhline(float(line[0]) / len(flows) / 1e6, color="grey", ls=":", lw=1,
                       label="fair share")
        ax.set_yscale("log")
        ax.set_ylabel("CR (Mb/s)")
        ax.set_title(f"{name}: CR of {min(len(flows), MAX_SOURCES_DRAWN)} sources", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    figs.append(_save(fig, out / "stability_rates.png"))

    extra = pl.concat([stats(name, res) for name, res in runs])
    return figs, extra


#: Figure captions for the reproduction report.
CAPTIONS = {
    "stability_queue.png": "Bottleneck queue over time for N = 10, 100 and 400 push-back sources.",
    "stability_rates.png": "Current rate of the sources (at most the first few drawn) for each N.",
}
