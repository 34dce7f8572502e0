"""fabric-websearch: web-search flows on a 128-host leaf-spine, QCN vs PFC vs DCQCN over PFC at
30/50/70 % load.

Draws ``fct_slowdown.png`` (:func:`qcnsim.plot.fct_slowdown`: one panel per load for QCN, PFC
and DCQCN, one for the other variants beside QCN at their load; x = flow size at the upper size
of each of the 20 quantile bins of 5 % of the flows, the median and 99th percentile slowdown per
scheme, a colour per scheme in every panel) and writes ``fct.csv`` /
``fct.md``: per variant and size bin the number of flows, unfinished flows, and the mean, median,
95th and 99th percentile slowdown (the ``fct_*`` rows of the summaries, side by side). See
docs/models/workload.md.
"""

from __future__ import annotations

import re

import polars as pl

from .. import plot


def fct_table(runs) -> pl.DataFrame:
    """Per variant and size bin (the fixed bins and all sizes): flows, unfinished flows and the
    slowdown statistics, read from each run's tidy ``fct_stats`` table (docs/tables.md)."""
    rows = []
    for name, res in runs:
        t = res.tables.get("fct_stats")
        if t is None or t.height == 0:
            continue
        t = t.filter(pl.col("binning").is_in(["fixed", "all"]))
        by_bin = {}
        for r in t.iter_rows(named=True):
            row = by_bin.setdefault(r["size_bin"], {"variant": name, "bin": r["size_bin"], "flows": r["flows"],
                                                     "flows_unfinished": r["unfinished"]})
            row[f"fct_slowdown_{r['stat']}"] = r["slowdown"]
        rows.extend(by_bin.values())
    cols = ["variant", "bin", "flows", "flows_unfinished", "fct_slowdown_mean", "fct_slowdown_p50",
            "fct_slowdown_p95", "fct_slowdown_p99"]
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows],
                        schema={c: (pl.Utf8 if c in ("variant", "bin") else pl.Float64) for c in cols})


CAPTIONS = {
    "fct_slowdown.png": "FCT slowdown against flow size, one panel per load for QCN, PFC and DCQCN over PFC, and one "
                        "for the 50 % load variants (shallow buffers, go-back-N, a link failure) beside QCN: the "
                        "median (solid) and 99th "
                        "percentile (dashed) of each of the 20 bins of 5 % of the flows (the HPCC paper's Figure 11 "
                        "binning), drawn at the bin's largest flow size, one colour per scheme in every panel. "
                        "The panel titles count the unfinished flows and say how the statistics treat them "
                        "(analysis.fct_unfinished: excluded by default).",
}


def scheme_of(variant: str) -> str:
    """The scheme of a variant: its name without the trailing load (``qcn-gbn-shallow-50`` ->
    ``qcn-gbn-shallow``)."""
    m = re.fullmatch(r"(.+)-\d+", variant)
    return m.group(1) if m else variant


#: The schemes compared at every load; the other variants (shallow buffers, go-back-N, a link
#: failure: all at 50 % load) form a panel of their own, beside QCN at their load.
MAIN_SCHEMES = ("qcn", "pfc", "dcqcn")


def slowdown_figure(runs, out=None):
    """:func:`qcnsim.plot.fct_slowdown` of the runs: a panel per load (``workloads.0.load`` of each
    run's resolved scenario) with the :data:`MAIN_SCHEMES`, and a panel with the other variants
    and QCN at their load; a line colour per scheme (:func:`scheme_of`), the same in every panel."""
    table = plot.fct_stats_table(runs, scheme=lambda v, r: scheme_of(v),
                                 load=lambda v, r: float(r.resolved["workloads"][0]["load"]))
    if table.height == 0:
        return None
    main = table.filter(pl.col("scheme").is_in(MAIN_SCHEMES))
    rest = table.filter(~pl.col("scheme").is_in(MAIN_SCHEMES))
    loads = sorted(main["load"].unique().to_list())
    panels = [main.filter(pl.col("load") == x).with_columns(panel=pl.lit(f"{x * 100:g} % load")) for x in loads]
    rest_loads = sorted(rest["load"].unique().to_list())
    for x in rest_loads:  # the other variants, with QCN at the same load for reference
        group = pl.concat([main.filter((pl.col("load") == x) & (pl.col("scheme") == "qcn")),
                           rest.filter(pl.col("load") == x)], how="diagonal_relaxed")
        panels.append(group.with_columns(panel=pl.lit(f"{x * 100:g} % load: buffers, transport, link failure")))
    t = pl.concat(panels, how="diagonal_relaxed")
    return plot.fct_slowdown(t, out, panel="panel", scheme="scheme", stats=("p50", "p99"), panel_title=str,
                             max_cols=2 if len(panels) == 4 else 3)


def post(ctx):
    figs = [p for p in [plot.save(slowdown_figure(ctx.runs), ctx.out_dir / "fct_slowdown.png")] if p is not None]
    t = fct_table(ctx.runs)
    t.write_csv(ctx.out_dir / "fct.csv")
    from .._tables import to_markdown

    (ctx.out_dir / "fct.md").write_text(f"# {ctx.name}: FCT slowdown per size bin\n\n{to_markdown(t)}",
                                        encoding="utf-8")
    for r in t.filter(pl.col("bin") == "all sizes").iter_rows(named=True):
        ctx.log(f"{r['variant']:<8} p50 {r['fct_slowdown_p50']:.2f} p99 {r['fct_slowdown_p99']:.1f} "
                f"unfinished {r['flows_unfinished']:.0f} of {r['flows']:.0f}")
    return figs, None
