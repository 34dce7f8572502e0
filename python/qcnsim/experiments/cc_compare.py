"""cc-compare: the congestion controls of RDMA data centers side by side on one leaf-spine, under
web-search load with incasts over it, the same flows (same seed) for every scheme
(docs/experiments/cc-compare.md).

Every variant of ``scenarios/cc-compare.toml`` is one scheme (the variant's name is the scheme's
label); nothing here names a scheme, so a variant added to the file is compared like the others.
:func:`post` writes:

* ``cc_compare.csv`` / ``cc_compare.md``: the tidy comparison, one row per (scheme, workload,
  metric), :func:`compare_table`; the same rows are added to the experiment's summary (its
  ``variant`` column is the scheme, plus a ``workload`` column);
* ``cc_fct_bins.csv``: per scheme, workload and 5 % size bin the slowdown statistics
  (:func:`fct_bins`);
* ``cc_fct_slowdown.png``: :func:`qcnsim.plot.fct_slowdown` of those bins, a panel per workload,
  a colour per scheme (p50 and p99);
* ``cc_incast_slowdown.png``: the distribution of the slowdowns of each workload whose flows all
  have one size (the incast), a colour per scheme;
* ``cc_queue_cdf.png``: the distribution of the sampled queue at each port of
  ``metrics.queue_ports`` over the arrival window, a panel per port, a colour per scheme.

The workloads are the scenario's ``[[workloads]]`` (a flow belongs to the workload its name starts
with: ``ws.17`` to ``ws``); the run-wide metrics (queues, PFC, throughput) have workload ``all``.

``PUBLISHED`` is empty: no study compares these schemes on one fabric (see the page).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import polars as pl

from .. import plot

#: No published number exists for this comparison (each scheme's paper compares a few schemes on
#: its own fabric); published.md says so.
PUBLISHED: List[dict] = []

HEADLINE = ("no published numbers exist for this comparison: the schemes' own papers are reproduced in "
            "dcqcn-incast, dcqcn-fluid and hpcc-fbhadoop; here every scheme runs the same flows on the same "
            "fabric (cc_compare.md, cc_fct_slowdown.png, cc_incast_slowdown.png, cc_queue_cdf.png)")

CAPTIONS = {
    "cc_fct_slowdown.png": "FCT slowdown against flow size, one panel per workload (the web-search background "
                           "and the incast bursts over it), one colour per scheme (a variant of the scenario): "
                           "the median (solid) and 99th percentile (dashed) of each of the 20 bins of 5 % of the "
                           "workload's flows, drawn at the bin's largest size. The panel titles count the "
                           "unfinished flows and how the statistics treat them.",
    "cc_incast_slowdown.png": "Distribution (CDF) of the FCT slowdown of the incast's flows (all of one size, so "
                              "a curve by size would be one point), one colour per scheme; unfinished flows are "
                              "counted in the title and left out.",
    "cc_queue_cdf.png": "Distribution (CDF) of the sampled egress queue at the bottleneck ports "
                        "(metrics.queue_ports: the incast receiver's port, a spine downlink, a leaf uplink) over "
                        "the arrival window [0, meta.duration), one colour per scheme.",
}

#: The tables the reproduction report shows in the experiment's section (qcnsim.report).
REPORT_TABLES = {
    "cc_compare_key.csv": "Key metrics, one column per scheme (every row of every scheme: cc_compare.csv)",
    "cc_compare.csv": "One row per (scheme, workload, metric)",
}

#: The rows of ``cc_compare_key.csv``: (workload, metric); run-wide metrics once per port.
KEY_METRICS = (
    ("ws", "slowdown_p50"), ("ws", "slowdown_p99"), ("ws", "slowdown_p99_small"), ("ws", "slowdown_p99_large"),
    ("ws", "flows_unfinished"), ("ws", "flows_excluded"),
    ("incast", "slowdown_p50"), ("incast", "slowdown_p99"), ("incast", "burst_completion_max"),
    ("incast", "flows_unfinished"), ("incast", "flows_excluded"),
    ("all", "queue_p99"), ("all", "pause_frames"), ("all", "paused_time_host_nics"), ("all", "throughput"),
    ("all", "dropped_frames"), ("all", "run_end"), ("all", "drain_cap_reached"),
)

PS = 1e12
STATS = ("mean", "p50", "p95", "p99")
COLUMNS = {"scheme": pl.Utf8, "workload": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64, "unit": pl.Utf8,
           "detail": pl.Utf8}
BIN_COLUMNS = {"scheme": pl.Utf8, "workload": pl.Utf8, "binning": pl.Utf8, "size_bin": pl.Utf8,
               "size_bin_lo": pl.Int64, "size_bin_hi": pl.Float64, "stat": pl.Utf8, "slowdown": pl.Float64,
               "flows": pl.Int64, "finished": pl.Int64, "unfinished": pl.Int64, "unfinished_as": pl.Utf8}


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Percentile ``q`` (0..100) of sorted values by nearest rank, as the core's ``fct_stats``
    computes it (NaN when empty)."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    rank = max(1, math.ceil(q / 100.0 * n))
    return float(sorted_values[min(rank, n) - 1])


def workload_of(flow: str, workloads: Sequence[str]) -> Optional[str]:
    """The workload a generated flow belongs to (``ws.17`` -> ``ws``), None for a written flow."""
    head = flow.rsplit(".", 1)[0]
    return head if head in workloads else None


def run_end_s(res) -> float:
    """When the run ended (s): the drain mode's ``run_end`` row, else ``meta.duration``."""
    from ..reproduce import parse_time_ps

    s = res.summary.filter(pl.col("metric") == "run_end")
    if s.height:
        return float(s["value"][0])
    return parse_time_ps(res.resolved["meta"]["duration"]) / PS


def _bin_stats(values: List[float]) -> Dict[str, float]:
    v = sorted(x for x in values if not math.isnan(x))
    out = {"mean": sum(v) / len(v) if v else float("nan")}
    for st in ("p50", "p95", "p99"):
        out[st] = percentile(v, float(st[1:]))
    return out


def fct_bins(scheme: str, res) -> pl.DataFrame:
    """The slowdown statistics of one run's flows per workload, in the tidy ``fct_stats`` shape
    (docs/tables.md): 20 bins of 5 % of the workload's flows in size order (ties by flow order)
    and ``all sizes``; nearest-rank percentiles; unfinished flows excluded or taken as lower bounds
    ((run end - start) / ideal) as ``analysis.fct_unfinished`` says, and counted either way."""
    fct = res.tables.get("fct")
    if fct is None or fct.height == 0:
        return pl.DataFrame(schema=BIN_COLUMNS)
    names = [w["name"] for w in res.resolved.get("workloads", [])]
    lower = res.resolved.get("analysis", {}).get("fct_unfinished") == "lower_bound"
    as_word = "lower_bound" if lower else "excluded"
    end_ps = run_end_s(res) * PS
    rows = []
    flows = fct.with_row_index("_k").with_columns(
        pl.col("flow").map_elements(lambda f: workload_of(f, names), return_dtype=pl.Utf8).alias("_w"))
    for w in names:
        t = flows.filter(pl.col("_w") == w).sort(["size_bytes", "_k"])
        n = t.height
        if n == 0:
            continue
        size = t["size_bytes"].to_list()
        fin = t["finished"].to_list()
        slow = [float(s) if f and s is not None else float("nan") for s, f in zip(t["slowdown"].to_list(), fin)]
        if lower:
            starts, ideal = t["start_ps"].to_list(), t["ideal_fct_ps"].to_list()
            stat_slow = [s if f else (end_ps - a) / i for s, f, a, i in zip(slow, fin, starts, ideal)]
        else:
            stat_slow = slow
        bins = [("quantile", f"p{q * 5}-{q * 5 + 5}", q * n // 20, (q + 1) * n // 20) for q in range(20)]
        bins.append(("all", "all sizes", 0, n))
        for binning, label, a, b in bins:
            if b <= a:
                continue
            done = sum(1 for x in fin[a:b] if x)
            st = _bin_stats(stat_slow[a:b])
            lo, hi = (size[a], float(size[b - 1])) if binning == "quantile" else (0, float("inf"))
            for name in STATS:
                rows.append({"scheme": scheme, "workload": w, "binning": binning, "size_bin": label,
                             "size_bin_lo": lo, "size_bin_hi": hi, "stat": name, "slowdown": st[name],
                             "flows": b - a, "finished": done, "unfinished": b - a - done, "unfinished_as": as_word})
    return pl.DataFrame(rows, schema=BIN_COLUMNS)


def _arrival_window_ps(res) -> int:
    from ..reproduce import parse_time_ps

    return parse_time_ps(res.resolved["meta"]["duration"])


def queue_samples(res, port: str) -> pl.Series:
    """The sampled queue (bytes) of ``port`` over the arrival window [0, meta.duration)."""
    q = res.tables.get("queue_samples")
    if q is None:
        return pl.Series("qlen_bytes", [], dtype=pl.Int64)
    return q.filter((pl.col("port") == port) & (pl.col("t_ps") < _arrival_window_ps(res)))["qlen_bytes"]


def _row(scheme, workload, metric, value, unit, detail) -> dict:
    v = float(value) if value is not None else float("nan")
    return {"scheme": scheme, "workload": workload, "metric": metric, "value": v, "unit": unit, "detail": detail}


def run_rows(scheme: str, res, bins: pl.DataFrame) -> List[dict]:
    """The comparison rows of one run (one scheme): per workload the flows, unfinished and
    excluded flows and the overall and small-flow slowdowns; run-wide the queues, PFC, throughput,
    transport and drain rows."""
    rows: List[dict] = []
    window = _arrival_window_ps(res)
    names = [w["name"] for w in res.resolved.get("workloads", [])]
    for w in names:
        b = bins.filter(pl.col("workload") == w)
        if b.height == 0:
            continue
        allb = b.filter(pl.col("binning") == "all")
        stat = {r["stat"]: r for r in allb.iter_rows(named=True)}
        first = next(iter(stat.values()))
        how = first["unfinished_as"]
        rows.append(_row(scheme, w, "flows", first["flows"], "flows", "flows the workload generated"))
        rows.append(_row(scheme, w, "flows_unfinished", first["unfinished"], "flows",
                         "not finished at the run's end (the run_end row)"))
        rows.append(_row(scheme, w, "flows_excluded", first["unfinished"] if how == "excluded" else 0, "flows",
                         f"left out of the slowdown statistics (analysis.fct_unfinished: unfinished {how})"))
        for st in STATS:
            rows.append(_row(scheme, w, f"slowdown_{st}", stat[st]["slowdown"], "ratio",
                             f"all sizes (unfinished {how})"))
        q = b.filter(pl.col("binning") == "quantile")
        small = q.filter(pl.col("size_bin") == "p0-5")
        large = q.filter(pl.col("size_bin") == "p95-100")
        if small.height and large.height and small["size_bin_hi"][0] >= large["size_bin_lo"][0]:
            small = large = small.clear()  # one size for every flow (an incast): no small and large flows
        for label, part in (("smallest 5 %", small), ("largest 5 %", large)):
            for st in ("p50", "p99"):
                r = part.filter(pl.col("stat") == st)
                if r.height:
                    key = "small" if label.startswith("smallest") else "large"
                    rows.append(_row(scheme, w, f"slowdown_{st}_{key}", r["slowdown"][0], "ratio",
                                     f"{label} of the flows (sizes {r['size_bin_lo'][0]} to "
                                     f"{r['size_bin_hi'][0]:.0f} B)"))
        if _is_incast(res, w):
            qct = incast_completion(res, w)
            if qct:
                rows.append(_row(scheme, w, "burst_completion_mean", sum(qct) / len(qct), "s",
                                 f"per burst, its start to its last flow's finish; {len(qct)} bursts all finished"))
                rows.append(_row(scheme, w, "burst_completion_max", max(qct), "s",
                                 f"the slowest of {len(qct)} bursts"))
    # queues at the ports sampled, over the arrival window
    for port in res.resolved.get("metrics", {}).get("queue_ports", []) or []:
        s = queue_samples(res, port)
        if s.len() == 0:
            continue
        v = sorted(float(x) for x in s.to_list())
        det = f"{port}, {len(v)} samples over [0, {window / PS:g} s)"
        rows.append(_row(scheme, "all", "queue_mean", sum(v) / len(v), "B", det))
        rows.append(_row(scheme, "all", "queue_p50", percentile(v, 50), "B", det))
        rows.append(_row(scheme, "all", "queue_p99", percentile(v, 99), "B", det))
        rows.append(_row(scheme, "all", "queue_max", v[-1], "B", det))
    # PFC
    ports = res.tables["ports"]
    hosts = {h["name"] for h in res.resolved.get("hosts", [])}
    is_host = pl.col("port").str.split("->").list.first().is_in(list(hosts))
    rows.append(_row(scheme, "all", "pause_frames", ports["pause_sent"].sum(), "frames",
                     "PFC frames sent by all switches (XOFF, refreshes, XON)"))
    rows.append(_row(scheme, "all", "paused_ports", ports.filter(pl.col("paused_ps") > 0).height, "ports",
                     f"ports paused at some time, of {ports.height}"))
    rows.append(_row(scheme, "all", "paused_time_switch_ports", ports.filter(~is_host)["paused_ps"].sum() / PS, "s",
                     "summed over the switch ports (time with a priority paused), whole run"))
    rows.append(_row(scheme, "all", "paused_time_host_nics", ports.filter(is_host)["paused_ps"].sum() / PS, "s",
                     "summed over the hosts' NIC ports, whole run"))
    # throughput over the arrival window
    tp = res.tables.get("port_throughput")
    if tp is not None:
        for port in tp["port"].unique(maintain_order=True).to_list():
            t = tp.filter((pl.col("port") == port) & (pl.col("t_ps") + pl.col("bin_ps") <= window))
            if t.height:
                rows.append(_row(scheme, "all", "throughput", t["throughput_bps"].mean(), "bps",
                                 f"{port}, mean over [0, {window / PS:g} s)"))
    # transport, drain, losses
    summ = {r["metric"]: r for r in res.summary.iter_rows(named=True)}
    for metric, unit in (("dropped_frames", "frames"), ("retransmitted_bytes", "B"), ("gbn_timeouts", "timeouts"),
                         ("run_end", "s"), ("drain_cap_reached", "bool")):
        if metric in summ:
            rows.append(_row(scheme, "all", metric, summ[metric]["value"], unit, summ[metric]["detail"]))
    return rows


def _is_incast(res, w: str) -> bool:
    return any(x.get("name") == w and x.get("kind") == "incast" for x in res.resolved.get("workloads", []))


def incast_completion(res, w: str) -> List[float]:
    """Per burst of incast workload ``w`` (its flows that start at one instant): the time from the
    start to its last flow's finish (s); empty when a burst has an unfinished flow."""
    fct = res.tables.get("fct")
    if fct is None:
        return []
    t = fct.filter(pl.col("flow").str.starts_with(f"{w}."))
    out = []
    for (start,), g in t.group_by(["start_ps"], maintain_order=True):
        if not g["finished"].all():
            return []
        out.append((float(g["finish_ps"].max()) - float(start)) / PS)
    return out


def compare_table(runs) -> pl.DataFrame:
    """One row per (scheme, workload, metric) over the runs (label = scheme)."""
    rows = []
    for name, res in runs:
        rows.extend(run_rows(name, res, fct_bins(name, res)))
    return pl.DataFrame(rows, schema=COLUMNS)


def cdf_figure(panels, xlabel: str, scale: float = 1.0, out=None):
    """One panel per ``(title, {scheme: values})`` of ``panels``: the empirical CDF of each
    scheme's values (divided by ``scale``), a colour per scheme in the order of first appearance
    (:data:`qcnsim.plot.SCHEME_COLORS`, as the slowdown figure)."""
    from matplotlib.figure import Figure

    panels = [(t, d) for t, d in panels if any(d.values())]
    if not panels:
        return None
    schemes = list(dict.fromkeys(s for _, d in panels for s in d))
    colors = {s: plot.SCHEME_COLORS[i % len(plot.SCHEME_COLORS)] for i, s in enumerate(schemes)}
    fig = Figure(figsize=(plot.PAPER_WIDTH, 2.4))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, data) in zip(axes, panels):
        for s, values in data.items():
            v = sorted(float(x) / scale for x in values)
            if v:
                ax.step(v, [(k + 1) / len(v) for k in range(len(v))], where="post", color=colors[s],
                        linewidth=1.1, label=s)
        ax.set_title(title, fontsize=7.5)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3, linewidth=0.5)
    axes[0].set_ylabel("fraction", fontsize=8)
    axes[0].legend(fontsize=7, frameon=False, title="scheme", title_fontsize=7)
    fig.tight_layout()
    if out is not None:
        plot.save(fig, out)
    return fig


def queue_figure(runs, out=None):
    """CDF of the sampled queue per port of ``metrics.queue_ports`` over the arrival window, one
    panel per port, one colour per scheme."""
    ports = list(dict.fromkeys(p for _, r in runs for p in (r.resolved.get("metrics", {}).get("queue_ports") or [])))
    panels = [(port, {name: queue_samples(res, port).to_list() for name, res in runs}) for port in ports]
    return cdf_figure(panels, "queue (KB)", 1e3, out)


def one_size_workloads(bins: pl.DataFrame) -> List[str]:
    """The workloads whose flows all have one size (an incast): a slowdown-by-size curve has one
    point there, so their slowdowns are drawn as a distribution instead."""
    q = bins.filter(pl.col("binning") == "quantile")
    out = []
    for w in q["workload"].unique(maintain_order=True).to_list():
        t = q.filter(pl.col("workload") == w)
        if t["size_bin_lo"].min() == t["size_bin_hi"].max():
            out.append(w)
    return out


def slowdown_cdf_figure(runs, workloads: Sequence[str], out=None):
    """CDF of the finished flows' slowdowns of each of ``workloads`` (one panel each), one colour
    per scheme; the panel title counts the unfinished flows (left out)."""
    panels = []
    for w in workloads:
        data, unfinished = {}, 0
        for name, res in runs:
            f = res.tables["fct"].filter(pl.col("flow").str.starts_with(f"{w}."))
            data[name] = f.filter(pl.col("finished"))["slowdown"].to_list()
            unfinished += f.height - len(data[name])
        panels.append((f"workload {w}: slowdown of each flow\nunfinished {unfinished} (left out)", data))
    return cdf_figure(panels, "FCT slowdown (FCT / ideal FCT)", 1.0, out)


def key_table(table: pl.DataFrame) -> pl.DataFrame:
    """The :data:`KEY_METRICS` rows of the tidy ``table`` side by side: one row per (workload,
    metric, where: the port of a per-port metric), one column per scheme (in the table's order)."""
    schemes = table["scheme"].unique(maintain_order=True).to_list()
    first = pl.col("detail").str.split(",").list.first()
    t = table.with_columns(where=pl.when((pl.col("workload") == "all") & first.str.contains("->", literal=True))
                           .then(first).otherwise(pl.lit("")))
    t = t.filter(pl.struct(["workload", "metric"]).map_elements(
        lambda r: (r["workload"], r["metric"]) in KEY_METRICS, return_dtype=pl.Boolean))
    if t.height == 0:
        return pl.DataFrame()
    order = {k: i for i, k in enumerate(KEY_METRICS)}
    wide = t.pivot(on="scheme", index=["workload", "metric", "where", "unit"], values="value",
                   aggregate_function="first")
    wide = wide.with_columns(pl.struct(["workload", "metric"]).map_elements(
        lambda r: order[(r["workload"], r["metric"])], return_dtype=pl.Int64).alias("_o"))
    return wide.sort("_o", maintain_order=True).select(["workload", "metric", "where", "unit", *schemes])


def post(ctx):
    from .._tables import to_markdown

    out: Path = ctx.out_dir
    if not ctx.runs:
        return [], None
    bins = pl.concat([fct_bins(name, res) for name, res in ctx.runs], how="vertical")
    bins.write_csv(out / "cc_fct_bins.csv")
    figs = []
    one_size = one_size_workloads(bins)
    by_size = bins.filter(~pl.col("workload").is_in(one_size))
    if by_size.height:
        fig = plot.fct_slowdown(by_size, panel="workload", scheme="scheme", stats=("p50", "p99"),
                                panel_title=lambda w: f"workload {w}")
        figs.append(plot.save(fig, out / "cc_fct_slowdown.png"))
    if one_size:
        figs.append(plot.save(slowdown_cdf_figure(ctx.runs, one_size), out / "cc_incast_slowdown.png"))
    figs.append(plot.save(queue_figure(ctx.runs), out / "cc_queue_cdf.png"))
    figs = [f for f in figs if f is not None]
    table = pl.concat([pl.DataFrame(run_rows(name, res, bins.filter(pl.col("scheme") == name)), schema=COLUMNS)
                       for name, res in ctx.runs], how="vertical")
    table.write_csv(out / "cc_compare.csv")
    key_table(table).write_csv(out / "cc_compare_key.csv")
    quick = " (quick: a shorter arrival window than the full form; not the study's numbers)" if ctx.quick else ""
    (out / "cc_compare.md").write_text(
        f"# {ctx.name}{quick}: one row per (scheme, workload, metric)\n\n"
        "No published numbers exist for this comparison (docs/experiments/cc-compare.md).\n\n"
        f"{to_markdown(table)}", encoding="utf-8")
    for r in table.filter(pl.col("metric").is_in(["slowdown_p50", "slowdown_p99"])).iter_rows(named=True):
        ctx.log(f"{r['scheme']:<8} {r['workload']:<8} {r['metric']:<14} {r['value']:.2f}")
    summary_rows = table.rename({"scheme": "variant"})
    return figs, summary_rows
