"""hpcc-fbhadoop: the HPCC paper's FB_Hadoop FCT setting, for DCQCN and HPCC (docs/models/workload.md).

The HPCC paper (Li et al., SIGCOMM 2019, Figure 11) plots the 95th-percentile FCT slowdown of
FB_Hadoop flows per size bin: the flows sorted by size and cut into 20 bins of 5 % of them. The
authors' script that makes those numbers (github alibaba-edu/High-Precision-Congestion-Control,
commit 9f4be2a9, ``analysis/fct_analysis.py``) keeps the workload's flows (not the incast's: its
``$4 == 100`` selects the Poisson flows' port), only flows that finished (before its time limit),
clips a slowdown below 1 to 1, sorts by size, cuts the list into ``step = 5`` % slices by index
and reports per slice the largest size and the percentiles ``a[int(len(a) * p)]`` (p = 0.5, 0.95,
0.99) of the sorted slowdowns. :func:`hpcc_bins` computes exactly that from a run's ``fct``
table (the workload's flows are those named ``fb.*``).

:func:`post` writes ``hpcc_bins.csv`` / ``hpcc_bins.md`` (per variant and bin: the bin's largest
size, its flows, p50 / p95 / p99), ``unmatched.md`` (every setting of the sources qcnsim does not
match, :data:`UNMATCHED`), draws ``hpcc_p95.png`` (p95 slowdown per bin against the bin's largest
size; one line per variant, the scaled-down one marked so) and adds summary rows per variant:
``hpcc_slowdown_p95_binNN`` (NN = 01..20), ``hpcc_flows`` (the finished workload flows binned)
and ``hpcc_unfinished`` (workload flows unfinished at the end: left out, as the script does).

No published value is entered (``PUBLISHED`` is empty): the paper gives Figure 11's values only as
plotted curves, and the authors' project page gives its web-search and Hadoop results as images;
neither could be read as numbers here (docs/models/workload.md says what was read and where).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import polars as pl

from .fluid_xcheck import _save, plt

#: The per-bin statistic of the HPCC authors' analysis script: 20 bins of 5 % of the flows.
STEP_PERCENT = 5
#: The flows of the workload (the script's "normal" flows); the incast flows are ``incast*``.
WORKLOAD_PREFIX = "fb."

#: No number can be read from the sources (figures only); see the module docstring.
PUBLISHED: List[dict] = []

HEADLINE = ("fb30-incast and fb50 are the paper's two Figure 11 settings (full form only); "
            "scaled-fb30-incast is a SCALED-DOWN smoke form for CI (60 us of arrivals), not comparable. "
            "No published value could be read as a number (Figure 11 and the project page give them as "
            "plots): see docs/models/workload.md#reference-experiment-hpcc-fbhadoop")

#: Settings of the sources qcnsim does not match (or matches only by an interpretation), with the
#: source's value and qcnsim's. Written to ``unmatched.md`` and listed in the docs page.
UNMATCHED = [
    ("congestion control", "Figure 11 also shows DCQCN with a window, TIMELY, TIMELY with a window, DCTCP and HPCC",
     "DCQCN, and HPCC in the hpcc-* variants (the others need congestion controls qcnsim does not run yet)"),
    ("transport", "RoCE go-back-N with an ACK per packet (L2_ACK_INTERVAL 1, L2_BACK_TO_ZERO 0), ACKs at high "
     "priority", "DCQCN: open loop (udp), no ACK traffic; the fabric is lossless (PFC), so nothing needs resending. "
     "HPCC: go-back-N with an ACK per packet carrying INT, ACKs in the control queues (HPCC's runs: ACK_HIGH_PRIO 0, "
     "at the data priority)"),
    ("frame size", "1000 B payload + 48 B of headers per packet (PACKET_PAYLOAD_SIZE 1000; trace '1048(1000)')",
     "1000 B frames carrying 1000 B of the flow: header bytes not on the wire"),
    ("ECN thresholds", "per link speed: Kmin/Kmax 400/1600 KB at 100 G, 1600/6400 KB at 400 G, Pmax 0.2",
     "one value for every port: the 100 G entry (400/1600 KB)"),
    ("PFC threshold", "free shared memory >> shift: 1/8 at 100 G ports, 1/2 at 400 G ports (third.cc pfc_a_shift)",
     "one alpha for every port: 1/8"),
    ("PFC headroom", "rate x delay x 3 / 8 per port: 37,500 B at 100 G, 150,000 B at 400 G",
     "150,000 B for every lossless PG (ToR host ports get more)"),
    ("incasts", "60-to-1 of 500 KB; how often and into which receivers is in the paper's text, not read here",
     "one every 1 ms from 0.5 ms, each into a different receiver (another ToR each), senders drawn at random"),
    ("duration", "traffic_gen -t 0.1 (0.1 s of arrivals), the run until every flow ends (SIMULATOR_STOP_TIME 4 s)",
     "arrivals for 10 ms (fb30-incast) or 6 ms (fb50), runs of 12 / 8 ms: qcnsim caps a scenario at 200,000 flows "
     "and these runs do not use its drain mode (meta.drain_until) yet; flows unfinished at the end are counted "
     "(hpcc_unfinished) and left out, as the "
     "authors' script leaves out flows that finish after its time limit"),
    ("slowdown", "FCT over the authors' standalone FCT (their fct.txt column 8)",
     "FCT over qcnsim's ideal FCT on the idle fabric (docs/tables.md#fct); the two ideal models may differ"),
    ("switch latency", "none modelled in the HPCC ns-3 switch", "0 us (the same)"),
]


def _pctl(a: List[float], p: float) -> float:
    """``a[int(len(a) * p)]`` of a sorted list (the authors' ``get_pctl``)."""
    return a[int(len(a) * p)]


def hpcc_bins(fct: pl.DataFrame, step: int = STEP_PERCENT, prefix: str = WORKLOAD_PREFIX) -> pl.DataFrame:
    """The HPCC authors' per-bin slowdown statistics of one run's ``fct`` table (see the module
    docstring): one row per bin (``bin`` 1..100/step) with ``size_hi`` (the bin's largest size),
    ``flows``, ``p50``, ``p95``, ``p99``. Bins are cut by index, ``[i*n/100, (i+step)*n/100)``
    with integer division as in the script, over the finished workload flows sorted by size (ties
    in the table's order). An empty bin is left out."""
    t = fct.filter(pl.col("flow").str.starts_with(prefix) & pl.col("finished"))
    t = t.with_row_index("_ord").sort(["size_bytes", "_ord"])
    sizes = t["size_bytes"].to_list()
    slow = [max(1.0, float(x)) for x in t["slowdown"].to_list()]
    n = len(sizes)
    rows = []
    for k, i in enumerate(range(0, 100, step)):
        lo, hi = i * n // 100, (i + step) * n // 100
        if hi <= lo:
            continue
        s = sorted(slow[lo:hi])
        rows.append({"bin": k + 1, "size_hi": int(sizes[hi - 1]), "flows": hi - lo,
                     "p50": _pctl(s, 0.5), "p95": _pctl(s, 0.95), "p99": _pctl(s, 0.99)})
    return pl.DataFrame(rows, schema={"bin": pl.Int64, "size_hi": pl.Int64, "flows": pl.Int64,
                                      "p50": pl.Float64, "p95": pl.Float64, "p99": pl.Float64})


def unfinished(fct: pl.DataFrame, prefix: str = WORKLOAD_PREFIX) -> int:
    """Workload flows that had not finished at the end of the run."""
    return int(fct.filter(pl.col("flow").str.starts_with(prefix) & ~pl.col("finished")).height)


def bins_table(runs) -> pl.DataFrame:
    frames = []
    for name, res in runs:
        fct = res.tables.get("fct")
        if fct is None or fct.height == 0:
            continue
        frames.append(hpcc_bins(fct).with_columns(pl.lit(name).alias("variant")))
    if not frames:
        return pl.DataFrame(schema={"variant": pl.Utf8, "bin": pl.Int64, "size_hi": pl.Int64, "flows": pl.Int64,
                                    "p50": pl.Float64, "p95": pl.Float64, "p99": pl.Float64})
    return pl.concat(frames).select("variant", "bin", "size_hi", "flows", "p50", "p95", "p99")


def summary_rows(runs, table: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for name, res in runs:
        fct = res.tables.get("fct")
        if fct is None:
            continue
        mine = table.filter(pl.col("variant") == name)
        for r in mine.iter_rows(named=True):
            rows.append((name, f"hpcc_slowdown_p95_bin{r['bin']:02d}", r["p95"], "",
                         f"95th percentile slowdown of size bin {r['bin']} of {100 // STEP_PERCENT} "
                         f"(sizes up to {r['size_hi']} B; {r['flows']} finished workload flows; the HPCC "
                         f"authors' fct_analysis.py statistic)"))
        rows.append((name, "hpcc_flows", float(mine["flows"].sum()), "flows",
                     "finished workload flows in the HPCC bins (incast flows left out)"))
        rows.append((name, "hpcc_unfinished", float(unfinished(fct)), "flows",
                     "workload flows unfinished at the end, left out of the HPCC bins"))
    return pl.DataFrame({"variant": [r[0] for r in rows], "metric": [r[1] for r in rows],
                         "value": [float(r[2]) for r in rows], "unit": [r[3] for r in rows],
                         "detail": [r[4] for r in rows]},
                        schema={"variant": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64, "unit": pl.Utf8,
                                "detail": pl.Utf8})


def p95_figure(table: pl.DataFrame, out: Path) -> Optional[Path]:
    if table.height == 0:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    for name in table["variant"].unique(maintain_order=True):
        t = table.filter(pl.col("variant") == name).sort("bin")
        scheme = "HPCC" if "hpcc" in name else "DCQCN"
        label = f"{scheme} {name}" + (" (scaled down: not comparable)" if name.startswith("scaled-") else "")
        ax.plot(t["size_hi"].to_numpy(), t["p95"].to_numpy(), marker="o", ms=3, lw=1, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (largest of each 5 % bin, bytes)")
    ax.set_ylabel("95th percentile slowdown")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out)


def unmatched_markdown() -> str:
    lines = ["| setting | the sources (HPCC paper, its ns-3 configuration) | qcnsim's hpcc-fbhadoop |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in UNMATCHED]
    return "\n".join(lines) + "\n"


def post(ctx):
    from .._tables import to_markdown

    out: Path = ctx.out_dir
    table = bins_table(ctx.runs)
    table.write_csv(out / "hpcc_bins.csv")
    note = ("Per variant: the finished workload flows sorted by size, 20 bins of 5 % of them; size_hi = the "
            "bin's largest size; p50/p95/p99 as the HPCC authors' analysis/fct_analysis.py computes them. "
            + ("A SCALED-DOWN quick run: not comparable with the paper.\n\n" if ctx.quick else "\n\n"))
    (out / "hpcc_bins.md").write_text(f"# {ctx.name}: slowdown per 5 % size bin (HPCC Figure 11 statistic)\n\n"
                                      + note + to_markdown(table), encoding="utf-8")
    (out / "unmatched.md").write_text(f"# {ctx.name}: settings qcnsim does not match\n\n" + unmatched_markdown(),
                                      encoding="utf-8")
    figs = [f for f in [p95_figure(table, out / "hpcc_p95.png")] if f is not None]
    rows = summary_rows(ctx.runs, table)
    by: Dict[str, List[float]] = {}
    for r in table.iter_rows(named=True):
        by.setdefault(r["variant"], []).append(r["p95"])
    for name, p95 in by.items():
        ctx.log(f"{name}: p95 slowdown per 5 % bin (smallest to largest) " + " ".join(f"{v:.1f}" for v in p95))
    return figs, rows


#: Figure captions for the reproduction report.
CAPTIONS = {
    "hpcc_p95.png": "95th-percentile FCT slowdown of the FB_Hadoop flows per 5 % size bin (the statistic of the "
                    "HPCC authors' analysis script for Figure 11) against the bin's largest size, per variant (DCQCN, or HPCC in the hpcc-* variants). The paper's curves are not shown: their "
                    "values could not be read as numbers.",
}
