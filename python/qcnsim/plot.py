"""Figures from Results (matplotlib; PNG at 150 dpi when saved).

Every function takes ``runs``: one :class:`Results`, a mapping ``{label: Results}`` or a sequence
of ``(label, Results)`` pairs (e.g. the variants of an experiment), draws them on one figure and
returns the :class:`matplotlib.figure.Figure` (or ``None`` when there is nothing to draw). With
``out=PATH`` the figure is also saved there as PNG. The figures are built without pyplot, so they
do not pile up in pyplot's figure list and a notebook shows a returned figure exactly once::

    fig = plot.queue(res)                 # shown inline in Jupyter
    plot.queue(res, out="queue.png")      # also written to queue.png

So that a figure stays readable with many variants or flows: one panel per run (variant), panels
sharing both axes; at most ``MAX_LINES`` series per panel (beyond that ``SHOWN`` series plus the
mean and min-max band of all of them); one legend outside the panels, one colour per port or flow
in every panel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple, Union

import matplotlib

# Batch use (CLI, reproduce, scripts) draws off-screen; inside IPython/Jupyter, or when the user
# chose a backend (MPLBACKEND, or pyplot already imported), leave the backend alone.
if "ipykernel" not in sys.modules and "IPython" not in sys.modules and not os.environ.get("MPLBACKEND") \
        and "matplotlib.pyplot" not in sys.modules:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402, F401  (the experiment modules draw with plot.plt)
import polars as pl  # noqa: E402
from matplotlib.figure import Figure as _MplFigure  # noqa: E402


class Figure(_MplFigure):
    """A matplotlib Figure that renders itself as PNG in IPython/Jupyter (``_repr_png_``), so a
    returned figure shows inline without pyplot and exactly once."""

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100)
        return buf.getvalue()


from .results import Results  # noqa: E402

Runs = Union[Results, Mapping[str, Results], Sequence[Tuple[str, Results]]]
PathArg = Union[str, "os.PathLike[str]", None]
DPI = 150
#: Series drawn one by one in a panel; with more, ``SHOWN`` of them plus the mean and the
#: min-max band of all (e.g. 400-source stability runs).
MAX_LINES = 8
SHOWN = 3
#: Panel columns when several runs (variants) are drawn: one panel per run.
PANEL_COLS = 3


def _runs(runs: Runs) -> List[Tuple[str, Results]]:
    if isinstance(runs, Results):
        return [("", runs)]
    if isinstance(runs, Mapping):
        return list(runs.items())
    return [(str(label), r) for label, r in runs]


def _time_scale(max_t_ps: float) -> Tuple[float, str]:
    """Divisor from ps and axis unit for a time axis spanning ``max_t_ps``."""
    if max_t_ps >= 1e12:
        return 1e12, "s"
    if max_t_ps >= 1e9:
        return 1e9, "ms"
    return 1e6, "µs"


def _grid(n: int) -> Tuple[int, int]:
    """(rows, columns) of the panel grid for ``n`` runs: one column up to 2 runs, then up to
    ``PANEL_COLS`` columns."""
    cols = 1 if n <= 2 else min(PANEL_COLS, n)
    return -(-n // cols), cols


def _panel(ax, df: pl.DataFrame, key: str, ycol: str, keys: List[object], colors: dict, div: float,
           yscale: float, step: bool) -> int:
    """Draw one run's series on ``ax``: every key when there are at most ``MAX_LINES``, else the
    first ``SHOWN`` keys and, for all keys, the mean and the min-max band at each sample time.
    Returns the number of lines drawn."""
    def draw(t, y, **kw):
        if step:
            ax.step(t, y, where="post", **kw)
        else:
            ax.plot(t, y, **kw)

    if key not in df.columns:
        d = df.sort("t_ps")
        draw(d["t_ps"].to_numpy() / div, d[ycol].to_numpy() / yscale, color=colors.get(None),
             linewidth=1.0, label=ycol)
        return 1
    here = set(df[key].drop_nulls().unique().to_list())
    present = [k for k in keys if k in here]
    shown = present if len(present) <= MAX_LINES else present[:SHOWN]
    for k in shown:
        d = df.filter(pl.col(key) == k).sort("t_ps")
        draw(d["t_ps"].to_numpy() / div, d[ycol].to_numpy() / yscale, color=colors[k],
             linewidth=0.9, label=str(k))
    if len(present) > len(shown):
        agg = (df.filter(pl.col(key).is_in(present)).group_by("t_ps")
               .agg(pl.col(ycol).mean().alias("mean"), pl.col(ycol).min().alias("lo"),
                    pl.col(ycol).max().alias("hi"))
               .sort("t_ps"))
        t = agg["t_ps"].to_numpy() / div
        ax.fill_between(t, agg["lo"].to_numpy() / yscale, agg["hi"].to_numpy() / yscale,
                        step="post" if step else None, color="grey", alpha=0.3, linewidth=0,
                        label=f"all {len(present)}: min-max")
        draw(t, agg["mean"].to_numpy() / yscale, color="black", linewidth=1.2,
             label=f"all {len(present)}: mean")
    return len(shown) + (1 if len(present) > len(shown) else 0)


def _series_plot(
    runs: Runs,
    table: str,
    key: str,
    ycol: str,
    yscale: float,
    ylabel: str,
    title: str,
    out: PathArg,
    keys: Optional[Sequence[object]] = None,
    step: bool = False,
    extra=None,
) -> Optional[Figure]:
    """One panel per run (variant), sharing both axes; in each panel at most ``MAX_LINES``
    series (beyond that ``SHOWN`` of them plus the mean and min-max band of all); one legend
    outside the panels, colours fixed per key across panels."""
    rl = []
    for label, r in _runs(runs):
        df = r.tables.get(table)
        if df is None or df.height == 0 or ycol not in df.columns or "t_ps" not in df.columns:
            continue
        if keys is not None and key in df.columns:
            df = df.filter(pl.col(key).is_in(list(keys)))
            if df.height == 0:
                continue
        rl.append((label, r, df))
    if not rl:
        return None
    tmax = max(float(df["t_ps"].max()) for _, _, df in rl)
    if tmax <= 0:
        return None
    # first-seen order over the runs (a dict: linear in the number of keys, which is the number
    # of flows in a large fabric)
    seen: dict = {}
    for _, _, df in rl:
        if key in df.columns:
            seen.update(dict.fromkeys(df[key].unique(maintain_order=True).to_list()))
    all_keys: List[object] = list(seen)
    if len(all_keys) == 1:
        title = f"{title} ({all_keys[0]})"
    cycle = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {k: cycle[i % len(cycle)] for i, k in enumerate(all_keys)}
    colors[None] = cycle[0]
    div, unit = _time_scale(tmax)
    rows, cols = _grid(len(rl))
    fig = Figure()
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    flat = [a for row in axes for a in row]
    for ax in flat[len(rl):]:
        fig.delaxes(ax)
    for k, (ax, (label, r, df)) in enumerate(zip(flat, rl)):
        _panel(ax, df, key, ycol, all_keys, colors, div, yscale, step)
        if extra is not None:
            extra(ax, label, r, yscale)
        if label:
            ax.set_title(label, fontsize="small")
        ax.grid(True, alpha=0.3)
        if k % cols == 0:
            ax.set_ylabel(ylabel, fontsize="small")
        if k + cols >= len(rl):
            ax.set_xlabel(f"time ({unit})", fontsize="small")
            ax.xaxis.set_tick_params(labelbottom=True)
        ax.tick_params(labelsize="small")
    # once every panel has its data: the shared axis then spans all of them (a limit set while
    # drawing the first panel froze the axis at that panel's range and cut the others' peaks)
    flat[0].set_ylim(bottom=0)
    handles, labels = [], []
    for ax in flat[:len(rl)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    legend = handles and (len(labels) > 1 or len(all_keys) != 1 or extra is not None)
    legend_x = _layout(fig, rows, cols, ragged=len(rl) % cols != 0,
                       legend_chars=max(len(lab) for lab in labels) if legend else None)
    if legend:
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(legend_x, 1 - _TOP / fig.get_figheight()),
                   fontsize="small", frameon=False)
    fig.suptitle(title)
    if out is not None:
        save(fig, out)
    return fig


#: Panel grid geometry in inches: panel size, margins, gaps. A fixed layout computed here (rather
#: than matplotlib's constrained or tight layout, which measure every tick label and cost seconds
#: on a grid of 18 panels) keeps the legend right of the panels, inside the figure.
PANEL_W, PANEL_H = 4.0, 2.3
_LEFT, _BOTTOM, _TOP, _RIGHT = 0.75, 0.55, 0.75, 0.2
_WGAP, _HGAP, _HGAP_LABELLED = 0.15, 0.35, 0.7


def _layout(fig, rows: int, cols: int, ragged: bool, legend_chars: Optional[int]) -> float:
    """Size ``fig`` for a ``rows`` x ``cols`` panel grid and place the panels; with
    ``legend_chars`` (its longest label), leave room for a legend right of the panels. ``ragged``:
    the last row is not full, so panels above its gaps carry x tick labels (a wider row gap).
    Returns the legend's left edge (figure fraction)."""
    legend_w = 0.7 + 0.065 * legend_chars if legend_chars is not None else 0.0
    hgap = _HGAP_LABELLED if ragged and rows > 1 else _HGAP
    w = _LEFT + cols * PANEL_W + (cols - 1) * _WGAP + _RIGHT + legend_w
    h = _TOP + rows * PANEL_H + (rows - 1) * hgap + _BOTTOM
    fig.set_size_inches(w, h)
    fig.subplots_adjust(left=_LEFT / w, right=(w - _RIGHT - legend_w) / w, bottom=_BOTTOM / h,
                        top=(h - _TOP) / h, wspace=_WGAP / PANEL_W, hspace=hgap / PANEL_H)
    return (w - legend_w) / w


def save(fig: Optional[Figure], out: Union[str, "os.PathLike[str]"]) -> Optional[Path]:
    """Write ``fig`` as PNG (150 dpi) to ``out`` (its directory is created); return the path, or
    ``None`` when ``fig`` is ``None`` (nothing was drawn)."""
    if fig is None:
        return None
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    return out


_BYTE_UNITS = {"B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20,
               "GiB": 2**30}


def _bytes(v) -> Optional[float]:
    import re

    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    m = re.fullmatch(r"\s*([0-9_.]+)\s*([A-Za-z]+)\s*", str(v))
    if not m or m.group(2) not in _BYTE_UNITS:
        return None
    try:
        return float(m.group(1).replace("_", "")) * _BYTE_UNITS[m.group(2)]
    except ValueError:
        return None


def _qeq_line(ax, run_label, res, yscale) -> None:
    """A dashed line at the CP set point Qeq (once per distinct value)."""
    try:
        cc = res.resolved.get("cc", {})
        mode = cc.get("mode")
        if mode not in ("qcn", "bcn"):
            return
        q = _bytes(cc[mode]["cp"]["q_eq"])
    except (KeyError, TypeError, AttributeError):
        return
    if q is None:
        return
    drawn = getattr(ax, "_qcnsim_qeq", set())
    if q in drawn:
        return
    drawn.add(q)
    ax._qcnsim_qeq = drawn
    ax.axhline(q / yscale, color="grey", linestyle="--", linewidth=0.8, label=f"Qeq {q / 1e3:g} KB")


def throughput(runs: Runs, out: PathArg = None, ports: Optional[Sequence[object]] = None,
               title: str = "Throughput at the port output") -> Optional[Figure]:
    """Throughput (Gb/s) vs time per port, from ``port_throughput``."""
    return _series_plot(runs, "port_throughput", "port", "throughput_bps", 1e9, "throughput (Gb/s)",
                        title, out, keys=ports, step=True)


def queue(runs: Runs, out: PathArg = None, ports: Optional[Sequence[object]] = None,
          title: str = "Queue length") -> Optional[Figure]:
    """Queue length (KB = 1000 B) vs time per port, from ``queue_samples``, with the QCN or BCN
    set point Qeq as a dashed line."""
    return _series_plot(runs, "queue_samples", "port", "qlen_bytes", 1e3, "queue length (KB)",
                        title, out, keys=ports, extra=_qeq_line)


def rates(runs: Runs, out: PathArg = None, flows: Optional[Sequence[object]] = None,
          which: str = "cr", title: Optional[str] = None) -> Optional[Figure]:
    """Reaction-point current rate (``which="cr"``) or target rate (``"tr"``) in Gb/s vs time per
    flow, from ``rp_rates``."""
    col = {"cr": "cr_bps", "tr": "tr_bps"}[which]
    name = {"cr": "current rate CR", "tr": "target rate TR"}[which]
    return _series_plot(runs, "rp_rates", "flow", col, 1e9, f"{name} (Gb/s)",
                        title or f"Reaction point {name}", out, keys=flows, step=True)


def plot_all(runs: Runs, out_dir: Union[str, "os.PathLike[str]"]) -> List[Path]:
    """Draw throughput.png, queue.png, cr.png and tr.png into ``out_dir``; return those drawn."""
    out_dir = Path(out_dir)
    made = [
        save(throughput(runs), out_dir / "throughput.png"),
        save(queue(runs), out_dir / "queue.png"),
        save(rates(runs, which="cr"), out_dir / "cr.png"),
        save(rates(runs, which="tr"), out_dir / "tr.png"),
    ]
    return [p for p in made if p is not None]


#: Readable units for values in SI base units (sweep axes and metrics): (unit, scale) from the
#: largest, the first whose scale is at most the largest magnitude drawn; the last is the fallback.
_READABLE = {
    "B": ((("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1.0)),
          (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10), ("B", 1.0))),
    "s": ((("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9), ("ps", 1e-12)),),
    "bps": ((("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1.0)),),
}


def readable_unit(unit: str, values: Sequence[float]) -> Tuple[float, str]:
    """``(scale, unit)`` to show ``values`` given in SI base units ``unit`` (``"B"``, ``"s"``,
    ``"bps"``) readably, e.g. bytes up to 100000 -> ``(1e3, "KB")`` (``KiB`` when every nonzero
    value is a multiple of 1024 and not of 1000), seconds up to 0.05 -> ``(1e-3, "ms")``, bit/s
    -> Gbps; ``(1.0, unit)`` for any other unit."""
    import math

    if unit not in _READABLE:
        return 1.0, unit
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    big = max(finite, default=0.0)
    ladders = _READABLE[unit]
    ladder = ladders[0]
    nonzero = [v for v in finite if v]
    if len(ladders) > 1 and nonzero and all(v % 1024 == 0 for v in nonzero) \
            and not all(v % 1000 == 0 for v in nonzero):
        ladder = ladders[1]
    if big == 0:
        return 1.0, unit
    for name, scale in ladder:
        if big >= scale:
            return scale, name
    name, scale = ladder[-1]
    return scale, name


def sweep_metric(sweep, metric: str, axis: Optional[str] = None, detail: Optional[str] = None,
                 out: PathArg = None, max_lines: int = 12) -> Optional[Figure]:
    """A metric of a sweep (:class:`qcnsim.SweepResults` or its directory) against one axis:
    the mean per point with its 95 % confidence interval as error bars, one line per value of
    the other axes (and per ``detail`` unless one is given). The x axis is numeric when the
    axis's values are quantities (in a readable unit: ``cc.qcn.cp.q_eq (KB)``, ``... (µs)``,
    ``... (Gbps)``) or plain numbers, else its labels in order; a metric in bytes, seconds or bit/s
    is scaled the same way."""
    from .sweeps import SweepResults

    sw = sweep if isinstance(sweep, SweepResults) else SweepResults.read(sweep)
    si_of = sw.axis_columns()
    if not si_of:
        return None
    axis = axis or next(iter(si_of))
    if axis not in si_of:
        from ._suggest import did_you_mean

        raise KeyError(f"no axis {axis!r}{did_you_mean(axis, si_of)} in this sweep; axes: {', '.join(si_of)}")
    df = sw.metric(metric, detail)
    if df.height == 0:
        return None
    si = si_of[axis]
    labels = list(dict.fromkeys(sw.points[axis].to_list()))
    if not si and axis in df.columns and df.schema[axis] in (pl.Int64, pl.Float64):
        si = axis  # plain numbers: numeric x, no unit
    xunit = si[len(axis) + 1:] if si and si != axis else ""
    xscale, xunit = readable_unit(xunit, df[si].to_list()) if xunit else (1.0, "")
    others = [a for a in si_of if a != axis] + (["detail"] if detail is None and df["detail"].n_unique() > 1 else [])
    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    groups = df.partition_by(others, maintain_order=True, as_dict=False) if others else [df]
    unit = df["unit"][0] if "unit" in df.columns and df.height else ""
    yscale, yunit = readable_unit(unit, df["mean"].to_list())
    for g in groups[:max_lines]:
        if si:
            g = g.sort(si)
            x = g[si].to_numpy() / xscale
        else:
            order = {v: i for i, v in enumerate(labels)}
            g = g.with_columns(pl.col(axis).map_elements(lambda v: order.get(v, -1), return_dtype=pl.Int64)
                               .alias("_x")).sort("_x")
            x = g["_x"].to_numpy()
        y = g["mean"].to_numpy() / yscale
        lo = y - g["ci95_low"].to_numpy() / yscale
        hi = g["ci95_high"].to_numpy() / yscale - y
        label = ", ".join(f"{c}={g[c][0]}" for c in others) if others else None
        ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3, linewidth=1.0, label=label)
    if not si:
        ax.set_xticks(range(len(labels)), [str(v) for v in labels])
    ax.set_xlabel(f"{axis} ({xunit})" if xunit else axis)
    ax.set_ylabel(f"{metric} ({yunit})" if yunit else metric)
    n = int(df["n"].max()) if "n" in df.columns else 0
    ax.set_title(f"{sw.plan.get('scenario')}: {metric}" + (f" ({detail})" if detail else ""))
    fig.text(0.99, 0.01, f"mean and 95 % CI over up to {n} replication(s)", ha="right", va="bottom",
             fontsize="x-small", color="grey")
    ax.grid(True, alpha=0.3)
    if len(groups) > 1:
        ax.legend(fontsize="x-small", loc="best")
    fig.tight_layout()
    if out is not None:
        save(fig, out)
    return fig


def plot_sweep(sweep_dir: Union[str, "os.PathLike[str]"], out_dir: Union[str, "os.PathLike[str]"],
               metrics: Optional[Sequence[str]] = None, axis: Optional[str] = None) -> List[Path]:
    """``sweep_<metric>.png`` in ``out_dir`` for each metric (default: every metric whose mean
    is not the same at every point); return the files written."""
    from .sweeps import SweepResults

    sw = SweepResults.read(sweep_dir)
    if metrics is None:
        agg = sw.aggregate
        metrics = [m for m in sw.metric_names()
                   if agg.filter(pl.col("metric") == m)["mean"].drop_nulls().n_unique() > 1]
    made = []
    for m in metrics:
        p = save(sweep_metric(sw, m, axis=axis), Path(out_dir) / f"sweep_{m}.png")
        if p is not None:
            made.append(p)
    return made


def load_runs(results_dir: Union[str, "os.PathLike[str]"]) -> List[Tuple[str, Results]]:
    """A result directory (has run.json) or a directory of them (e.g. ``reproduce`` output)."""
    d = Path(results_dir)
    if (d / "run.json").is_file():
        return [("", Results.read(d))]
    runs = [(sub.name, Results.read(sub)) for sub in sorted(d.iterdir())
            if sub.is_dir() and not sub.name.startswith(".") and (sub / "run.json").is_file()]
    if not runs:
        raise FileNotFoundError(f"{d}: no qcnsim results (run.json) found")
    return runs


#: One colour per scheme, the same in every panel: the colour-blind-safe palette of Okabe and
#: Ito ("Color Universal Design", 2008), in order of the schemes' first appearance (its yellow
#: last: it is the hardest to see on white).
SCHEME_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: Line style per slowdown statistic.
STAT_STYLES = {"p50": "-", "p95": "-.", "p99": "--", "mean": ":"}
#: Figure width (inches) of :func:`fct_slowdown`: the text width of a two-column paper (ACM and
#: IEEE templates: about 7 in), so the figure prints at 100 % across both columns.
PAPER_WIDTH = 7.0


def _value_of(spec, label: str, res: Results):
    if callable(spec):
        return spec(label, res)
    if isinstance(spec, Mapping):
        return spec.get(label)
    return spec


def fct_stats_table(runs: Runs, **columns) -> pl.DataFrame:
    """Every run's tidy ``fct_stats`` rows (docs/tables.md) in one table, with a ``variant`` column
    (the run's label) and, for each keyword, a column of that name whose value per run is
    ``f(label, results)`` for a callable, ``mapping[label]`` for a mapping, or the value itself::

        t = plot.fct_stats_table(runs, scheme=lambda v, r: v.rsplit("-", 1)[0],
                                 load=lambda v, r: r.resolved["workloads"][0]["load"])
        plot.fct_slowdown(t, panel="load", scheme="scheme")

    Runs without an ``fct_stats`` table (no finite flow) add no rows."""
    frames = []
    for label, res in _runs(runs):
        t = res.tables.get("fct_stats")
        if t is None or t.height == 0:
            continue
        extra = [pl.lit(label, dtype=pl.Utf8).alias("variant")]
        extra += [pl.lit(_value_of(spec, label, res)).alias(name) for name, spec in columns.items()]
        frames.append(t.with_columns(extra))
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="diagonal_relaxed")


def _size_label(v: float, _pos=None) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if v >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}B"


def _panel_title(panel: Optional[str], value) -> str:
    if panel is None:
        return ""
    if panel == "load" and isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
        return f"{value * 100:g} % load"
    return f"{panel} = {value}"


def _unfinished_note(one: pl.DataFrame, scheme: str, schemes: Sequence[object]) -> str:
    """A panel's count of unfinished flows, per scheme: the schemes of a panel usually run the same
    flows, so a sum over them would count each flow once per scheme."""
    per = (one.group_by(scheme, maintain_order=True)
           .agg(pl.col("unfinished").cast(pl.Float64).sum().alias("u"), pl.col("flows").cast(pl.Float64).sum().alias("f")))
    rows = {r[0]: (r[1], r[2]) for r in per.iter_rows()}
    got = [(s, *rows[s]) for s in schemes if s in rows]
    if len(got) == 1:
        return f"unfinished {got[0][1]:.4g} of {got[0][2]:.4g} flows"
    totals = {f for _s, _u, f in got}
    if len(totals) == 1:
        tot = next(iter(totals))
        bad = [(s, u) for s, u, _f in got if u > 0]
        if not bad:
            return f"no unfinished flow ({tot:.4g} flows per scheme)"
        return "unfinished " + ", ".join(f"{s or 'run'} {u:.4g}" for s, u in bad) + f" of {tot:.4g} flows each"
    return "unfinished " + ", ".join(f"{s or 'run'} {u:.4g}/{f:.4g}" for s, u, f in got) + " flows"


def fct_slowdown(
    data: Union[Runs, pl.DataFrame],
    out: PathArg = None,
    *,
    panel: Union[None, str, Mapping[str, object], object] = None,
    scheme: Union[None, str, Mapping[str, object], object] = None,
    stats: Sequence[str] = ("p50", "p99"),
    binning: str = "quantile",
    title: Optional[str] = None,
    yscale: str = "log",
    width: float = PAPER_WIDTH,
    panel_height: float = 2.1,
    max_cols: int = 3,
    panel_title=None,
) -> Optional[Figure]:
    """FCT slowdown against flow size, a figure a paper can print: one panel per value of
    ``panel`` (e.g. the load), in each panel one colour per scheme (:data:`SCHEME_COLORS`, the same
    colour for a scheme in every panel) and one line style per statistic (:data:`STAT_STYLES`:
    p50 solid, p95 dash-dot, p99 dashed), x = flow size on a log scale at each bin's upper size
    (``size_bin_hi``), the panels sharing both axes, one legend below the panels (outside every
    panel's data), ``width`` inches wide (default the text width of a two-column paper).

    ``data`` is a table in the tidy ``fct_stats`` shape (docs/tables.md) with a column naming the
    scheme and, for several panels, a column naming the panel, e.g. from :func:`fct_stats_table`
    or a sweep's :attr:`qcnsim.SweepResults.fct`. A table with ``slowdown`` draws it; a table
    of means over seeds (``mean``, ``ci95_low``, ``ci95_high``) draws the mean with its 95 %
    confidence interval as a band. ``data`` may also be runs (one :class:`Results`, a mapping
    ``{label: Results}`` or ``(label, Results)`` pairs): then ``scheme`` and ``panel`` may be
    callables ``f(label, results)`` or mappings ``{label: value}`` (default: one scheme per run,
    one panel).

    ``binning``: the bins drawn (``"quantile"``: 20 bins of 5 % of the flows, the HPCC paper's
    Figure 11; any binning whose bins have a finite upper size). ``stats``: the statistics drawn
    (``p50``, ``p95``, ``p99``, ``mean``). Each panel's title says how many flows ended
    unfinished and whether the statistics exclude them or count them as lower bounds
    (``analysis.fct_unfinished``). Several rows for one (panel, scheme, statistic, bin), e.g. the
    seeds of an unaggregated table, are refused: aggregate them first. Returns the figure, or
    ``None`` when there is no row to draw; with ``out`` it is also written there as PNG."""
    import math

    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not isinstance(data, pl.DataFrame):
        cols = {}
        if scheme is not None and not isinstance(scheme, str):
            cols["scheme"], scheme = scheme, "scheme"
        if panel is not None and not isinstance(panel, str):
            cols["panel"], panel = panel, "panel"
        data = fct_stats_table(data, **cols)
    if data.height == 0:
        return None
    scheme = scheme or ("scheme" if "scheme" in data.columns else "variant")
    ycol = "slowdown" if "slowdown" in data.columns else "mean"
    need = [c for c in (scheme, panel, "size_bin_hi", "stat", ycol) if c is not None]
    missing = [c for c in need if c not in data.columns]
    if missing:
        raise ValueError(f"fct_slowdown: the table has no column {', '.join(map(repr, missing))}; "
                         f"columns: {', '.join(data.columns)}")
    bad = [s for s in stats if s not in STAT_STYLES]
    if bad:
        raise ValueError(f"fct_slowdown: stats = {bad!r}: expected some of {', '.join(STAT_STYLES)}")
    d = data.filter(pl.col("stat").is_in(list(stats)))
    if "binning" in d.columns:
        if binning not in d["binning"].unique().to_list():
            raise ValueError(f"fct_slowdown: binning = {binning!r}: the table has "
                             f"{', '.join(map(repr, sorted(d['binning'].unique().to_list())))}")
        d = d.filter(pl.col("binning") == binning)
    if d.height == 0:
        return None
    hi = d["size_bin_hi"].cast(pl.Float64)
    if not hi.is_finite().all():
        raise ValueError(f"fct_slowdown: binning {binning!r} has an open-ended bin (size_bin_hi = inf): the x "
                         "axis is each bin's upper size; use binning='quantile'")
    keys = [c for c in (panel, scheme, "stat", "size_bin" if "size_bin" in d.columns else "size_bin_hi") if c]
    dup = d.group_by(keys).len().filter(pl.col("len") > 1)
    if dup.height:
        raise ValueError(f"fct_slowdown: {dup.height} (panel, scheme, stat, bin) combinations have several rows "
                         f"(e.g. {dup.row(0)}): one row each is drawn; aggregate seeds first (e.g. a sweep's "
                         "SweepResults.fct) or tell the rows apart by the scheme or panel column")
    schemes = list(dict.fromkeys(d[scheme].to_list()))
    colors = {s: SCHEME_COLORS[i % len(SCHEME_COLORS)] for i, s in enumerate(schemes)}
    panels = list(dict.fromkeys(d[panel].to_list())) if panel else [None]
    if panel and all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in panels):
        panels.sort()
    fmt_title = panel_title or (lambda v: _panel_title(panel, v))

    n = len(panels)
    cols = min(n, max_cols)
    rows = -(-n // cols)
    entries = len(schemes) + len(stats)
    leg_cols = min(entries, max(1, int(width / 1.25)))  # about 1.25 in per legend entry
    leg_rows = -(-entries // leg_cols)
    left, right, top, gap_w, gap_h = 0.6, 0.1, 0.55 if title else 0.35, 0.12, 0.55
    bottom = 0.5 + 0.17 * (leg_rows + 1) + 0.1  # tick labels and x label; legend title and rows
    height = top + rows * panel_height + (rows - 1) * gap_h + bottom
    fig = Figure(figsize=(width, height))
    pw = (width - left - right - (cols - 1) * gap_w) / cols
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                        bottom=bottom / height, wspace=gap_w / pw, hspace=gap_h / panel_height)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    flat = [a for row in axes for a in row]
    for ax in flat[n:]:
        fig.delaxes(ax)
    band = "ci95_low" in d.columns and "ci95_high" in d.columns
    for k, (ax, pv) in enumerate(zip(flat, panels)):
        dp = d.filter(pl.col(panel) == pv) if panel else d
        for s in schemes:
            ds = dp.filter(pl.col(scheme) == s)
            for st in stats:
                g = ds.filter(pl.col("stat") == st).sort("size_bin_hi")
                if g.height == 0:
                    continue
                x = g["size_bin_hi"].cast(pl.Float64).to_numpy()
                y = g[ycol].cast(pl.Float64).to_numpy()
                ax.plot(x, y, linestyle=STAT_STYLES[st], color=colors[s], linewidth=1.2, marker="o",
                        markersize=2.2, label=f"{s}, {st}")
                if band:
                    ax.fill_between(x, g["ci95_low"].cast(pl.Float64).to_numpy(),
                                    g["ci95_high"].cast(pl.Float64).to_numpy(), color=colors[s], alpha=0.15,
                                    linewidth=0)
        head = fmt_title(pv)
        if "unfinished" in dp.columns and "flows" in dp.columns:
            # flows per run: the bins of one statistic partition them
            one = dp.filter(pl.col("stat") == stats[0])
            how = ""
            if "unfinished_as" in one.columns and one["unfinished_as"].n_unique() == 1:
                how = {"excluded": ", excluded", "lower_bound": ", as lower bounds"}.get(one["unfinished_as"][0], "")
            note = _unfinished_note(one, scheme, schemes) + how
            head = f"{head}\n{note}" if head else note
        if head:
            ax.set_title(head, fontsize=7.5)
        ax.set_xscale("log")
        ax.set_yscale(yscale)
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_major_formatter(FuncFormatter(_size_label))
        ax.xaxis.set_minor_formatter(NullFormatter())
        if yscale == "log":
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="major", alpha=0.3, linewidth=0.5)
        ax.tick_params(labelsize=7)
        if k % cols == 0:
            ax.set_ylabel("FCT slowdown (FCT / ideal FCT)", fontsize=8)
        if k + cols >= n:
            ax.set_xlabel("flow size (bytes, bin's upper size)", fontsize=8)
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in flat[:n]:  # a bin with no finished flow (NaN) leaves a gap, never a made-up value
        lo, hi_ = ax.get_ylim()
        if yscale == "log" and math.isfinite(lo):
            ax.set_ylim(min(lo, 0.9), hi_)
    handles = [Line2D([], [], color=colors[s], linewidth=2, label=str(s) or "run") for s in schemes]
    handles += [Line2D([], [], color="0.3", linestyle=STAT_STYLES[st], linewidth=1.2, label=st) for st in stats]
    what = "mean over seeds and 95 % CI" if band else ""
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.1 / height), ncol=leg_cols, fontsize=7.5,
               frameon=False, title=(f"scheme (colour), statistic (line){'; ' + what if what else ''}"),
               title_fontsize=7.5)
    if title:
        fig.suptitle(title, fontsize=9)
    if out is not None:
        save(fig, out)
    return fig
