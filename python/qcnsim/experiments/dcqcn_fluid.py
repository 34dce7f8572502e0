"""dcqcn-fluid: packet-level DCQCN beside the DCQCN fluid model (docs/models/dcqcn.md).

For every variant (N = 2, 10, 20 at a feedback delay of about 4 us; N = 2, 10, 64 at about
85 us) :func:`post` solves the same scenario's fluid model (:func:`qcnsim.fluid`, CoNEXT 2016),
writes it to ``<out>/<variant>-fluid/`` and draws:

* ``dcqcn_queue.png``: the bottleneck queue of both models vs time, one panel per variant;
* ``dcqcn_rates.png``: the packet sources' mean RC (and one source's RC) beside the fluid
  model's R_C, one panel per variant;

and adds summary rows (variant, metric) for each model (``model`` = packet / fluid in the
metric's suffix and the detail), over the statistics window [``analysis.stats_from``, end):

* ``queue_mean_<model>`` (B), ``queue_swing_<model>`` (B, 5th-to-95th percentile of the sampled
  queue), ``queue_max_<model>`` (B), ``queue_empty_<model>`` (share of samples with an empty
  queue), ``rate_mean_<model>`` (bps, mean RC over sources and samples);
* ``stable_<model>``: 1 when the queue neither empties (under 1 % of the samples) nor swings by
  more than half its mean, else 0 (oscillating). **[interpretation]**: the published table says
  stable or unstable from a phase margin; a limit cycle of the fluid model swings through an
  empty queue, a stable one settles to a flat queue, and the packet queue always carries some
  noise from discrete marks, so a swing below half the mean counts as stable;
* ``queue_mean_ratio`` / ``queue_swing_ratio`` / ``rate_mean_ratio``: packet / fluid;
* ``feedback_delay`` (s): the fluid model's delay; ``stable_published``: the published verdict
  for the 85 us variants (CoNEXT 2016).
"""

from __future__ import annotations

from typing import List, Tuple

import polars as pl

from . import fluid_xcheck
from .fluid_xcheck import PS, _stats_from_ps, draw_queue, draw_rates, queue

# CoNEXT 2016 (Zhu, Ghobadi, Misra, Padhye), stability section, as summarised from the authors'
# public sources (jitupadhye-zz/rdma: conext2016/dcqcn-stability.tex): with R_AI = 40 Mb/s and
# Kmax = 200 KB, at a feedback delay of 85 us DCQCN is unstable for N = 10 and stable for N = 2
# and N = 64 (1 = stable, 0 = oscillating). No seed document covers DCQCN, so these go into the
# summary as ``stable_published`` rows (not the seed-quoting ``PUBLISHED`` table).
STABLE_PUBLISHED = {"n2-85us": 1.0, "n10-85us": 0.0, "n64-85us": 1.0}
_SRC = ("Zhu et al., CoNEXT 2016, stability section (jitupadhye-zz/rdma "
        "conext2016/dcqcn-stability.tex), summarised: at 85 us unstable for N = 10, stable for "
        "N = 2 and N = 64")


def stats(res, model: str) -> List[Tuple[str, float, str]]:
    """The summary numbers of one model's run over the statistics window."""
    t0 = _stats_from_ps(res) / PS
    q = queue(res).filter(pl.col("t_s") >= t0)["qlen_bytes"]
    r = res.tables["rp_rates"].filter(pl.col("t_ps") >= int(t0 * PS))["cr_bps"]
    nan = float("nan")
    if not q.len():
        return [(f"{k}_{model}", nan, u) for k, u in (
            ("queue_mean", "B"), ("queue_swing", "B"), ("queue_max", "B"), ("queue_empty", ""),
            ("rate_mean", "bps"), ("stable", ""))]
    swing = float(q.quantile(0.95) - q.quantile(0.05))
    mean = float(q.mean())
    empty = float((q <= 0).mean())
    return [
        (f"queue_mean_{model}", mean, "B"),
        (f"queue_swing_{model}", swing, "B"),
        (f"queue_max_{model}", float(q.max()), "B"),
        (f"queue_empty_{model}", empty, ""),
        (f"rate_mean_{model}", float(r.mean()) if r.len() else nan, "bps"),
        (f"stable_{model}", 1.0 if empty < 0.01 and swing < 0.5 * mean else 0.0, ""),
    ]


def compare(name: str, pkt, fl) -> pl.DataFrame:
    """Summary rows of one variant: both models' numbers, the packet / fluid ratios, the
    published verdict (85 us variants) and the fluid model's delay."""
    extra = []
    if name in STABLE_PUBLISHED:
        extra.append(("stable_published", STABLE_PUBLISHED[name], "", _SRC))
    tau = fluid_tau_us(fl)
    if tau is not None:
        extra.append(("feedback_delay", tau * 1e-6, "s", "the fluid model's delay (the path's round trip)"))
    return fluid_xcheck.compare(name, pkt, fl, stats_of=stats, fluid_label="DCQCN fluid model",
                                extra=extra)


def fluid_tau_us(fl):
    """The fluid model's feedback delay in us (``tau_used`` of its ``fluid_inputs`` table: the
    path's round trip rounded to whole steps)."""
    try:
        t = fl.tables["fluid_inputs"]
    except KeyError:
        return None
    d = dict(zip(t["name"], t["value"]))
    return float(d["tau_used"]) * 1e6 if "tau_used" in d else None


def post(ctx):
    if not ctx.runs:
        return [], None
    pairs = fluid_xcheck.fluid_pairs(ctx)
    figs = [draw_queue(pairs, ctx.out_dir / "dcqcn_queue.png"),
            draw_rates(pairs, ctx.out_dir / "dcqcn_rates.png", rate="RC")]
    return figs, pl.concat([compare(name, pkt, fl) for name, pkt, fl in pairs])
