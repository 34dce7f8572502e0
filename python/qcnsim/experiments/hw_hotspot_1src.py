"""hw-hotspot-1src: standard QCN vs NIC-side Fb computation, one figure per hotspot depth.

The study measured throughput at the switch's output port at 10 ms resolution. The scenario
records 1 ms bins; this hook adds them up into the 10 ms bins (the bins are aligned at t = 0, so
ten 1 ms bins are exactly one 10 ms bin) and reports the recovery time at both resolutions, with
the rule of the summary's ``recovery_time`` (the end of the first bin after the hotspot whose
throughput reaches ``analysis.recovery_fraction`` of the restored rate): summary rows
``recovery_time_10ms`` (compared with the study) and ``recovery_time_1ms`` (equal to
``recovery_time``).

The variants form a grid: scheme (``standard``, ``nic``, ``nic-hw``) x the RP's stage gate
(``cc.qcn.rp.stage_gate``: ``both``, ``byte_counter``, ``either``) x hotspot (0.5G, 1G). The
common figures of ``reproduce`` put every variant on one axis. This hook draws

- ``by_hotspot.png``: per hotspot, the three schemes with the v2.x gate (``both``): the
  bottleneck throughput in 10 ms bins over the whole run, the recovery after the hotspot in 1 ms
  bins, and the CP queue;
- ``recovery_grid.png``: the whole grid, one panel per (hotspot, scheme), the three gates'
  recovery in 1 ms bins, the study's recovery time marked;

and writes the recovery times of all variants as ``recovery.csv`` / ``recovery.md`` (with the
grid as a scheme x gate table per hotspot).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import polars as pl

from .. import plot
from ..reproduce import parse_time_ps

plt = plot.plt

#: The headline cell of the grid: the scheme from what seed 000 says about its hardware (Fb
#: computed at the NIC side, the "implementation" rate granularity: ``nic-hw``); the stage gate,
#: on which seed 000 is silent, from seed 004, the same group's later hardware (compliant with
#: pseudo code v2.3: ``both``).
HEADLINE = ("nic-hw-0.5G and nic-hw-1G: the scheme is the one seed 000 ran on its hardware (\"Fb "
            "computation at the NIC side\", with the implementation's rate granularity 9.6 Mb/s, "
            "3.1 Mb/s, 51.2 Mb/s); seed 000 names no stage gate, so the gate is that of the same "
            "group's later hardware (seed 004, \"compliant with Pseudo Code v2.3\": "
            "cc.qcn.rp.stage_gate = \"both\"). The rest of the grid, scheme (standard, nic, nic-hw) x "
            "gate (both, byte_counter, either), runs beside it (recovery.md, recovery_grid.png). "
            "docs/models/qcn-nic-feedback.md")
#
# What study 000 (NEC / Fulcrum, QCN on hardware; docs/sources.md#hardware-study) measured: throughput at the switch's output port
# at 10 ms resolution. The hardware computed Fb at the NIC (the ``nic-hw`` variants model it); the
# study's ns-2 runs of original QCN and of NIC-side Fb recovered within 40 ms at 0.5G, and it
# concludes that they matched the hardware ("approx. 40 ms (20 ms)"). Values are the recovery
# times the slides state (a bound "<40ms" is entered as 40 ms).
_HW = "000: 'Good match of throughput data with ns-2 simulation - Approx. 40 ms (20 ms) for recovering the " \
      "throughput from 0.5G(1G) HOTSPOT' (hardware, Fb computed at the NIC side; resolution 10ms)"
_NS2 = "000: 'NS-2 Simulation (0.5G) ... Original QCN ... Fb computation at the NIC side ... <40ms' " \
       "(a bound; resolution 10ms)"
_NS2_1G = "000: 'Good match of throughput data with ns-2 simulation - Approx. 40 ms (20 ms) for recovering " \
          "the throughput from 0.5G(1G) HOTSPOT' (the ns-2 runs of original QCN and NIC-side Fb matched the " \
          "hardware; the 1G slide: '<20ms'; resolution 10ms)"
#: (scheme prefix of the variant names, its name in the tables)
SCHEMES = (("hotspot", "standard"), ("nic", "nic"), ("nic-hw", "nic-hw"))
#: (name infix, cc.qcn.rp.stage_gate)
GATES = (("", "both"), ("-gate-bc", "byte_counter"), ("-gate-either", "either"))
HOTSPOTS = ("0.5G", "1G")
_STUDY = {("nic-hw", "0.5G"): (40.0, _HW), ("nic-hw", "1G"): (20.0, _HW),
          ("hotspot", "0.5G"): (40.0, _NS2), ("nic", "0.5G"): (40.0, _NS2),
          ("hotspot", "1G"): (20.0, _NS2_1G), ("nic", "1G"): (20.0, _NS2_1G)}
#: Every cell of the grid beside the study's value for its scheme and hotspot (the gate is not
#: the study's: each cell is compared with the same published time).
PUBLISHED = [dict(metric="recovery_time_10ms", variant=f"{pre}{infix}-{hs}", value=_STUDY[(pre, hs)][0],
                  unit="ms", source=_STUDY[(pre, hs)][1])
             for pre, _ in SCHEMES for infix, _ in GATES for hs in HOTSPOTS]

STUDY_BIN_PS = 10 * 10**9  # the study's resolution, 10 ms

_NAME = re.compile(r"^(hotspot|nic-hw|nic)(?:-gate-(?:bc|either))?-(\d+(?:\.\d+)?G)$")


def _group(name: str) -> Tuple[str, str]:
    """(hotspot, scheme) from a variant name: ``nic-hw-gate-bc-0.5G`` -> (``0.5G``, ``nic-hw``);
    the standard variants are named ``hotspot[-gate-...]-<depth>``. A name outside the grid is
    its own group and scheme."""
    m = _NAME.match(name)
    if not m:
        return name, name
    return m.group(2), "standard" if m.group(1) == "hotspot" else m.group(1)


def gate_of(res) -> str:
    """The run's RP stage gate (``cc.qcn.rp.stage_gate``, default ``both``) from its resolved
    scenario."""
    return str(((res.resolved.get("cc") or {}).get("qcn") or {}).get("rp", {}).get("stage_gate") or "both")


def _hotspot_window(res) -> Optional[Tuple[int, int]]:
    """(start, end) in ps of the bottleneck's rate reduction, from the resolved schedule."""
    port = (res.resolved.get("analysis") or {}).get("bottleneck")
    entries = [e for e in res.resolved.get("schedule") or [] if port is None or e.get("port") == port]
    if len(entries) < 2:
        return None
    try:
        return parse_time_ps(entries[0]["at"]), parse_time_ps(entries[1]["at"])
    except (KeyError, ValueError):
        return None


def _rate_bps(value) -> Optional[float]:
    """``"10Gbps"`` (or a number of bit/s) -> bit/s."""
    from ..reproduce import _convert

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]+)\s*", str(value))
    return None if m is None else _convert(float(m.group(1)), m.group(2), "bps")


def _bins(res) -> Tuple[Optional[pl.DataFrame], Optional[int]]:
    """The bottleneck's throughput bins (t_ps, throughput_bps), sorted, and the bin width (ps)."""
    tp = res.tables.get("port_throughput")
    port = (res.resolved.get("analysis") or {}).get("bottleneck")
    if tp is None or tp.height == 0:
        return None, None
    if port is not None and "port" in tp.columns:
        tp = tp.filter(pl.col("port") == port)
    bin_ps = parse_time_ps((res.resolved.get("metrics") or {}).get("throughput_bin", "10ms"))
    return tp.select("t_ps", "throughput_bps").sort("t_ps"), bin_ps


def coarsen(bins: pl.DataFrame, bin_ps: int, to_ps: int) -> pl.DataFrame:
    """Bins of ``to_ps`` (a whole multiple of ``bin_ps``, aligned at t = 0) from bins of ``bin_ps``:
    the mean throughput of the sub-bins; an incomplete last bin is left out."""
    if to_ps % bin_ps:
        raise ValueError(f"cannot make {to_ps} ps bins from {bin_ps} ps bins")
    k = to_ps // bin_ps
    return (bins.with_columns((pl.col("t_ps") // to_ps * to_ps).alias("t_ps"))
            .group_by("t_ps").agg(pl.col("throughput_bps").sum(), pl.len().alias("n"))
            .filter(pl.col("n") == k).sort("t_ps")
            .select("t_ps", (pl.col("throughput_bps") / k).alias("throughput_bps")))


def recovery_from_bins(bins: pl.DataFrame, bin_ps: int, t_end_ps: int, target_bps: float) -> Optional[float]:
    """The summary's rule (``summary::recovery_time``): the end of the first bin starting at or
    after ``t_end_ps`` whose throughput reaches ``target_bps``, minus ``t_end_ps``, in s; None
    when no bin reaches it."""
    hit = bins.filter((pl.col("t_ps") >= t_end_ps) & (pl.col("throughput_bps") >= target_bps))
    return None if hit.height == 0 else (int(hit["t_ps"][0]) + bin_ps - t_end_ps) / 1e12


def recoveries(res) -> Dict[str, Optional[float]]:
    """{"1ms": s, "10ms": s} recovery times after the hotspot (None: not measurable / not reached)."""
    out: Dict[str, Optional[float]] = {"1ms": None, "10ms": None}
    bins, bin_ps = _bins(res)
    window = _hotspot_window(res)
    port = (res.resolved.get("analysis") or {}).get("bottleneck")
    entries = [e for e in res.resolved.get("schedule") or [] if e.get("port") == port]
    if bins is None or window is None or len(entries) < 2:
        return out
    rate = _rate_bps(entries[1].get("rate"))
    if rate is None:
        return out
    target = float((res.resolved.get("analysis") or {}).get("recovery_fraction", 0.9)) * rate
    for label, width in (("1ms", 10**9), ("10ms", STUDY_BIN_PS)):
        if width % bin_ps == 0:
            b = bins if width == bin_ps else coarsen(bins, bin_ps, width)
            out[label] = recovery_from_bins(b, width, window[1], target)
    return out


def recovery_table(runs) -> pl.DataFrame:
    """One row per run: hotspot, scheme, gate, variant, recovery at 10 ms and 1 ms (s), the
    study's value for the cell (s, None where it states none)."""
    study = {p["variant"]: p["value"] / 1e3 for p in PUBLISHED}
    rows = []
    for name, res in runs:
        hs, scheme = _group(name)
        rec = recoveries(res)
        rows.append({"hotspot": hs, "scheme": scheme, "gate": gate_of(res), "variant": name,
                     "recovery_10ms_s": rec["10ms"], "recovery_1ms_s": rec["1ms"],
                     "study_s": study.get(name)})
    return pl.DataFrame(rows, schema={"hotspot": pl.Utf8, "scheme": pl.Utf8, "gate": pl.Utf8, "variant": pl.Utf8,
                                      "recovery_10ms_s": pl.Float64, "recovery_1ms_s": pl.Float64,
                                      "study_s": pl.Float64})


def _ms(v) -> str:
    return "not reached" if v is None else f"{v * 1e3:.0f}"


def grid_markdown(table: pl.DataFrame) -> str:
    """Per hotspot, a scheme x gate table of "recovery 10 ms / 1 ms (study)" in ms; every cell of
    the grid is shown, "not run" where no variant ran it."""
    gates = [g for _, g in GATES]
    out = []
    for hs in [h for h in HOTSPOTS if h in set(table["hotspot"].to_list())]:
        lines = [f"### {hs} hotspot: recovery 10 ms / 1 ms bins (study), ms", "",
                 "| scheme | " + " | ".join(f"gate {g}" for g in gates) + " |",
                 "|---|" + "---|" * len(gates)]
        for _, scheme in SCHEMES:
            cells = []
            for g in gates:
                r = table.filter((pl.col("hotspot") == hs) & (pl.col("scheme") == scheme) & (pl.col("gate") == g))
                if r.height == 0:
                    cells.append("not run")
                    continue
                r0 = r.row(0, named=True)
                st = "" if r0["study_s"] is None else f" ({r0['study_s'] * 1e3:.0f})"
                cells.append(f"{_ms(r0['recovery_10ms_s'])} / {_ms(r0['recovery_1ms_s'])}{st}")
            lines.append(f"| {scheme} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def recovery_rows(table: pl.DataFrame) -> pl.DataFrame:
    """Summary rows ``recovery_time_10ms`` / ``recovery_time_1ms`` (NaN: not reached)."""
    rows = []
    for r in table.iter_rows(named=True):
        for metric, col, res in (("recovery_time_10ms", "recovery_10ms_s", "10ms"),
                                 ("recovery_time_1ms", "recovery_1ms_s", "1ms")):
            v = r[col]
            rows.append({"variant": r["variant"], "metric": metric, "value": float("nan") if v is None else v,
                         "unit": "s", "detail": f"bottleneck after the hotspot; {res} bins (from the 1 ms bins)"})
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64,
                                      "unit": pl.Utf8, "detail": pl.Utf8})


def by_hotspot_figure(runs, out: Path) -> Optional[Path]:
    """Per hotspot, the schemes with the v2.x stage gate (``both``): throughput (10 ms and 1 ms
    bins) and the CP queue. The other gates are in :func:`recovery_grid_figure`."""
    groups: Dict[str, List[Tuple[str, object]]] = {}
    for name, res in runs:
        if gate_of(res) != "both":
            continue
        hs, scheme = _group(name)
        groups.setdefault(hs, []).append((scheme, res))
    if not groups:
        return None
    fig, axes = plt.subplots(len(groups), 3, figsize=(15, 3.6 * len(groups)), squeeze=False)
    for row, (hs, members) in enumerate(groups.items()):
        ax_tp, ax_zoom, ax_q = axes[row]
        window = None
        for scheme, res in members:
            bins, bin_ps = _bins(res)
            if bins is not None and bins.height:
                rec = recoveries(res)
                coarse = bins if bin_ps == STUDY_BIN_PS or STUDY_BIN_PS % bin_ps else \
                    coarsen(bins, bin_ps, STUDY_BIN_PS)
                shown = [f"{rec[k] * 1e3:.0f} ms @{k}" for k in ("10ms", "1ms") if rec[k] is not None]
                lab = scheme if not shown else f"{scheme} (recovery {', '.join(shown)})"
                ax_tp.step(coarse["t_ps"].to_numpy() / 1e12, coarse["throughput_bps"].to_numpy() / 1e9,
                           where="post", linewidth=1.0, label=lab)
                ax_zoom.step(bins["t_ps"].to_numpy() / 1e12, bins["throughput_bps"].to_numpy() / 1e9,
                             where="post", linewidth=1.0, label=lab)
            q = res.tables.get("queue_samples")
            if q is not None and q.height:
                q = q.sort("t_ps")
                ax_q.plot(q["t_ps"].to_numpy() / 1e12, q["qlen_bytes"].to_numpy() / 1e3, linewidth=0.8,
                          label=scheme)
            window = window or _hotspot_window(res)
        if window is not None:
            end = window[1] / 1e12
            span = (window[1] - window[0]) / 1e12
            ax_zoom.set_xlim(end - 0.05 * span, end + 0.25 * span)
            for ax in (ax_tp, ax_zoom, ax_q):
                for x in window:
                    ax.axvline(x / 1e12, color="grey", linestyle=":", linewidth=0.8)
        for ax, title, ylab in ((ax_tp, f"{hs} hotspot: throughput (10 ms bins)", "throughput (Gb/s)"),
                                (ax_zoom, f"{hs} hotspot: recovery (1 ms bins)", "throughput (Gb/s)"),
                                (ax_q, f"{hs} hotspot: CP queue", "queue length (KB)")):
            ax.set_title(title)
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylab)
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=plot.DPI)
    plt.close(fig)
    return out


def recovery_grid_figure(runs, out: Path) -> Optional[Path]:
    """The whole grid: one panel per (hotspot, scheme), the recovery after the hotspot in 1 ms
    bins for each stage gate; the study's recovery time for the cell as a dotted line."""
    cells: Dict[Tuple[str, str], List[Tuple[str, str, object]]] = {}
    for name, res in runs:
        hs, scheme = _group(name)
        cells.setdefault((hs, scheme), []).append((gate_of(res), name, res))
    hss = [h for h in HOTSPOTS if any(k[0] == h for k in cells)]
    schemes = [s for _, s in SCHEMES if any(k[1] == s for k in cells)]
    if not hss or not schemes:
        return None
    study = {p["variant"]: p["value"] / 1e3 for p in PUBLISHED}
    order = {g: i for i, (_, g) in enumerate(GATES)}
    fig, axes = plt.subplots(len(hss), len(schemes), figsize=(5.2 * len(schemes), 3.4 * len(hss)),
                             squeeze=False, sharey=True)
    for i, hs in enumerate(hss):
        for j, scheme in enumerate(schemes):
            ax = axes[i][j]
            window = None
            marked = False
            for gate, name, res in sorted(cells.get((hs, scheme), []), key=lambda x: order.get(x[0], 99)):
                bins, _ = _bins(res)
                window = window or _hotspot_window(res)
                if bins is None or bins.height == 0 or window is None:
                    continue
                rec = recoveries(res)
                end = window[1]
                shown = [f"{rec[k] * 1e3:.0f} ms @{k}" for k in ("10ms", "1ms") if rec[k] is not None]
                # byte_counter and either often coincide: either is drawn dashed on top
                ax.step((bins["t_ps"].to_numpy() - end) / 1e9, bins["throughput_bps"].to_numpy() / 1e9,
                        where="post", linewidth=1.0, linestyle="--" if gate == "either" else "-",
                        label=f"gate {gate} ({', '.join(shown) or 'not reached'})")
                if not marked and name in study:
                    ax.axvline(study[name] * 1e3, color="k", linestyle=":", linewidth=1.0,
                               label=f"study {study[name] * 1e3:.0f} ms")
                    marked = True
            ax.set_xlim(-10, 120)
            ax.set_ylim(bottom=0)
            ax.set_title(f"{hs} hotspot, {scheme}", fontsize=10)
            ax.set_xlabel("time after the hotspot ends (ms)")
            if j == 0:
                ax.set_ylabel("throughput, 1 ms bins (Gb/s)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="x-small", loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=plot.DPI)
    plt.close(fig)
    return out


def post(ctx):
    figs = [f for f in [by_hotspot_figure(ctx.runs, ctx.out_dir / "by_hotspot.png"),
                        recovery_grid_figure(ctx.runs, ctx.out_dir / "recovery_grid.png")] if f is not None]
    rec = recovery_table(ctx.runs)
    rec.write_csv(ctx.out_dir / "recovery.csv")
    from .._tables import to_markdown

    md = to_markdown(rec)
    (ctx.out_dir / "recovery.md").write_text(
        f"# {ctx.name}: recovery time after the hotspot (10 ms and 1 ms bins)\n\n"
        f"Headline: {HEADLINE}\n\n## The grid: scheme x stage gate\n\n{grid_markdown(rec)}\n"
        f"## Every variant (s)\n\n{md}", encoding="utf-8")
    for r in rec.iter_rows(named=True):
        shown = ", ".join("not reached" if v is None else f"{v * 1e3:.0f} ms"
                          for v in (r["recovery_10ms_s"], r["recovery_1ms_s"]))
        ctx.log(f"recovery (10 ms, 1 ms bins) {r['hotspot']:>5} {r['scheme']:<8} gate {r['gate']:<12} {shown}")
    return figs, recovery_rows(rec)


#: Figure captions for the reproduction report.
CAPTIONS = {
    "by_hotspot.png": "Per hotspot (10G to 0.5G, 10G to 1G): bottleneck throughput in 10 ms bins, a zoom on the "
                      "recovery after the hotspot ends, and the CP queue; standard QCN against NIC-side Fb. Dotted "
                      "lines: start and end of the hotspot. The schemes with the v2.x stage gate (both).",
    "recovery_grid.png": "The whole grid: per hotspot (rows) and scheme (columns: standard, NIC-side Fb, NIC-side "
                         "Fb with the hardware's rate granularity), the throughput after the hotspot ends in 1 ms "
                         "bins for each RP stage gate (both, byte_counter, either); dotted: the study's recovery "
                         "time. The headline is nic-hw with gate both.",
}
