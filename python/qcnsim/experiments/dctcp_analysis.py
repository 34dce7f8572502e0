"""dctcp-analysis: N long-lived DCTCP flows at one port, the queue beside the DCTCP analysis
(docs/models/dctcp.md, ``dctcp-analysis``).

The analysis (Alizadeh et al., SIGCOMM 2010, §3.3; the same sawtooth is the limit cycle of the
SIGMETRICS 2011 fluid model) takes N synchronised flows of one round trip RTT at a bottleneck of
capacity C (packets per second) marking at K packets: the queue reaches K when every window is
``W* = (C·RTT + K)/N``; one round trip later, when the marks have come back, it peaks at

* ``Q_max = K + N``;

α settles at about ``sqrt(2/W*)``, each cut takes ``D = (W*+1)·α/2`` packets off a window, so the
queue swings by

* ``A = N·D ≈ ½·sqrt(2N(C·RTT + K))`` packets, with a period of
* ``T_C = D ≈ ½·sqrt(2(C·RTT + K)/N)`` round trips (the window grows one packet per round trip),

down to ``Q_min = Q_max − A``. :func:`analysis` evaluates them (``proto/dctcp.rs`` ``sawtooth``
does the same in the core's tests).

:func:`post` adds per variant, over [``analysis.stats_from``, end), from the bottleneck's queue
samples (packets): ``queue_max``, ``queue_min``, ``queue_mean``, ``queue_p5``, ``queue_p95``,
``queue_amplitude`` (p95 − p5: the sawtooth's swing without the single-sample extremes),
``queue_swing`` (max − min), ``queue_period`` (s, the mean time between the queue's upward
crossings of its median, the queue averaged over one base RTT, with a hysteresis: :func:`period_s`)
and ``queue_period_rtts`` (that period over the mean round trip, base RTT + mean queue / C:
**[interpretation]**, the round trip the windows actually grow by), ``queue_rise_rtts`` (the
part of the period the queue rises: the share of samples where the queue, averaged over one
base RTT, goes up, times the period), ``alpha_mean`` (the flows' last α); beside them the analysis's values (``*_analysis``: ``c_rtt`` in packets, ``w_star``,
``alpha``, ``queue_max``, ``queue_min``, ``queue_amplitude``, ``queue_period_rtts``), and draws
``dctcp_queue.png`` (the queue of each variant with Q_max and Q_min of the analysis).

``PUBLISHED`` holds the analysis's Q_max, amplitude and period for each N (formulas evaluated at
the variant's K, N, C·RTT; the paper's text could not be read here, so they are the formulas,
re-derived from §3.3's argument, not quoted numbers: docs/models/dctcp.md says so).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import polars as pl

from .fluid_xcheck import PS, _save, _stats_from_ps, plt

#: The experiment's setting, for the published table (scenarios/dctcp-analysis.toml).
K = 40
C_BPS = 10e9
FRAME = 1500
ACK = 64
#: 100 us of propagation and a 1500 B frame and a 64 B ACK on two 10 Gb/s links each way.
BASE_RTT_S = 100e-6 + 2 * FRAME * 8 / C_BPS + 2 * ACK * 8 / C_BPS


def analysis(n: float, c_rtt: float, k: float) -> Dict[str, float]:
    """The §3.3 sawtooth for ``n`` flows, a bandwidth-delay product ``c_rtt`` and a threshold
    ``k`` (packets)."""
    w_star = (c_rtt + k) / n
    amp = 0.5 * math.sqrt(2 * n * (c_rtt + k))
    return {"c_rtt": c_rtt, "w_star": w_star, "alpha": math.sqrt(2 / w_star), "queue_max": k + n,
            "queue_amplitude": amp, "queue_min": k + n - amp,
            "queue_period_rtts": 0.5 * math.sqrt(2 * (c_rtt + k) / n)}


_SRC = ("DCTCP10: '{f}' (Alizadeh et al., Data Center TCP, SIGCOMM 2010, section 3.3; the formula, re-derived "
        "from the section's sawtooth argument and evaluated at K = {k}, N = {n}, C x RTT = {c:.1f} packets; the "
        "paper's text and figures could not be read here, so no measured number of the paper is entered)")
_FORMULAS = [("queue_max", "queue_max", "Q_max = K + N", "frames"),
             ("queue_amplitude", "queue_amplitude", "A = 1/2 sqrt(2N(C x RTT + K))", "frames"),
             ("queue_period_rtts", "queue_period_rtts", "T_C = 1/2 sqrt(2(C x RTT + K)/N)", ""),
             # the analysis's cut is instantaneous: its period is the queue's rise; beside the measured rise
             ("queue_rise_rtts", "queue_period_rtts", "T_C = 1/2 sqrt(2(C x RTT + K)/N)", "")]


def published(variants: List[Tuple[str, int]], k: int, c_rtt: float) -> List[dict]:
    out = []
    for v, n in variants:
        a = analysis(n, c_rtt, k)
        for metric, key, f, unit in _FORMULAS:
            note = "" if metric == key else ("; compared with the queue's rising phase: the analysis's cut is "
                                             "instantaneous, so its period is all rise")
            out.append(dict(metric=metric, variant=v, value=a[key], unit=unit,
                            source=_SRC.format(f=f, k=k, n=n, c=c_rtt) + note))
    return out


#: The analysis beside the packet runs: Q_max, amplitude and period for N = 2, 10, 40 (and N = 10
#: with the window growing after a cut, the analysis's idealisation).
PUBLISHED = published([("n2", 2), ("n10", 10), ("n40", 40), ("n10-grow", 10)], K,
                      C_BPS * BASE_RTT_S / (FRAME * 8))


def _time_s(v) -> float:
    from ..reproduce import parse_time_ps

    return parse_time_ps(v) / PS


def _rate_bps(v) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    for suf, mul in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("kbps", 1e3), ("bps", 1.0)):
        if s.endswith(suf):
            return float(s[: -len(suf)]) * mul
    return float(s)


def _bytes(v, default: float) -> float:
    if v is None:
        return default
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    for suf, mul in (("KB", 1e3), ("MB", 1e6), ("B", 1.0)):
        if s.endswith(suf):
            return float(s[: -len(suf)]) * mul
    return float(s)


def setting(res) -> Dict[str, float]:
    """The run's N, K (packets), C (bit/s), frame and base RTT (s): a dumbbell of equal links
    (every link ``defaults.link_rate`` and ``defaults.link_delay``; the experiments set no other)."""
    r = res.resolved
    d = r["defaults"]
    c = _rate_bps(d["link_rate"])
    delay = _time_s(d["link_delay"])
    flows = res.tables["flows"]
    frame = float(r["flows"][0].get("frame", 1500)) if isinstance(r["flows"][0].get("frame"), (int, float)) \
        else _bytes(r["flows"][0].get("frame"), 1500.0)
    ack = _bytes(r.get("transport", {}).get("ack_frame"), 64.0)
    rtt = 4 * delay + 2 * frame * 8 / c + 2 * ack * 8 / c
    k = float(r["cc"]["dctcp"]["k"])
    return {"n": float(flows.height), "k": k, "c_bps": c, "frame": frame, "rtt_s": rtt,
            "c_rtt": c * rtt / (frame * 8)}


def queue_frames(res) -> Tuple[np.ndarray, float]:
    """The bottleneck's sampled queue (packets) from ``analysis.stats_from``, and the interval (s)."""
    b = res.resolved["analysis"]["bottleneck"]
    t0 = _stats_from_ps(res)
    q = (res.tables["queue_samples"].filter((pl.col("port") == b) & (pl.col("t_ps") >= t0)).sort("t_ps"))
    t = q["t_ps"].to_numpy()
    dt = float(np.median(np.diff(t))) / PS if len(t) > 1 else float("nan")
    return q["qlen_frames"].to_numpy().astype(float), dt


def smoothed(x: np.ndarray, dt: float, smooth_s: float) -> np.ndarray:
    """``x`` averaged over ``smooth_s`` (a moving average: one frame's arrival or departure is
    not a cycle)."""
    w = max(1, int(round(smooth_s / dt))) if dt > 0 else 1
    return np.convolve(x, np.ones(w) / w, mode="valid") if len(x) >= w else x[:0]


def period_s(x: np.ndarray, dt: float, smooth_s: float) -> float:
    """The mean time between the upward crossings of the smoothed queue through its median, with
    a hysteresis of a quarter of its half-swing (5th to 95th percentile; at least half a packet)
    so that packet-level noise does not count as a crossing; NaN with fewer than two."""
    y = smoothed(x, dt, smooth_s)
    if len(y) < 3:
        return float("nan")
    m = float(np.median(y))
    h = max(0.5, 0.25 * (np.percentile(y, 95) - np.percentile(y, 5)) / 2)
    ups = []
    low = False
    for k, v in enumerate(y):
        if v < m - h:
            low = True
        elif v > m + h and low:
            ups.append(k)
            low = False
    if len(ups) < 2:
        return float("nan")
    return (ups[-1] - ups[0]) * dt / (len(ups) - 1)


def rise_fraction(x: np.ndarray, dt: float, smooth_s: float) -> float:
    """The share of the time the queue rises: the sign of the change of ``x`` smoothed over
    ``smooth_s``, over the samples where it changes."""
    y = smoothed(x, dt, smooth_s)
    if len(y) < 3:
        return float("nan")
    d = np.diff(y)
    moving = d[d != 0]
    return float((moving > 0).mean()) if len(moving) else float("nan")


def stats(name: str, res) -> pl.DataFrame:
    s = setting(res)
    x, dt = queue_frames(res)
    a = analysis(s["n"], s["c_rtt"], s["k"])
    per = period_s(x, dt, s["rtt_s"])
    rise = rise_fraction(x, dt, s["rtt_s"])
    mean = float(x.mean()) if len(x) else float("nan")
    rtt_mean = s["rtt_s"] + mean * s["frame"] * 8 / s["c_bps"]
    alpha = res.tables["flows"]["dctcp_alpha"] if "dctcp_alpha" in res.tables["flows"].columns else None
    det = (f"N = {s['n']:g}, K = {s['k']:g}, C x RTT = {s['c_rtt']:.1f} packets (base RTT {s['rtt_s'] * 1e6:.2f} us); "
           f"{len(x)} queue samples from {_stats_from_ps(res) / PS:g} s")
    p5, p95 = (float(np.percentile(x, 5)), float(np.percentile(x, 95))) if len(x) else (math.nan, math.nan)
    rows = [
        ("queue_max", float(x.max()), "frames"), ("queue_min", float(x.min()), "frames"),
        ("queue_mean", mean, "frames"), ("queue_p5", p5, "frames"), ("queue_p95", p95, "frames"),
        ("queue_amplitude", p95 - p5, "frames"), ("queue_swing", float(x.max() - x.min()), "frames"),
        ("queue_period", per, "s"), ("queue_period_rtts", per / rtt_mean, ""),
        ("queue_rise_rtts", rise * per / rtt_mean, ""),
        ("alpha_mean", float(alpha.mean()) if alpha is not None else math.nan, ""),
    ]
    rows += [(f"{m}_analysis", a[m], u) for m, u in (("c_rtt", "frames"), ("w_star", "frames"), ("alpha", ""),
                                                     ("queue_max", "frames"), ("queue_min", "frames"),
                                                     ("queue_amplitude", "frames"), ("queue_period_rtts", ""))]
    return pl.DataFrame({"variant": [name] * len(rows), "metric": [r[0] for r in rows],
                         "value": [float(r[1]) for r in rows], "unit": [r[2] for r in rows],
                         "detail": [det] * len(rows)})


def queue_figure(runs, out: Path, name: str = "dctcp_queue.png") -> Path:
    n = len(runs)
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.3 * n), squeeze=False)
    for ax, (v, res) in zip(axes[:, 0], runs):
        s = setting(res)
        a = analysis(s["n"], s["c_rtt"], s["k"])
        b = res.resolved["analysis"]["bottleneck"]
        q = res.tables["queue_samples"].filter(pl.col("port") == b).sort("t_ps")
        t = q["t_ps"].to_numpy() / PS * 1e3
        # a window of 20 analysis periods from the statistics start, so the sawtooth shows
        t0 = _stats_from_ps(res) / PS * 1e3
        span = 20 * a["queue_period_rtts"] * s["rtt_s"] * 1e3
        m = (t >= t0) & (t <= t0 + span)
        ax.plot(t[m], q["qlen_frames"].to_numpy()[m], lw=0.7, label="queue (packets)")
        ax.axhline(a["queue_max"], color="C3", ls="--", lw=1, label="Q_max = K + N")
        ax.axhline(a["queue_min"], color="C2", ls=":", lw=1, label="Q_min = Q_max - A")
        ax.axhline(s["k"], color="grey", ls="-.", lw=0.8, label="K")
        ax.set_title(f"{v}: N = {s['n']:g}, K = {s['k']:g}", fontsize=9)
        ax.set_ylabel("packets")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return _save(fig, out / name)


def post(ctx):
    out: Path = ctx.out_dir
    if not ctx.runs:
        return [], None
    table = pl.concat([stats(v, res) for v, res in ctx.runs])
    for v, _ in ctx.runs:
        t = table.filter(pl.col("variant") == v)
        g = {m: val for m, val in zip(t["metric"], t["value"])}
        ctx.log(f"{v}: queue max {g['queue_max']:.0f} (analysis {g['queue_max_analysis']:.1f}), amplitude "
                f"{g['queue_amplitude']:.1f} (analysis {g['queue_amplitude_analysis']:.1f}), period "
                f"{g['queue_period_rtts']:.2f} RTTs (analysis {g['queue_period_rtts_analysis']:.2f})")
    return [queue_figure(ctx.runs, out)], table


#: Figure captions for the reproduction report.
CAPTIONS = {
    "dctcp_queue.png": "The bottleneck queue (packets) of N long-lived DCTCP flows over about 20 periods of the "
                       "analysis, with its Q_max = K + N and Q_min = Q_max - A (SIGCOMM 2010, section 3.3).",
}
