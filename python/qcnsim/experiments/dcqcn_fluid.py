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
* ``queue_swing_marking_<model>``: the queue swing over the marking range Kmax - Kmin of the
  same model (``cc.dcqcn.cp`` / ``[fluid.dcqcn]``, 195 KB with the paper's parameters);
* ``stable_<model>``: 1 when the queue swing is below ``STABLE_SWING`` (one half) of the marking
  range, else 0 (oscillating); the same rule for both models. **[interpretation]**, argued
  below (:data:`CRITERION`) and in docs/models/dcqcn.md;
* ``queue_mean_ratio`` / ``queue_swing_ratio`` / ``rate_mean_ratio``: packet / fluid;
* ``feedback_delay`` (s): the fluid model's delay.

``PUBLISHED`` puts the paper's verdicts (1 = stable, 0 = unstable) beside ``stable_fluid`` and
``stable_packet`` of every variant (``published.md`` of a reproduction).
"""

from __future__ import annotations

from typing import List, Tuple

import polars as pl

from . import fluid_xcheck
from .fluid_xcheck import PS, _stats_from_ps, draw_queue, draw_rates, queue

# The source: Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN
# and TIMELY", CoNEXT 2016, the "Stability" subsection of the DCQCN analysis. Read in the authors'
# LaTeX source (github jitupadhye-zz/rdma, commit e7e9160c, conext2016/dcqcn-stability.tex and
# dcqcn-model.tex), not in the typeset proceedings, so figures are named by their captions, not
# numbers; the figures are PDF images there and were not read: only what the text says is entered
# (LaTeX markup rendered: "$\mu$s" as "us"). docs/sources.md#study-numbers ("CoNEXT16").
_AT = ("(CoNEXT 2016, DCQCN 'Stability' subsection, on the figure 'Impact of delay and number of flows on DCQCN "
       "stability' (fluid model); authors' LaTeX source jitupadhye-zz/rdma@e7e9160c conext2016/dcqcn-stability.tex)")
_SMALL = ("CoNEXT16: 'When the feedback delay is small (4 us), DCQCN is stable - flow rates, and queue length "
          "quickly stabilizes regardless of the number of flows.' " + _AT)
_LARGE10 = "CoNEXT16: 'when the delay is large (85us), the protocol is unstable for 10 flows.' " + _AT
_LARGE2 = "CoNEXT16: 'when the delay is large (85us) ... It is, however, stable for 2 and 64 flows.' " + _AT
_NS = ("; at packet level the text goes on: '[the figure 'NS simulations confirm lack of stability'] shows the "
       "instability with packet-level simulations' (which N it plots is in the figure, not read)")
_VAL = ("; at packet level the paper states no verdict for this case: it compares its NS3 simulations with the "
        "fluid model by the flow rates ('the fluid model and the simulator are in good agreement', figure "
        "'Comparison of DCQCN fluid model and NS3 simulations', N = 2, 10, 20, delay not stated, dcqcn-model.tex)")
_VERDICTS = [("n2", 1.0, _SMALL), ("n10", 1.0, _SMALL), ("n20", 1.0, _SMALL),
             ("n2-85us", 1.0, _LARGE2), ("n10-85us", 0.0, _LARGE10), ("n64-85us", 1.0, _LARGE2)]
#: The published verdicts (1 = stable, 0 = unstable) beside both models' ``stable_*`` rows. The
#: paper's verdicts are for DCQCN at that N and delay, from its fluid model and phase-margin
#: analysis; its packet-level evidence is the NS figure of the 85 us instability and the NS3 validation
#: (rates agree).
PUBLISHED = [dict(metric=f"stable_{model}", variant=v, value=x, unit="",
                  source=src + (("" if model == "fluid" else (_NS if v == "n10-85us" else _VAL))))
             for v, x, src in _VERDICTS for model in ("fluid", "packet")]

#: stable = a queue swing (5th to 95th percentile) below this share of the marking range.
STABLE_SWING = 0.5
CRITERION = (
    "stable = the bottleneck queue's swing (5th to 95th percentile over the statistics window) is below half of the "
    "marking range Kmax - Kmin, in both models. The paper calls DCQCN stable when its linearised loop has a positive "
    "phase margin, i.e. a perturbation around the fixed point (q*, C/N) dies out; its figures show a stable run "
    "settling to a flat queue and an unstable one in a sustained oscillation, in the fluid model and in "
    "packet simulations ('NS simulations confirm lack of stability'). The loop sees a queue perturbation through "
    "the marking probability, "
    "p = Pmax (q - Kmin) / (Kmax - Kmin), and the paper explains its Kmax tuning by exactly that scale ('the "
    "perturbation of queue length leads to smaller perturbation in marking probability'). A packet queue never "
    "settles (discrete marks and CNPs), so the rule measures the oscillation against the marking range, the scale "
    "the analysis uses and the same for every N and delay, not against the fixed point q*, which is a few frames "
    "for N = 2 (about 20 KB): an empty queue or a swing above the mean there is packet noise, not instability.")


def marking_range(res, model: str) -> float:
    """Kmax - Kmin (bytes) of a run: the packet model's ``cc.dcqcn.cp``, the fluid model's
    ``[fluid.dcqcn]``, as resolved (``"200000B"``)."""
    t = res.resolved["cc"]["dcqcn"]["cp"] if model == "packet" else res.resolved["fluid"]["dcqcn"]

    def b(v) -> float:
        return float(v) if isinstance(v, (int, float)) else float(str(v).rstrip("B"))

    return b(t["k_max"]) - b(t["k_min"])


def stats(res, model: str) -> List[Tuple[str, float, str]]:
    """The summary numbers of one model's run over the statistics window."""
    t0 = _stats_from_ps(res) / PS
    q = queue(res).filter(pl.col("t_s") >= t0)["qlen_bytes"]
    r = res.tables["rp_rates"].filter(pl.col("t_ps") >= int(t0 * PS))["cr_bps"]
    nan = float("nan")
    if not q.len():
        return [(f"{k}_{model}", nan, u) for k, u in (
            ("queue_mean", "B"), ("queue_swing", "B"), ("queue_max", "B"), ("queue_empty", ""),
            ("rate_mean", "bps"), ("queue_swing_marking", ""), ("stable", ""))]
    swing = float(q.quantile(0.95) - q.quantile(0.05))
    rel = swing / marking_range(res, model)
    return [
        (f"queue_mean_{model}", float(q.mean()), "B"),
        (f"queue_swing_{model}", swing, "B"),
        (f"queue_max_{model}", float(q.max()), "B"),
        (f"queue_empty_{model}", float((q <= 0).mean()), ""),
        (f"rate_mean_{model}", float(r.mean()) if r.len() else nan, "bps"),
        (f"queue_swing_marking_{model}", rel, ""),
        (f"stable_{model}", 1.0 if rel < STABLE_SWING else 0.0, ""),
    ]


def compare(name: str, pkt, fl) -> pl.DataFrame:
    """Summary rows of one variant: both models' numbers, the packet / fluid ratios and the fluid
    model's delay (the published verdicts are ``PUBLISHED``, matched by ``reproduce``)."""
    extra = []
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
