"""swift-incast: N-to-1 incast under Swift, the fabric delay beside the target (docs/models/swift.md).

Per variant (N = 2, 8, 32, 64) :func:`post` adds summary rows from the flows table and the
bottleneck's queue samples, over the run's second half (the flows table's Swift means are taken
from ``meta.duration / 2`` on; the queue over the same span):

* ``delay_mean`` / ``target_mean`` (s): the flows' mean fabric delay of their ACKs and the mean
  target Swift compared each ACK with (base_target + hops·h + fs(fcwnd));
* ``delay_over_target``: their ratio;
* ``queue_delay`` (s): the unloaded round trip plus the mean queue over C (the delay the queue
  alone gives, an independent reading of the same number);
* ``ai_per_rtt`` (s): N·MSS/C, one round trip's aggregate additive increase as delay (the
  tolerance tests/swift.rs asserts within);
* ``cwnd_min`` (packets): the least window any flow had; below 1 the flows were paced;
* ``throughput`` (bps): the bottleneck's mean throughput.

It draws ``swift_queue.png``: the bottleneck queue as delay (unloaded RTT + q/C) with each
variant's mean target.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .fluid_xcheck import PS, _save, queue  # noqa: E402

#: The unloaded round trip of the scenario (s): 4 links of 2 us, a 1500 B frame and a 64 B ACK
#: serialised twice at 10 Gb/s.
BASE_RTT = 8e-6 + 2 * 1500 * 8 / 10e9 + 2 * 64 * 8 / 10e9
C = 10e9
MSS = 1500


def _half(res) -> float:
    from ..reproduce import parse_time_ps

    return parse_time_ps(res.resolved["meta"]["duration"]) / PS / 2


def rows(name: str, res) -> pl.DataFrame:
    f = res.tables["flows"]
    n = f.height
    t0 = _half(res)
    q = queue(res).filter(pl.col("t_s") >= t0)["qlen_bytes"]
    d, t = float(f["swift_delay_mean_us"].mean()) * 1e-6, float(f["swift_target_mean_us"].mean()) * 1e-6
    tp = res.tables["port_throughput"]
    tp = tp.filter(pl.col("t_ps") >= int(t0 * PS))["throughput_bps"]
    out = [
        ("delay_mean", d, "s", "mean over flows of each flow's mean fabric delay (ACKs of the second half)"),
        ("target_mean", t, "s", "mean over flows of the target each ACK was compared with"),
        ("delay_over_target", d / t, "", "delay_mean / target_mean"),
        ("queue_delay", BASE_RTT + float(q.mean()) * 8 / C, "s",
         "unloaded RTT (10.5 us) + mean bottleneck queue / C, second half"),
        ("ai_per_rtt", n * MSS * 8 / C, "s", "N·MSS/C: one RTT's aggregate additive increase"),
        ("cwnd_min", float(f["swift_cwnd_min"].min()), "packets", "least window of any flow (< 1: paced)"),
        ("throughput", float(tp.mean()) if tp.len() else float("nan"), "bps", "bottleneck, second half"),
    ]
    return pl.DataFrame({"variant": [name] * len(out), "metric": [r[0] for r in out],
                         "value": [float(r[1]) for r in out], "unit": [r[2] for r in out],
                         "detail": [r[3] for r in out]})


def draw(runs, path: Path) -> Path:
    n = len(runs)
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.1 * n), sharex=True, squeeze=False)
    for ax, (name, res) in zip(axes[:, 0], runs):
        q = queue(res)
        ax.plot(q["t_s"] * 1e3, (BASE_RTT + q["qlen_bytes"] * 8 / C) * 1e6, lw=0.5, color="tab:blue",
                label="unloaded RTT + q/C")
        t = float(res.tables["flows"]["swift_target_mean_us"].mean())
        ax.axhline(t, ls=":", color="k", lw=1.0, label="mean target (second half)")
        ax.set_ylabel("delay (us)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return _save(fig, path)


def post(ctx):
    if not ctx.runs:
        return [], None
    figs = [draw(ctx.runs, ctx.out_dir / "swift_queue.png")]
    return figs, pl.concat([rows(name, res) for name, res in ctx.runs])
