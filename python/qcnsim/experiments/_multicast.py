"""Shared post-processing of the multicast experiments (``multicast-star``,
``multicast-multilink``; see docs/models/multicast.md).

``reproduce`` runs every variant (Qeq x scheme) once with the base seed; :func:`post` runs the
other seeds of every variant on the sweep runner (``qcnsim.sweep``: all cores, resumable, in
``seeds/``), then writes

- ``cr_vs_time.png``: CR vs time of every source, one panel per (scheme, Qeq), with the
  fair-share line(s), first seed, for the 802.1Q CP (the headline); ``cr_vs_time_<reading>.png``
  for each other CP reading of the study (``unitq``, ``studycp``; see docs/models/multicast.md);
- ``metrics_vs_qeq.png`` (and ``metrics_vs_qeq_<reading>.png``): each multicast metric vs Qeq,
  both schemes, mean +- standard deviation over the seeds (error bars);
- ``metrics.csv`` / ``metrics.md``: every metric per (reading, scheme, Qeq, entity): mean, std,
  seeds; rows sorted by (metric, entity, reading, scheme, Qeq, unit); ``metrics_per_seed.csv``:
  every value of every run, sorted by (variant, seed, metric, entity, unit).

Run to run, these tables are bit-identical (tests/test_multicast.py): the per-seed table is
sorted by its key before it is written, and each aggregate is an exact sum (``math.fsum``,
whose result does not depend on the order of the terms) over the seeds of its group, not a
polars group-by, whose group order follows a hash seeded anew in every process.
- ``feedback_bound.md``: what the published feedback rates would require of a CP, beside the
  most an 802.1Q CP can send here.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .._tables import to_markdown  # noqa: E402
from ..results import Results  # noqa: E402
from ..scenario import Scenario  # noqa: E402
from ..sweeps import sweep  # noqa: E402

SEEDS_FULL = 5
SEEDS_QUICK = 2
FRAME_BYTES = 1500
SCHEMES = ("standard", "representative")

# metric -> (label, scale, unit) for the figures; queue values are shown in frames of 1500 B
METRICS = {
    "mc_feedback_rate": ("feedback rate", 1.0, "%"),
    "mc_loss_rate": ("loss rate", 1.0, "%"),
    "mc_avg_cr": ("average CR", 1e-6, "Mb/s"),
    "mc_cr_std": ("CR standard deviation (mean over RPs)", 1e-6, "Mb/s"),
    "mc_queue_mean": ("queue mean", 1.0 / FRAME_BYTES, "frames"),
    "mc_queue_std": ("queue standard deviation", 1.0 / FRAME_BYTES, "frames"),
    "mc_queue_dev_qeq": ("mean queue - Qeq", 1.0 / FRAME_BYTES, "frames"),
    "mc_jain_throughput": ("Jain index (source throughput)", 1.0, ""),
    "mc_jain_cr": ("Jain index (mean CR)", 1.0, ""),
}


def entity(metric: str, detail: str) -> str:
    """The RP, port or group a summary row is about ("" for run-wide metrics)."""
    if metric in ("mc_feedback_rate", "mc_loss_rate", "mc_avg_cr"):
        return ""
    if metric.startswith("mc_jain"):
        m = re.match(r"group (\S+):", detail)
        return m.group(1) if m else ""
    if metric == "mc_queue_dev_qeq":
        detail = detail.split("; ", 1)[-1]
    return detail.split(",")[0].split(" (")[0]


#: The CP readings the scenarios run, by (quantiser, sampling, qold); "" is the 802.1Q CP (the
#: headline). docs/models/multicast.md, "Readings of the study".
READINGS = {("linear", "table", "sample"): "", ("unit", "table", "sample"): "unitq",
            ("unit", "every_frame", "feedback"): "studycp"}
READING_LABEL = {"": "802.1Q CP", "unitq": "unit quantiser", "studycp": "study CP (unit quantiser, "
                 "every frame, Qold at feedback)"}
#: Which variants carry the headline result, and why (both multicast experiments).
HEADLINE = ("the variants without a suffix: the 802.1Q CP (the study leaves the switch's operations "
            "as the standard defines them and names no other quantiser or sampling); the study-CP "
            "readings run beside them as -unitq and -studycp (at Qeq 25 frames only with --quick). "
            "The control (the standard scheme) was run under every CP and metric reading the study's "
            "text allows (readings.md): none matches its published standard rows within 2x, so no "
            "reading is supported by the control and the headline stays the 802.1Q CP; the control's "
            "best partial reading is shown beside the study in published.md (\"control's best "
            "reading\"). docs/models/multicast.md, \"Identifying the study's CP on its control\"")
#: The 802.1Q sampling table's shortest mean interval (qntzFb >= 56): one sample per 18.5 KB.
TABLE_MIN_INTERVAL_BYTES = 18_500


def reading(res: Results) -> str:
    """The CP reading of a run ("" = 802.1Q), from its resolved scenario."""
    cp = res.resolved.get("cc", {}).get("qcn", {}).get("cp", {})
    key = (cp.get("quantiser", "linear"), cp.get("sampling", "table"), cp.get("qold", "sample"))
    return READINGS.get(key, "-".join(key))


def variant_key(res: Results) -> Tuple[str, int]:
    """(scheme, Qeq in frames) of a run, from its resolved scenario; the scheme of a run with a
    shared switch memory ends in ``-shared100``."""
    cc = res.resolved.get("cc", {}).get("qcn", {})
    scheme = cc.get("multicast_feedback", "standard")
    if res.resolved.get("shared_buffer", {}).get("size", "off") != "off":
        # the shared-memory reading of the 100-frame buffers (docs/models/buffer.md)
        scheme += "-shared100"
    q = str(cc.get("cp", {}).get("q_eq", "0B"))
    qb = int(float(re.sub(r"[^0-9.]", "", q) or 0))
    return scheme, round(qb / FRAME_BYTES)


def run_seeds(ctx) -> List[Tuple[str, int, Results]]:
    """Every (variant, seed, Results): the variant runs of ``reproduce`` (replication 0, the base
    seed) plus replications 1..n-1 of every variant, run together on the sweep runner (all cores,
    resumable, in ``seeds/``; seeds derived as in docs/sweeps.md#seeds): a sweep over
    ``meta.variant``."""
    n = SEEDS_QUICK if ctx.quick else SEEDS_FULL
    out: List[Tuple[str, int, Results]] = [(vname, res.seed, res) for (vname, _), (_, res)
                                           in zip(ctx.planned, ctx.runs)]
    if n <= 1:
        return out
    variants = [vname for vname, _ in ctx.planned]  # without the variants --quick leaves out
    # The planned scenarios are [meta.variant=NAME, --quick duration, user --set]: the sweep's base
    # takes the last two and its one axis selects the variant (whose set the user's --set beats).
    base_ovr = ctx.planned[0][1].overrides[1:]
    base = Scenario(ctx.base.text, ctx.base.path, base_ovr, name=ctx.name)
    axes = {"meta.variant": variants}
    sw = sweep(base, axes, n - 1, mode="zip", first_rep=1, seed=ctx.seed, out=Path(ctx.out_dir) / "seeds",
               fmt=ctx.fmt, progress=False, log=ctx.log)
    if not sw.complete:
        raise RuntimeError(f"{ctx.name}: seed runs failed: {sw.failed['error'].to_list()}")
    for v, pid in zip(variants, sw.points["point"].to_list()):
        for r in range(1, n):
            res = sw.result(pid, r)
            out.append((v, res.seed, res))
    return out


def long_metrics(runs: Sequence[Tuple[str, int, Results]]) -> pl.DataFrame:
    rows: Dict[str, list] = {k: [] for k in ("variant", "reading", "scheme", "qeq_frames", "seed",
                                             "metric", "entity", "value", "unit")}
    for vname, seed, res in runs:
        scheme, q = variant_key(res)
        rd = reading(res)
        s = res.summary.filter(pl.col("metric").str.starts_with("mc_"))
        for metric, value, unit, detail in s.select("metric", "value", "unit", "detail").iter_rows():
            if metric == "mc_cr_mean" or metric == "mc_source_throughput":
                ent = detail.split(" (")[0].split(",")[0]
            else:
                ent = entity(metric, detail)
            for k, v in (("variant", vname), ("reading", rd), ("scheme", scheme), ("qeq_frames", q),
                         ("seed", seed),
                         ("metric", metric), ("entity", ent), ("value", value), ("unit", unit)):
                rows[k].append(v)
    df = pl.DataFrame(rows, schema={"variant": pl.Utf8, "reading": pl.Utf8, "scheme": pl.Utf8,
                                    "qeq_frames": pl.Int64,
                                    "seed": pl.UInt64, "metric": pl.Utf8, "entity": pl.Utf8,
                                    "value": pl.Float64, "unit": pl.Utf8})
    # "CR standard deviation" of a run: the mean over its RPs (in the summary's order)
    run_key = ("variant", "reading", "scheme", "qeq_frames", "seed", "unit")
    cr_rows = _exact_means(df.filter(pl.col("metric") == "mc_cr_std"), run_key)
    cr = pl.DataFrame([{**k, "metric": "mc_cr_std", "entity": "mean over RPs", "value": m}
                       for k, (_, m, _) in cr_rows], schema=df.schema, orient="row")
    return pl.concat([df, cr.select(df.columns)]).sort(*PER_SEED_ORDER, maintain_order=True)


#: The per-seed table's sort key (``metrics_per_seed.csv``).
PER_SEED_ORDER = ("variant", "seed", "metric", "entity", "unit")
#: The aggregate's group key, and its sort key (``metrics.csv``).
AGG_KEY = ("reading", "scheme", "qeq_frames", "metric", "entity", "unit")
AGG_ORDER = ("metric", "entity", "reading", "scheme", "qeq_frames", "unit")


def _exact_means(df: pl.DataFrame, key: Sequence[str]) -> List[Tuple[dict, Tuple[int, float, Optional[float]]]]:
    """Per group of ``key`` (groups in sorted key order): the group's key and (n, mean, sample
    standard deviation) of its ``value``s, with exact sums (``math.fsum``: correctly rounded, so
    the result depends neither on the order of the rows nor on the process). Every value counts
    (a NaN makes the mean NaN, as before); one value has no standard deviation (None)."""
    groups: Dict[tuple, List[float]] = {}
    for row in df.select(*key, "value").iter_rows():
        groups.setdefault(tuple(row[:-1]), []).append(row[-1])
    out = []
    for k in sorted(groups, key=lambda t: tuple((v is None, v) for v in t)):
        xs = [float(v) for v in groups[k] if v is not None]
        n = len(xs)
        mean = math.fsum(xs) / n if n else math.nan
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else None
        out.append((dict(zip(key, k)), (n, mean, sd)))
    return out


def aggregate(df: pl.DataFrame) -> pl.DataFrame:
    """Mean, sample standard deviation and the number of seeds of every metric per
    (reading, scheme, Qeq, metric, entity, unit), sorted by ``AGG_ORDER``."""
    rows = [{**k, "mean": m, "std": sd, "seeds": n} for k, (n, m, sd) in _exact_means(df, AGG_KEY)]
    schema = {**{c: df.schema[c] for c in AGG_KEY}, "mean": pl.Float64, "std": pl.Float64,
              "seeds": pl.UInt32}
    return pl.DataFrame(rows, schema=schema, orient="row").sort(*AGG_ORDER, maintain_order=True)


def _margins(fig, left: float, bottom: float, top: float, wgap: float, hgap: float,
             right: float = 0.2) -> None:
    """Fixed margins and gaps in inches (matplotlib's tight layout measures every tick label and
    cost seconds per figure here)."""
    w, h = fig.get_size_inches()
    gs = fig.axes[0].get_subplotspec().get_gridspec()
    rows, cols = gs.get_geometry()
    pw = (w - left - right - (cols - 1) * wgap) / cols
    ph = (h - bottom - top - (rows - 1) * hgap) / rows
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=wgap / pw, hspace=hgap / ph)


def _suffix(rd: str) -> str:
    return f"_{rd}" if rd else ""


def plot_cr(runs, out: Path, fair: Dict[str, float], group_of: Dict[str, str],
            rd: str = "") -> Optional[Path]:
    """CR vs time of each source, one panel per (scheme, Qeq), first seed of each variant of CP
    reading ``rd``."""
    first: Dict[Tuple[str, int], Results] = {}
    for _, _, res in runs:
        if reading(res) == rd:
            first.setdefault(variant_key(res), res)
    if not first:
        return None
    qs = sorted({q for _, q in first})
    fig, axes = plt.subplots(len(SCHEMES), len(qs), figsize=(4.2 * len(qs), 3.2 * len(SCHEMES)),
                             sharex=True, sharey=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    groups = sorted(set(group_of.values()))
    for i, scheme in enumerate(SCHEMES):
        for j, q in enumerate(qs):
            ax = axes[i][j]
            res = first.get((scheme, q))
            ax.set_title(f"{scheme}, Qeq {q} frames", fontsize=9)
            if res is None:
                continue
            rr = res["rp_rates"]
            for flow in sorted(set(rr["flow"].to_list())):
                d = rr.filter(pl.col("flow") == flow)
                g = group_of.get(flow, "")
                c = colors[groups.index(g) % len(colors)] if len(groups) > 1 else None
                ax.plot(d["t_ps"].to_numpy() / 1e12, d["cr_bps"].to_numpy() / 1e6, lw=0.7,
                        color=c, alpha=0.8, label=flow)
            for g, share in fair.items():
                ax.axhline(share / 1e6, color="k", ls="--", lw=1)
                ax.annotate(f"fair share {g} {share / 1e6:.1f} Mb/s", (0.01, share / 1e6),
                            xycoords=("axes fraction", "data"), fontsize=7, va="bottom")
            if i == len(SCHEMES) - 1:
                ax.set_xlabel("time (s)")
            if j == 0:
                ax.set_ylabel("CR (Mb/s)")
    axes[0][0].legend(fontsize=6, ncol=2)
    fig.suptitle(f"Current rate of each source (first seed), {READING_LABEL.get(rd, rd)}; dashed: "
                 "fair share", fontsize=10)
    _margins(fig, left=0.7, bottom=0.55, top=0.65, wgap=0.15, hgap=0.4)
    path = out / f"cr_vs_time{_suffix(rd)}.png"
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def plot_metrics(agg: pl.DataFrame, out: Path, title: str, rd: str = "") -> Optional[Path]:
    agg = agg.filter(pl.col("reading") == rd)
    present = [m for m in METRICS if agg.filter(pl.col("metric") == m).height > 0]
    if not present:
        return None
    ncol = 3
    nrow = (len(present) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.3 * nrow), squeeze=False)
    for k, m in enumerate(present):
        ax = axes[k // ncol][k % ncol]
        label, scale, unit = METRICS[m]
        d = agg.filter(pl.col("metric") == m)
        if m == "mc_cr_std":
            d = d.filter(pl.col("entity") == "mean over RPs")
        for scheme, ls, mk in (("standard", "-", "o"), ("representative", "--", "s")):
            ds = d.filter(pl.col("scheme") == scheme)
            for ent in sorted(set(ds["entity"].to_list())):
                de = ds.filter(pl.col("entity") == ent).sort("qeq_frames")
                std = [0.0 if s is None else s * scale for s in de["std"].to_list()]
                ax.errorbar(de["qeq_frames"].to_list(), [v * scale for v in de["mean"].to_list()],
                            yerr=std, ls=ls, marker=mk, ms=3, capsize=3,
                            label=f"{scheme}{' ' + ent if ent and ent != 'mean over RPs' else ''}")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("Qeq (frames)")
        if unit:
            ax.set_ylabel(unit)
        ax.legend(fontsize=6)
    for k in range(len(present), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    fig.suptitle(title, fontsize=10)
    _margins(fig, left=0.75, bottom=0.55, top=0.65, wgap=0.95, hgap=0.8)
    path = out / f"metrics_vs_qeq{_suffix(rd)}.png"
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def copies_per_frame(res: Results) -> float:
    """Data frames enqueued at the CP queues (the scenario's ``metrics.queue_ports``: sent +
    dropped) per data frame sent by the sources, over the whole run."""
    ports = res["ports"]
    cps = res.resolved.get("metrics", {}).get("queue_ports", [])
    d = ports.filter(pl.col("port").is_in(cps))
    enq = float(d["tx_frames"].sum() + d["drop_frames"].sum())
    sent = float(res["flows"]["tx_frames"].sum())
    return enq / sent if sent else float("nan")


def feedback_bound(runs, published: Sequence[dict]) -> Tuple[str, List[dict]]:
    """What the published feedback rates would require, beside what an 802.1Q CP can send here.

    The feedback rate is CNMs / data frames sent (docs/models/multicast.md). An 802.1Q CP samples
    at most once per ``TABLE_MIN_INTERVAL_BYTES`` enqueued (mean of the table's shortest
    interval), i.e. 8.1 % of the 1500-B frames it enqueues; with ``c`` copies enqueued at CPs
    per frame sent the rate is at most ``c * 1500 / 18500``."""
    first: Dict[Tuple[str, str, int], Results] = {}
    for _, _, res in runs:
        first.setdefault((reading(res), *variant_key(res)), res)
    pub = {(p["variant"]): p for p in published if p["metric"].startswith("mc_feedback_rate")}
    per_cp = FRAME_BYTES / TABLE_MIN_INTERVAL_BYTES * 100
    lines = ["| variant | copies at CPs per frame sent | 802.1Q table allows at most (%) | published (%) "
             "| needs a CNM for this % of the frames each CP enqueues |", "|---|---|---|---|---|"]
    rows = []
    for (rd, scheme, q), res in sorted(first.items()):
        if rd:
            continue
        v = f"{scheme}-qeq{q}"
        c = copies_per_frame(res)
        p = pub.get(v)
        need = p["value"] / c if p and c else float("nan")
        lines.append(f"| {v} | {c:.3f} | {c * per_cp:.2f} | {p['value'] if p else '-'} | "
                     f"{need:.1f} |" if p else f"| {v} | {c:.3f} | {c * per_cp:.2f} | - | - |")
        rows.append({"variant": v, "metric": "mc_feedback_rate_table_bound", "value": c * per_cp,
                     "unit": "%", "detail": f"{c:.3f} CP copies per frame sent x 1500 B / 18.5 KB "
                     f"(802.1Q table, most frequent sampling); the published "
                     f"{p['value'] if p else '?'} % needs a CNM for {need:.1f} % of the frames "
                     "each CP enqueues"})
    text = ("# What the published feedback rates would require\n\nFeedback rate = CNMs sent by all "
            "CPs / data frames sent by all sources (the study's \"rate of feedback generated by the "
            "CP\", as defined in docs/models/multicast.md). An 802.1Q CP samples at most once per "
            f"{TABLE_MIN_INTERVAL_BYTES} B enqueued on average (the sampling table's shortest "
            f"interval): at most {per_cp:.1f} % of the 1500-B frames it enqueues. First seed of "
            "each variant, 802.1Q CP, whole run.\n\n" + "\n".join(lines) + "\n\nA published "
            "rate above the table's bound needs a CP that sends feedback for more frames than the "
            "802.1Q table samples, e.g. one that computes Fb at every frame (the variants "
            "\"-studycp\").\n")
    return text, rows


def post(ctx, fair: Dict[str, float], published: Sequence[dict] = ()):
    """The hook body; ``fair`` maps a group name to its sources' max-min fair share (bit/s)."""
    out = Path(ctx.out_dir)
    runs = run_seeds(ctx)
    seeds = sorted({s for _, s, _ in runs})
    df = long_metrics(runs)
    agg = aggregate(df)
    df.write_csv(out / "metrics_per_seed.csv")
    agg.write_csv(out / "metrics.csv")
    dur = ctx.runs[0][1].resolved.get("meta", {}).get("duration", "?")
    window = ctx.runs[0][1].resolved.get("analysis", {})
    note = (f"{len(seeds)} seeds ({', '.join(map(str, seeds))}) per point, runs of {dur}, statistics "
            f"from {window.get('stats_from', '0s')}{' (quick: fewer seeds, shorter runs)' if ctx.quick else ''}")
    (out / "metrics.md").write_text(f"# {ctx.name}: multicast metrics, mean and standard deviation over "
                                    f"seeds\n\n{note}\n\n" + to_markdown(agg), encoding="utf-8")
    ctx.log(f"{ctx.name}: {note}")
    group_of: Dict[str, str] = {}
    flows = ctx.runs[0][1]["flows"]
    for f, d in zip(flows["flow"].to_list(), flows["dst"].to_list()):
        group_of[f] = d
    readings = sorted({reading(r) for _, _, r in runs})
    figs: List[Path] = []
    for rd in readings:
        lab = READING_LABEL.get(rd, rd)
        figs += [p for p in (plot_cr(runs, out, fair, group_of, rd),
                             plot_metrics(agg, out, f"{ctx.name}, {lab}: metrics vs Qeq (mean +- std "
                                                    f"over {len(seeds)} seeds)", rd)) if p is not None]
    bound_md, bound_rows = feedback_bound(runs, published)
    (out / "feedback_bound.md").write_text(bound_md, encoding="utf-8")
    for r in bound_rows:
        ctx.log(f"{ctx.name}: {r['variant']}: feedback rate bound of an 802.1Q CP {r['value']:.2f} %; "
                + r["detail"].split("; ", 1)[1])
    ctx.log(f"{ctx.name}: headline: {HEADLINE}")
    rows = agg.filter(pl.col("metric").is_in(list(METRICS)))
    extra = rows.select(
        (pl.col("scheme") + "-qeq" + pl.col("qeq_frames").cast(pl.Utf8)
         + pl.when(pl.col("reading") == "").then(pl.lit("")).otherwise("-" + pl.col("reading")))
        .alias("variant"),
        (pl.col("metric") + " (mean over seeds)").alias("metric"),
        pl.col("mean").alias("value"),
        pl.col("unit"),
        pl.format("{}; std {}; {} seeds", pl.col("entity"), pl.col("std").round(4),
                  pl.col("seeds")).alias("detail"),
    )
    if bound_rows:
        extra = pl.concat([extra, pl.DataFrame(bound_rows).select(extra.columns)
                           .with_columns(pl.col("value").cast(extra.schema["value"]))])
    rfigs, rrows = control_readings(ctx, published)
    figs += rfigs
    if rrows.height:
        extra = pl.concat([extra, rrows.select(extra.columns).with_columns(pl.col("value").cast(extra.schema["value"]))])
    return figs, extra


def control_readings(ctx, published: Sequence[dict]) -> Tuple[List[Path], pl.DataFrame]:
    """Identify the study's CP and metric readings on its control, then run the enhancement on the
    readings the control supports (:mod:`qcnsim.experiments._mc_readings`): writes
    ``readings.csv`` (the grid), ``readings.md`` (the grid per reading, the verdict, the claims),
    ``fbhat_trace.png``; returns the figures and summary rows (the control's reading's feedback and
    loss rates, compared with the study in published.md)."""
    from . import _mc_readings as R

    out = Path(ctx.out_dir)
    topo = R.topology(ctx.name)
    pub = R.published_standard(published)
    std_runs = R.standard_grid(ctx)
    grid_std = R.grid_table(std_runs, topo, pub)
    names, best, n = R.supported(grid_std)
    full = best == n and n > 0
    cp_order = list(R.CP_READINGS)
    # the enhancement under every CP reading (its claims are checked under every reading); the
    # F̂b trace for the CP readings of the best readings and the 802.1Q CP (the literal scheme)
    cps = sorted({x.split(" / ")[0] for x in names} | {"802.1Q"}, key=cp_order.index)
    enh_runs = R.enhancement(ctx, cp_order)
    grid = R.grid_table(std_runs + enh_runs, topo, pub)
    grid.write_csv(out / "readings.csv")
    figs: List[Path] = []
    for cp in cps:
        f = R.trace_figure(enh_runs, cp, out / f"fbhat_trace_{cp}.png",
                           f"{ctx.name}, representative scheme, CP reading {cp}: F̂b at each RP (Algorithm 1 "
                           "replayed on the CNMs it received) and each CP's qntzFb (first seed)")
        if f is not None:
            figs.append(f)
    verdict = (f"{len(names)} reading(s) match every published standard value within 2x" if full else
               f"no reading matches every published standard value within 2x; the best match {best} of {n} "
               "(reading, Qeq) cells")
    best_name = names[0] if names else None
    literal = "802.1Q / cnm / sent"
    lines = [f"# {ctx.name}: readings of the study's CP and metrics, identified on the control\n",
             f"{len(R.CP_READINGS)} CP readings x {len(R.METRIC_READINGS)} metric readings x Qeq "
             f"{'/'.join(map(str, R.QEQS))}, standard scheme, one seed ({ctx.runs[0][1].seed}); statistics window as "
             "the variants. docs/models/multicast.md, \"Identifying the study's CP on its control\".\n",
             f"**Verdict (control):** {verdict}: " + (", ".join(f"`{x}`" for x in names) or "none") + "\n",
             "Readings tied on the count are ordered by their mean |log2(qcnsim / published)| over the "
             "control's non-zero published values; the first is the control's best reading "
             f"(`{best_name}`).\n"]
    cl_rows = []
    for name in dict.fromkeys([x for x in (best_name, literal) if x]):
        cl = R.claims(grid, std_runs + enh_runs, name)
        cl_rows += [dict(reading=name, **c) for c in cl]
        held = sum(bool(c["holds"]) for c in cl)
        what = "the control's best reading" if name == best_name else "the literal reading (802.1Q CP, CNMs / sent)"
        lines.append(f"## Enhancement under `{name}` ({what}): {held} of {len(cl)} claims hold\n")
        lines.append(to_markdown(pl.DataFrame(cl)))
        lines.append(to_markdown(grid.filter(pl.col("reading") == name).drop("reading", "cp", "count", "per")))
    every = []
    for name in grid["reading"].unique(maintain_order=True).to_list():
        cl = R.claims(grid, std_runs + enh_runs, name)
        every.append({"reading": name, "claims_held": sum(bool(c["holds"]) for c in cl),
                      **{f"claim_{k + 1}": bool(c["holds"]) for k, c in enumerate(cl)}})
    every_df = pl.DataFrame(every).sort("claims_held", "reading", descending=[True, False])
    every_df.write_csv(out / "readings_claims.csv")
    top = int(every_df["claims_held"].max()) if every_df.height else 0
    lines.append(f"## The enhancement's claims under every reading\n\nClaims 1-5 as in the tables above "
                 f"(feedback reduction, loss 0 % at Qeq 25, loss grows with Qeq, CR standard deviation "
                 f"lower at Qeq 25 and 50, fairness similar). The most any reading makes hold: {top} of 5 "
                 f"({int((every_df['claims_held'] == top).sum())} readings).\n")
    lines.append(to_markdown(every_df))
    ctx.log(f"{ctx.name}: the enhancement's claims: at most {top} of 5 hold under any of "
            f"{every_df.height} readings")
    lines.append("## The control's grid (standard scheme, every reading)\n")
    lines.append(to_markdown(grid_std.select("reading", "qeq", "feedback_rate", "feedback_published",
                                             "feedback_ratio", "loss_rate", "loss_published", "loss_ratio",
                                             "within_2x")))
    (out / "readings.md").write_text("\n".join(lines), encoding="utf-8")
    ctx.log(f"{ctx.name}: readings on the control: {verdict}; best: {best_name}")
    rows = []
    if best_name:
        for r in grid.filter(pl.col("reading") == best_name).iter_rows(named=True):
            for m, col in (("mc_feedback_rate", "feedback_rate"), ("mc_loss_rate", "loss_rate")):
                rows.append({"variant": f"{r['scheme']}-qeq{r['qeq']}", "metric": f"{m} (control's best reading)",
                             "value": r[col], "unit": "%",
                             "detail": f"reading {best_name} (CP / counted / per); {best} of {n} of the control's "
                                       f"cells within 2x; seed {ctx.runs[0][1].seed}"})
    rows.append({"variant": "representative", "metric": "mc_claims_held_max", "value": float(top), "unit": "",
                 "detail": f"the most of the study's 5 claims for the enhanced scheme that hold under any of the "
                           f"{every_df.height} readings (readings_claims.csv)"})
    for c in cl_rows:
        rows.append({"variant": "representative", "metric": "mc_claim_holds", "value": float(bool(c["holds"])),
                     "unit": "", "detail": f"{c['reading']}: {c['claim']}: {c['qcnsim']} (study {c['study']})"})
    return figs, pl.DataFrame(rows, schema={"variant": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64,
                                            "unit": pl.Utf8, "detail": pl.Utf8})
