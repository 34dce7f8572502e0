"""``qcnsim reproduce bcn-calibration``: the figures, the congestion-spike duration and the
sample-window sweep (data set 4) of the BCN calibration study.

Figures (one line or panel per variant): egress throughput at the core -> EP4 port, accepted
throughput per endpoint (each endpoint's NIC output), the rate-limiter rate R of every flow,
edge-switch occupancy (total switch memory) and the core queue; a bar chart of the spike
duration; the sweep figure. See docs/models/bcn.md (section "bcn-calibration") for every
definition used here.

**Congestion-spike duration** (:func:`spike`): with the core queue sampled every
``metrics.queue_interval``, the spike starts at the first sample above ``SPIKE_THRESHOLD_BYTES``
and ends at the first sample at or below it after which the queue stays at or below it for
``SPIKE_SETTLE_PS``; a queue that never settles gives no end (NaN, "not settled").

**Sweep** (data set 4), on the sweep runner (``qcnsim.sweeps.sweep``: all cores, resumable, in
``sweep/``): for each ``cc.bcn.cp.sample_window`` in ``SWEEP_WINDOWS_KB`` (± 5 KB jitter) and each
replication (seeds derived from the base seed as in docs/sweeps.md#seeds; replication 0 uses
the base seed), one run of the ``SWEEP_VARIANT`` variant at the scenario's full duration; per run the peak core queue over the
whole run (``ports.max_qlen_bytes``, exact) and over ``SWEEP_WINDOW_PS`` (queue sampled every
``SWEEP_QUEUE_INTERVAL``), and the Jain fairness index of the endpoints' accepted throughputs
over ``SWEEP_WINDOW_PS``; per window the mean and the sample standard deviation over the runs. ``SWEEP_REPS`` runs per point
(``SWEEP_REPS_QUICK`` with ``--quick``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ..results import Results  # noqa: E402
from ..sweeps import sweep as run_sweep  # noqa: E402

CORE_PORT = "core->ep4"
ENDPOINTS = ["ep0", "ep1", "ep2", "ep3"]
NIC_PORTS = [f"{e}->es{e[-1]}" for e in ENDPOINTS]
EDGES = ["es0", "es1", "es2", "es3"]

#: Spike threshold: 2 Qeq (750 pages of 64 B).
SPIKE_THRESHOLD_BYTES = 48_000
#: The queue must stay at or below the threshold this long for the spike to be over.
SPIKE_SETTLE_PS = 1_000_000_000  # 1 ms

SWEEP_VARIANT = "pause-bcn-edges-on"
SWEEP_WINDOWS_KB = [10, 20, 40, 60, 80, 100]
SWEEP_JITTER = "5KB"
SWEEP_REPS = 25
SWEEP_REPS_QUICK = 3
#: Statistics window of the sweep: t = 20-80 ms.
SWEEP_WINDOW_PS = (20_000_000_000, 80_000_000_000)
#: Core queue sampling in the sweep runs (for the peak).
SWEEP_QUEUE_INTERVAL = "2us"

MS = 1e9  # ps

#: The study's spike durations (study 001, the BCN calibration study, "Pause + BCN: differences
#: from Bergamasco's results"),
#: beside qcnsim's headline variants (|Fb| not saturated, rate floor 1 Gb/s).
PUBLISHED = [
    dict(metric="core_spike_duration", variant="pause-bcn-edges-on", value=0.003, unit="s",
         source="001: 'Duration of spike - Approx 0.003 with BCN "
                "on at edge switches'"),
    dict(metric="core_spike_duration", variant="pause-bcn-edges-off", value=0.007, unit="s",
         source="001: 'Duration of spike - Approx 0.007 with BCN "
                "off at edge switches'"),
]


#: Which variants carry the headline result, and why (written into summary.md by reproduce).
HEADLINE = ("the variants without a suffix: |Fb| not saturated (cc.bcn.cp.fb_max = \"off\": in the BCN "
            "proposal the message carries Qoff and Qdelta and the regulator computes Fb) and a 1 Gb/s "
            "rate floor (the study lists Rmin 1 Gbps under the PAUSE + BCN data set, which has no "
            "BCN(0,0)); the earlier readings run beside them as -fbsat (|Fb| <= 1875 pages) and "
            "-fbsat-floor5M (also a 5 Mb/s floor; full reproduce only). docs/models/bcn.md")


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 = fair. NaN without traffic."""
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    if not xs or s2 == 0:
        return math.nan
    return sum(xs) ** 2 / (len(xs) * s2)


def spike(t_ps: Sequence[int], q_bytes: Sequence[float], threshold: float = SPIKE_THRESHOLD_BYTES,
          settle_ps: int = SPIKE_SETTLE_PS) -> Tuple[Optional[int], Optional[int]]:
    """(start, end) of the congestion spike in a queue time series (see the module doc);
    (None, None) without a spike, (start, None) if it never settles."""
    start = next((t for t, q in zip(t_ps, q_bytes) if q > threshold), None)
    if start is None:
        return None, None
    end = None
    for t, q in zip(t_ps, q_bytes):
        if t < start:
            continue
        if q > threshold:
            end = None
        elif end is None:
            end = t
        if end is not None and t - end >= settle_ps:
            return start, end
    return start, None


def _port_series(res: Results, table: str, port: str, col: str) -> pl.DataFrame:
    df = res.tables.get(table)
    if df is None or df.height == 0:
        return pl.DataFrame({"t_ps": [], col: []})
    return df.filter(pl.col("port") == port).sort("t_ps")


def _accepted_bps(res: Results, lo: int, hi: int) -> List[float]:
    """Mean accepted throughput of each endpoint (its NIC port) over bins inside [lo, hi)."""
    tp = res.tables["port_throughput"]
    out = []
    for p in NIC_PORTS:
        d = tp.filter((pl.col("port") == p) & (pl.col("t_ps") >= lo)
                      & (pl.col("t_ps") + pl.col("bin_ps") <= hi))
        out.append(float(d["throughput_bps"].mean()) if d.height else math.nan)
    return out


def _panels(runs, n_cols=2):
    n = len(runs)
    rows = max(1, math.ceil(n / n_cols))
    fig, axes = plt.subplots(rows, n_cols, figsize=(11, 3.2 * rows), squeeze=False, sharex=True)
    for k in range(n, rows * n_cols):
        axes[k // n_cols][k % n_cols].set_visible(False)
    return fig, [axes[k // n_cols][k % n_cols] for k in range(n)]


def _save(fig, out: Path) -> Path:
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return out


def _fig_lines(runs, out: Path, table: str, key: str, key_val, ycol: str, yscale: float,
               ylabel: str, title: str, hline=None) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, res in runs:
        df = res.tables.get(table)
        if df is None or df.height == 0:
            continue
        d = df.filter(pl.col(key) == key_val).sort("t_ps")
        ax.plot(d["t_ps"].to_numpy() / MS, d[ycol].to_numpy() / yscale, label=label, linewidth=1.0)
    if hline is not None:
        ax.axhline(hline[0], color="grey", linestyle="--", linewidth=0.8, label=hline[1])
    ax.set_xlabel("time (ms)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return _save(fig, out)


def _fig_panels(runs, out: Path, table: str, key: str, keys: Sequence[str], ycol: str,
                yscale: float, ylabel: str, title: str) -> Optional[Path]:
    runs = [(lab, r) for lab, r in runs if r.tables.get(table) is not None and r.tables[table].height]
    if not runs:
        return None
    fig, axes = _panels(runs)
    for ax, (label, res) in zip(axes, runs):
        df = res.tables[table]
        for k in keys:
            d = df.filter(pl.col(key) == k).sort("t_ps")
            if d.height:
                ax.plot(d["t_ps"].to_numpy() / MS, d[ycol].to_numpy() / yscale, label=k, linewidth=0.9)
        ax.set_title(label, fontsize="medium")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2)
    for ax in axes[-2:]:
        ax.set_xlabel("time (ms)")
    fig.suptitle(title)
    return _save(fig, out)


def _rows(variant: str, metric: str, value: float, unit: str, detail: str) -> Dict[str, object]:
    return {"variant": variant, "metric": metric, "value": float(value), "unit": unit, "detail": detail}


def spike_rows(runs) -> List[Dict[str, object]]:
    rows = []
    detail = (f"{CORE_PORT} queue above {SPIKE_THRESHOLD_BYTES} B until it stays at or below it "
              f"for {SPIKE_SETTLE_PS / MS:g} ms")
    for label, res in runs:
        d = _port_series(res, "queue_samples", CORE_PORT, "qlen_bytes")
        start, end = spike(d["t_ps"].to_list(), d["qlen_bytes"].to_list())
        if start is None:
            rows.append(_rows(label, "core_spike_duration", 0.0, "s", detail + "; no spike"))
        elif end is None:
            rows.append(_rows(label, "core_spike_duration", math.nan, "s",
                              detail + f"; starts at {start / MS:g} ms, not settled by the end"))
        else:
            rows.append(_rows(label, "core_spike_duration", (end - start) / 1e12, "s",
                              detail + f"; {start / MS:g} ms to {end / MS:g} ms"))
    return rows


def sweep_overrides(duration: str) -> List[str]:
    """What a sweep run records: only what the sweep's statistics need."""
    return [
        f"cc.bcn.cp.sample_jitter={SWEEP_JITTER}",
        f"meta.duration={duration}",
        f"metrics.throughput_ports={json.dumps(NIC_PORTS)}",
        f'metrics.queue_ports=["{CORE_PORT}"]',
        f"metrics.queue_interval={SWEEP_QUEUE_INTERVAL}",
        'metrics.memory_switches="none"',
        f"metrics.rate_interval={duration}",
        "metrics.events=[]",
    ]


def run_stats(res: Results) -> Dict[str, object]:
    """The sweep's numbers of one run: peak core queue over the run and over the statistics
    window, accepted throughput per endpoint and their Jain index over the window."""
    lo, hi = SWEEP_WINDOW_PS
    q = _port_series(res, "queue_samples", CORE_PORT, "qlen_bytes")
    qw = q.filter((pl.col("t_ps") >= lo) & (pl.col("t_ps") < hi))
    acc = _accepted_bps(res, lo, hi)
    ports = res.tables["ports"].filter(pl.col("port") == CORE_PORT)
    return {"seed": res.seed,
            "peak_queue_run_bytes": float(ports["max_qlen_bytes"][0]),
            "peak_queue_bytes": float(qw["qlen_bytes"].max()) if qw.height else math.nan,
            "jain": jain(acc), "accepted_bps": acc}


def _mean_std(xs: List[float]) -> Tuple[float, float]:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return math.nan, math.nan
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, math.nan
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def sweep(ctx) -> Tuple[pl.DataFrame, List[Path]]:
    """Data set (4): the sample-window sweep. Returns the per-window table and its figure."""
    reps = SWEEP_REPS_QUICK if ctx.quick else SWEEP_REPS
    duration = ctx.base.resolved()["meta"]["duration"]
    ctx.log(f"sweep: {len(SWEEP_WINDOWS_KB)} windows x {reps} runs of {SWEEP_VARIANT} ({duration})"
            + (" [--quick: fewer replications]" if ctx.quick else ""))
    base = dict(ctx.planned)[SWEEP_VARIANT].with_overrides(sweep_overrides(duration))
    axes = {"cc.bcn.cp.sample_window": [f"{w}KB" for w in SWEEP_WINDOWS_KB]}
    sw = run_sweep(base, axes, reps, seed=ctx.seed, out=ctx.out_dir / "sweep", fmt=ctx.fmt,
                   tables=["ports", "queue_samples", "port_throughput"], progress=False, log=ctx.log)
    if not sw.complete:
        raise RuntimeError(f"bcn-calibration sweep: runs failed: {sw.failed['error'].to_list()}")
    rows, per_run = [], []
    for w, pid in zip(SWEEP_WINDOWS_KB, sw.points["point"].to_list()):
        recs = [run_stats(sw.result(pid, r)) for r in range(reps)]
        per_run += [{"window_kb": w, "rep": r, **{k: v for k, v in rec.items() if k != "accepted_bps"},
                     **{f"accepted_bps_{e}": x for e, x in zip(ENDPOINTS, rec["accepted_bps"])}}
                    for r, rec in enumerate(recs)]
        am, a_s = _mean_std([r["peak_queue_run_bytes"] for r in recs])
        pm, ps = _mean_std([r["peak_queue_bytes"] for r in recs])
        jm, js = _mean_std([r["jain"] for r in recs])
        rows.append({"window_kb": w, "runs": len(recs), "peak_queue_run_mean_bytes": am,
                     "peak_queue_run_std_bytes": a_s, "peak_queue_mean_bytes": pm,
                     "peak_queue_std_bytes": ps, "jain_mean": jm, "jain_std": js})
        ctx.log(f"sweep: window {w} KB: peak queue {am / 1e3:.1f} ± {a_s / 1e3:.1f} KB (run), "
                f"{pm / 1e3:.1f} ± {ps / 1e3:.1f} KB (20-80 ms), Jain {jm:.4f} ± {js:.4f} "
                f"({len(recs)} runs)")
    pl.DataFrame(per_run).write_csv(ctx.out_dir / "sweep_runs.csv")
    df = pl.DataFrame(rows)
    df.write_csv(ctx.out_dir / "sweep.csv")
    lines = ["| window (KB, ± 5 KB) | runs | peak queue, run (KB) | std | peak queue, 20-80 ms (KB) "
             "| std | Jain, 20-80 ms | std |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['window_kb']} | {r['runs']} | {r['peak_queue_run_mean_bytes'] / 1e3:.2f} | "
                     f"{r['peak_queue_run_std_bytes'] / 1e3:.2f} | {r['peak_queue_mean_bytes'] / 1e3:.2f} | "
                     f"{r['peak_queue_std_bytes'] / 1e3:.2f} | {r['jain_mean']:.4f} | {r['jain_std']:.4f} |")
    lo, hi = SWEEP_WINDOW_PS
    head = (f"# bcn-calibration sample-window sweep{' (quick)' if ctx.quick else ''}\n\n"
            f"Variant {SWEEP_VARIANT}, {reps} runs per window. Peak of the {CORE_PORT} queue over "
            f"the whole run (exact) and over t = {lo / MS:g}-{hi / MS:g} ms (sampled every "
            f"{SWEEP_QUEUE_INTERVAL}); Jain index of the endpoints' accepted throughputs over "
            f"t = {lo / MS:g}-{hi / MS:g} ms; standard deviation over the runs.\n\n")
    (ctx.out_dir / "sweep.md").write_text(head + "\n".join(lines) + "\n", encoding="utf-8")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    x = df["window_kb"].to_list()
    for col, lab in (("peak_queue_run", "whole run"), ("peak_queue", f"t = {lo / MS:g}-{hi / MS:g} ms")):
        a1.errorbar(x, [v / 1e3 for v in df[f"{col}_mean_bytes"]],
                    yerr=[0 if math.isnan(v) else v / 1e3 for v in df[f"{col}_std_bytes"]],
                    marker="o", capsize=3, label=lab)
    a1.set_xlabel("sample window (KB)")
    a1.set_ylabel("mean peak core queue (KB)")
    a1.set_ylim(bottom=0)
    a1.legend(fontsize="small")
    a2.errorbar(x, df["jain_mean"].to_list(),
                yerr=[0 if math.isnan(v) else v for v in df["jain_std"]], marker="o", capsize=3)
    a2.set_xlabel("sample window (KB)")
    a2.set_ylabel("Jain fairness index")
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    fig.suptitle(f"Sample-window sweep ({reps} runs per point, t = {lo / MS:g}-{hi / MS:g} ms)")
    return df, [_save(fig, ctx.out_dir / "sweep.png")]


def post(ctx):
    runs = ctx.runs
    out = ctx.out_dir
    figs: List[Optional[Path]] = [
        _fig_lines(runs, out / "egress_throughput.png", "port_throughput", "port", CORE_PORT,
                   "throughput_bps", 1e9, "throughput (Gb/s)", f"Egress throughput ({CORE_PORT})"),
        _fig_panels(runs, out / "accepted_throughput.png", "port_throughput", "port", NIC_PORTS,
                    "throughput_bps", 1e9, "Gb/s", "Accepted throughput per endpoint (NIC output)"),
        _fig_panels(runs, out / "rl_rate.png", "rp_rates", "flow", ENDPOINTS, "cr_bps", 1e9,
                    "R (Gb/s)", "Rate-limiter rate R per endpoint"),
        _fig_panels(runs, out / "edge_occupancy.png", "switch_memory", "switch", EDGES, "bytes",
                    1e3, "KB", "Edge switch occupancy (total switch memory)"),
        _fig_lines(runs, out / "core_queue.png", "queue_samples", "port", CORE_PORT, "qlen_bytes",
                   1e3, "queue (KB)", f"Core queue ({CORE_PORT})",
                   hline=(24.0, "Qeq 24 KB")),
    ]
    rows = spike_rows(runs)
    ctx.log(f"headline: {HEADLINE}")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar([r["variant"] for r in rows],
           [0 if math.isnan(r["value"]) else r["value"] * 1e3 for r in rows])
    ax.set_ylabel("spike duration (ms)")
    ax.set_title(f"Congestion spike at {CORE_PORT} (> {SPIKE_THRESHOLD_BYTES / 1e3:g} KB)")
    ax.tick_params(axis="x", labelsize="small")
    figs.append(_save(fig, out / "spike.png"))
    if SWEEP_VARIANT in dict(ctx.planned):
        df, sfigs = sweep(ctx)
        figs += sfigs
        for r in df.iter_rows(named=True):
            d = f"sample window {r['window_kb']} KB ± 5 KB, {r['runs']} runs, t = 20-80 ms"
            dr = f"sample window {r['window_kb']} KB ± 5 KB, {r['runs']} runs, whole run"
            rows.append(_rows("sweep", "mean_peak_queue", r["peak_queue_run_mean_bytes"], "B", dr))
            rows.append(_rows("sweep", "std_peak_queue", r["peak_queue_run_std_bytes"], "B", dr))
            rows.append(_rows("sweep", "mean_peak_queue", r["peak_queue_mean_bytes"], "B", d))
            rows.append(_rows("sweep", "std_peak_queue", r["peak_queue_std_bytes"], "B", d))
            rows.append(_rows("sweep", "mean_jain", r["jain_mean"], "", d))
            rows.append(_rows("sweep", "std_jain", r["jain_std"], "", d))
    else:
        ctx.log(f"sweep: no variant {SWEEP_VARIANT!r} in the scenario; skipped")
    return [f for f in figs if f is not None], pl.DataFrame(rows)


#: Figure captions for the reproduction report.
CAPTIONS = {
    "egress_throughput.png": "Throughput of the core switch's egress port, every configuration.",
    "accepted_throughput.png": "Throughput accepted from each endpoint (its NIC output), one panel per endpoint.",
    "rl_rate.png": "Rate-limiter rate R of each endpoint's reaction point over time.",
    "edge_occupancy.png": "Occupancy of each edge switch's memory over time.",
    "core_queue.png": "Core switch queue over time; dashed: Qeq = 24 KB.",
    "spike.png": "Duration of the congestion spike at the core port (queue above the threshold until it "
                 "settles), per configuration.",
    "sweep.png": "Sample-window sweep: mean peak core queue (left) and Jain fairness index of the endpoints' "
                 "throughputs (right) against the sample window; error bars: standard deviation over the runs.",
}
