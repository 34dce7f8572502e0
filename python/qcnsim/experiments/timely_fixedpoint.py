"""timely-fixedpoint: two TIMELY flows started from different rates, packet runs beside the TIMELY
fluid model (docs/models/timely.md, docs/models/fluid.md).

For every variant (start rates 5 + 5, 7 + 3, 3 + 7 Gb/s with the default step scaling, and 5 + 5
and 7 + 3 with ``cc.timely.step_scaling = "none"``, Algorithm 1 as printed; the fluid model reads no
``cc.*`` key) :func:`post` solves the same scenario's
fluid model (:func:`qcnsim.fluid`, ``fluid.model = "timely"``), writes it to
``<out>/<variant>-fluid/`` and draws ``timely_rates.png`` (each flow's rate vs time, packet and
fluid, one panel per variant) and ``timely_queue.png`` (the bottleneck queue of both models).
Summary rows per variant and model (``_packet`` / ``_fluid``):

* ``share_f0_<model>``: f0's share of the two flows' mean rate over the run's last quarter (the
  split they reached), and ``share_f0_start_<model>`` over its first eighth;
* ``total_rate_<model>`` (bps): the two flows' rates summed, over the last quarter;
* ``queue_mean_<model>``, ``queue_max_<model>`` (B): over [``analysis.stats_from``, end).

``PUBLISHED`` puts the paper's draft statement on the queue peaks beside both models' maxima of
the equal start (the validation's setting, every flow at C/N).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from . import fluid_xcheck  # noqa: E402
from .fluid_xcheck import PS, _save, _stats_from_ps, draw_queue, queue  # noqa: E402

_PEAK = ("CoNEXT16: 'The queue peaks are at roughly 70KB, which corresponds to 56us at 10Gbps. This is close to "
         "the T_min value' (TIMELY fluid model validation, N senders each starting at C/N; a draft of the section, "
         "conext2016/timely-validation.tex in jitupadhye-zz/rdma, not in the camera-ready; the figure's Seg is not "
         "stated in that text)")
#: The paper's draft statement on the queue peaks, beside both models' maxima of the equal start.
PUBLISHED = [dict(metric=f"queue_max_{model}", variant="5-5", value=70_000.0, unit="B", source=_PEAK)
             for model in ("fluid", "packet")]


def _flow_rates(res) -> pl.DataFrame:
    """(t_s, flow, cr_bps) of every rate sample."""
    r = res.tables["rp_rates"]
    return r.select((pl.col("t_ps") / PS).alias("t_s"), pl.col("flow").cast(pl.Utf8), "cr_bps")


def _end_s(res) -> float:
    r = res.tables["rp_rates"]
    return float(r["t_ps"].max()) / PS if r.height else 0.0


def share(res, lo: float, hi: float) -> Tuple[float, float]:
    """f0's share of the two flows' mean rate over [lo, hi) seconds, and their summed mean rate."""
    r = _flow_rates(res).filter((pl.col("t_s") >= lo) & (pl.col("t_s") < hi))
    m = dict(r.group_by("flow").agg(pl.col("cr_bps").mean()).iter_rows())
    a, b = m.get("f0", float("nan")), m.get("f1", float("nan"))
    return a / (a + b), a + b


def stats(res, model: str) -> List[Tuple[str, float, str]]:
    end = _end_s(res)
    s_end, total = share(res, 0.75 * end, end + 1.0)
    s_start, _ = share(res, 0.0, end / 8)
    t0 = _stats_from_ps(res) / PS
    q = queue(res).filter(pl.col("t_s") >= t0)["qlen_bytes"]
    nan = float("nan")
    return [
        (f"share_f0_{model}", s_end, ""),
        (f"share_f0_start_{model}", s_start, ""),
        (f"total_rate_{model}", total, "bps"),
        (f"queue_mean_{model}", float(q.mean()) if q.len() else nan, "B"),
        (f"queue_max_{model}", float(q.max()) if q.len() else nan, "B"),
    ]


def compare(name: str, pkt, fl) -> pl.DataFrame:
    rows = []
    for res, model, label in ((pkt, "packet", "packet-level run"), (fl, "fluid", "TIMELY fluid model")):
        end = _end_s(res)
        for m, v, u in stats(res, model):
            if m.startswith("share_f0_start"):
                d = f"{label}; first eighth, 0-{end / 8:g} s"
            elif m.startswith(("share_f0", "total_rate")):
                d = f"{label}; last quarter, {0.75 * end:g}-{end:g} s"
            else:
                d = f"{label}; from {_stats_from_ps(res) / PS:g} s"
            rows.append((m, v, u, d))
    return pl.DataFrame({"variant": [name] * len(rows), "metric": [r[0] for r in rows],
                         "value": [float(r[1]) for r in rows], "unit": [r[2] for r in rows],
                         "detail": [r[3] for r in rows]})


def draw_rates(pairs, path: Path) -> Path:
    n = len(pairs)
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.3 * n), sharex=True, squeeze=False)
    for ax, (name, pkt, fl) in zip(axes[:, 0], pairs):
        for res, style, label in ((pkt, "-", "packet"), (fl, "--", "fluid")):
            r = _flow_rates(res)
            for flow, color in (("f0", "tab:blue"), ("f1", "tab:red")):
                x = r.filter(pl.col("flow") == flow).sort("t_s")
                ax.plot(x["t_s"] * 1e3, x["cr_bps"] / 1e9, style, lw=0.8, color=color,
                        label=f"{flow} {label}")
        ax.set_ylabel("Gb/s")
        ax.set_title(f"{name}: start rates (Gb/s)", fontsize=9)
        ax.legend(fontsize=7, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return _save(fig, path)


def post(ctx):
    if not ctx.runs:
        return [], None
    pairs = fluid_xcheck.fluid_pairs(ctx)
    figs = [draw_rates(pairs, ctx.out_dir / "timely_rates.png"),
            draw_queue(pairs, ctx.out_dir / "timely_queue.png")]
    return figs, pl.concat([compare(name, pkt, fl) for name, pkt, fl in pairs])
