"""fluid-xcheck: packet-level QCN beside the QCN fluid model (docs/models/fluid.md).

For every variant (RTT 50, 100, 200, 500 us) :func:`post` solves the same scenario's fluid
model (:func:`qcnsim.fluid`), writes it to ``<out>/<variant>-fluid/``, and draws:

* ``xcheck_queue.png``: the bottleneck queue of both models vs time, one panel per variant;
* ``xcheck_rates.png``: the packet sources' mean CR (and one source's CR) beside the fluid
  model's R_C, one panel per variant;

and adds summary rows (variant, metric) for each model (``model`` = packet / fluid in the
detail and in the metric's suffix), over the statistics window [``analysis.stats_from``, end):

* ``queue_mean_<model>`` (B), ``queue_swing_<model>`` (B): the 5th-to-95th percentile range of
  the sampled queue, ``queue_empty_<model>``: the share of samples with an empty queue;
* ``rate_mean_<model>`` (bps): the mean over sources and samples of CR (fluid: R_C);
  ``rate_max_<model>``: the largest CR sample (must stay below the 2 Gb/s the sources offer);
* ``stable_<model>``: 1 when the queue swing is below Qeq, else 0 (oscillating);
  **[interpretation]**: the packet queue always fluctuates (sampling, jitter, discrete CNMs),
  so "stable" means fluctuations smaller than the set point itself;
* ``queue_mean_ratio`` / ``queue_swing_ratio`` / ``rate_mean_ratio``: packet / fluid.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ..plot import DPI  # noqa: E402
from ..results import Results  # noqa: E402

PS = 1e12


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _bottleneck(res) -> str:
    return res.resolved["analysis"]["bottleneck"]


def _stats_from_ps(res) -> int:
    from ..reproduce import parse_time_ps

    return parse_time_ps(res.resolved["analysis"].get("stats_from", 0))


def _q_eq_bytes(res) -> float:
    """Qeq as resolved (``"33000B"``)."""
    v = res.resolved["cc"]["qcn"]["cp"]["q_eq"]
    return float(v) if isinstance(v, (int, float)) else float(str(v).rstrip("B"))


def queue(res) -> pl.DataFrame:
    """(t_s, qlen_bytes as float) at the bottleneck."""
    q = res.tables["queue_samples"]
    return (q.filter(pl.col("port") == _bottleneck(res))
            .select((pl.col("t_ps") / PS).alias("t_s"),
                    pl.col("qlen_bytes").cast(pl.Float64)).sort("t_s"))


def mean_rate(res) -> pl.DataFrame:
    """(t_s, cr_bps): CR averaged over the sources at each sample instant (fluid: R_C)."""
    r = res.tables["rp_rates"]
    return (r.group_by("t_ps").agg(pl.col("cr_bps").mean()).sort("t_ps")
            .select((pl.col("t_ps") / PS).alias("t_s"), "cr_bps"))


def stats(res, model: str) -> List[Tuple[str, float, str]]:
    """The summary numbers of one model's run over the statistics window."""
    t0 = _stats_from_ps(res) / PS
    q = queue(res).filter(pl.col("t_s") >= t0)["qlen_bytes"]
    r = res.tables["rp_rates"].filter(pl.col("t_ps") >= int(t0 * PS))["cr_bps"]
    swing = float(q.quantile(0.95) - q.quantile(0.05)) if q.len() else float("nan")
    qeq = _q_eq_bytes(res)
    return [
        (f"queue_mean_{model}", float(q.mean()) if q.len() else float("nan"), "B"),
        (f"queue_swing_{model}", swing, "B"),
        (f"queue_empty_{model}", float((q <= 0).mean()) if q.len() else float("nan"), ""),
        (f"rate_mean_{model}", float(r.mean()) if r.len() else float("nan"), "bps"),
        (f"rate_max_{model}", float(r.max()) if r.len() else float("nan"), "bps"),
        (f"stable_{model}", 1.0 if swing < qeq else 0.0, ""),
    ]


def compare(name: str, pkt, fl, stats_of=None, fluid_label: str = "QCN fluid model",
            extra=()) -> pl.DataFrame:
    """Summary rows of one variant: both models' numbers (``stats_of(res, model)``, default
    :func:`stats`) and the packet / fluid ratios, then the ``extra`` (metric, value, unit,
    detail) rows."""
    stats_of = stats_of or stats
    a, b = stats_of(pkt, "packet"), stats_of(fl, "fluid")
    t0 = _stats_from_ps(pkt) / PS
    rows = [(m, v, u, f"packet-level run; from {t0:g} s") for m, v, u in a]
    rows += [(m, v, u, f"{fluid_label}; from {t0:g} s") for m, v, u in b]
    av, bv = {m: v for m, v, _ in a}, {m: v for m, v, _ in b}
    for key in ("queue_mean", "queue_swing", "rate_mean"):
        x, y = av[f"{key}_packet"], bv[f"{key}_fluid"]
        rows.append((f"{key}_ratio", x / y if y else float("nan"), "", "packet / fluid"))
    rows += list(extra)
    return pl.DataFrame({"variant": [name] * len(rows), "metric": [r[0] for r in rows],
                         "value": [float(r[1]) for r in rows], "unit": [r[2] for r in rows],
                         "detail": [r[3] for r in rows]})


def solve_fluid(ctx, vname: str, sc) -> Results:
    """The fluid model of variant ``vname``, written beside the packet run."""
    from .. import fluid

    out = Path(ctx.out_dir) / f"{vname}-fluid"
    ctx.log(f"{vname}: solving the fluid model ...")
    res = fluid(sc)
    res.write(out, fmt=ctx.fmt)
    return Results.read(out)


def draw_queue(pairs, path: Path, set_point=None) -> Path:
    """The bottleneck queue of both models vs time, one panel per (name, packet, fluid) pair;
    ``set_point(res)`` (bytes), when given, is drawn as a dotted line."""
    n = len(pairs)
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.3 * n), sharex=True, squeeze=False)
    for ax, (name, pkt, fl) in zip(axes[:, 0], pairs):
        qp, qf = queue(pkt), queue(fl)
        ax.plot(qp["t_s"] * 1e3, qp["qlen_bytes"] / 1e3, lw=0.5, color="tab:blue",
                label="packet-level")
        ax.plot(qf["t_s"] * 1e3, qf["qlen_bytes"] / 1e3, lw=1.0, color="tab:red",
                label="fluid model")
        if set_point is not None:
            ax.axhline(set_point(pkt) / 1e3, color="grey", ls=":", lw=1, label="Qeq")
        ax.set_ylabel("queue (KB)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return _save(fig, path)


def draw_rates(pairs, path: Path, rate: str = "CR") -> Path:
    """The packet sources' mean rate (and one source's) beside the fluid model's R_C, one panel
    per (name, packet, fluid) pair; ``rate`` names the packet RP's rate in the legend."""
    n = len(pairs)
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.3 * n), sharex=True, squeeze=False)
    for ax, (name, pkt, fl) in zip(axes[:, 0], pairs):
        r = pkt.tables["rp_rates"]
        first = r["flow"][0] if r.height else None
        if first is not None:
            one = r.filter(pl.col("flow") == first)
            ax.plot(one["t_ps"] / PS * 1e3, one["cr_bps"] / 1e9, lw=0.4, color="tab:cyan",
                    label=f"packet: {rate} of {first}")
        mp, mf = mean_rate(pkt), mean_rate(fl)
        ax.plot(mp["t_s"] * 1e3, mp["cr_bps"] / 1e9, lw=0.8, color="tab:blue",
                label=f"packet: mean {rate}")
        ax.plot(mf["t_s"] * 1e3, mf["cr_bps"] / 1e9, lw=1.0, color="tab:red",
                label="fluid: R_C")
        ax.set_ylabel("rate (Gb/s)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return _save(fig, path)


def fluid_pairs(ctx):
    """(variant, packet results, fluid results) of every variant run: the fluid model of the
    same scenario solved beside each packet run."""
    scen = dict(ctx.planned)
    return [(name, res, solve_fluid(ctx, name, scen[name])) for name, res in ctx.runs]


def post(ctx):
    out: Path = ctx.out_dir
    if not ctx.runs:
        return [], None
    pairs = fluid_pairs(ctx)
    figs = [draw_queue(pairs, out / "xcheck_queue.png", set_point=_q_eq_bytes),
            draw_rates(pairs, out / "xcheck_rates.png")]
    return figs, pl.concat([compare(name, pkt, fl) for name, pkt, fl in pairs])
