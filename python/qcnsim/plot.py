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
    present = [k for k in keys if df.filter(pl.col(key) == k).height]
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
    all_keys: List[object] = []
    for _, _, df in rl:
        if key in df.columns:
            all_keys += [k for k in df[key].unique(maintain_order=True).to_list() if k not in all_keys]
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
        ax.set_ylim(bottom=0)
        if k % cols == 0:
            ax.set_ylabel(ylabel, fontsize="small")
        if k + cols >= len(rl):
            ax.set_xlabel(f"time ({unit})", fontsize="small")
            ax.xaxis.set_tick_params(labelbottom=True)
        ax.tick_params(labelsize="small")
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


#: The flow-size bins of the ``fct`` summary rows (bytes): below 100 KB, 100 KB to 1 MB, above.
FCT_BINS = ((0, 100_000, "<100KB"), (100_000, 1_000_000, "100KB-1MB"), (1_000_000, None, ">1MB"))


def fct_slowdown(runs: Runs, out: PathArg = None,
                 title: str = "Flow completion time slowdown vs flow size") -> Optional[Figure]:
    """Slowdown (FCT / ideal FCT) vs flow size from the ``fct`` table: every finished flow as a
    faint point, and per size bin (< 100 KB, 100 KB-1 MB, > 1 MB) the median and the 99th
    percentile of each run as lines. Unfinished flows are left out (their count is in the
    legend). Returns the figure (``None`` when no run has an ``fct`` table); with ``out`` it is
    also written there as PNG."""
    runs = _runs(runs)
    data = [(label, r.tables.get("fct")) for label, r in runs]
    data = [(label, t) for label, t in data if t is not None and t.height]
    if not data:
        return None
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    for i, (label, t) in enumerate(data):
        color = f"C{i % 10}"
        done = t.filter(pl.col("finished"))
        ax.scatter(done["size_bytes"].to_list(), done["slowdown"].to_list(), s=4, alpha=0.15,
                   color=color)
        xs, p50, p99 = [], [], []
        for lo, hi, _ in FCT_BINS:
            b = done.filter((pl.col("size_bytes") >= lo) & (pl.col("size_bytes") < (hi or 2**62)))
            if b.height == 0:
                continue
            xs.append(float(b["size_bytes"].median()))
            p50.append(float(b["slowdown"].quantile(0.5, "nearest")))
            p99.append(float(b["slowdown"].quantile(0.99, "nearest")))
        unfinished = t.height - done.height
        name = label or "run"
        ax.plot(xs, p50, "o-", color=color, label=f"{name} median ({unfinished} unfinished)")
        ax.plot(xs, p99, "s--", color=color, label=f"{name} p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (bytes)")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    if out is not None:
        save(fig, out)
    return fig
