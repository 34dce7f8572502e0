"""Figures from Results (matplotlib; PNG at 150 dpi when saved).

Every function takes ``runs``: one :class:`Results`, a mapping ``{label: Results}`` or a sequence
of ``(label, Results)`` pairs (e.g. the variants of an experiment), draws them on one figure and
returns the :class:`matplotlib.figure.Figure` (or ``None`` when there is nothing to draw). With
``out=PATH`` the figure is also saved there as PNG. The figures are built without pyplot, so they
do not pile up in pyplot's figure list and a notebook shows a returned figure exactly once::

    fig = plot.queue(res)                 # shown inline in Jupyter
    plot.queue(res, out="queue.png")      # also written to queue.png
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
MAX_SERIES = 24  # per run; beyond this the legend is useless (e.g. 400-source stability runs)


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


def _max_t(runs: List[Tuple[str, Results]], table: str) -> float:
    m = 0.0
    for _, r in runs:
        df = r.tables.get(table)
        if df is not None and df.height and "t_ps" in df.columns:
            m = max(m, float(df["t_ps"].max()))
    return m


def _label(run_label: str, key: object, n_keys: int) -> str:
    if n_keys <= 1:
        return run_label or str(key)
    return f"{run_label}: {key}" if run_label else str(key)


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
    rl = _runs(runs)
    tmax = _max_t(rl, table)
    key_set = set()
    for _, r in rl:
        df = r.tables.get(table)
        if df is not None and df.height and key in df.columns:
            key_set.update(k for k in df[key].unique().to_list() if keys is None or k in keys)
    if len(key_set) == 1:
        title = f"{title} ({next(iter(key_set))})"
    if tmax <= 0:
        return None
    div, unit = _time_scale(tmax)
    fig = Figure(figsize=(8, 4.5))
    ax = fig.subplots()
    drawn = 0
    for run_label, r in rl:
        df = r.tables.get(table)
        if df is None or df.height == 0 or ycol not in df.columns:
            continue
        all_keys = df[key].unique(maintain_order=True).to_list() if key in df.columns else [None]
        sel = [k for k in all_keys if keys is None or k in keys][:MAX_SERIES]
        for k in sel:
            d = df if k is None else df.filter(pl.col(key) == k)
            d = d.sort("t_ps")
            t = d["t_ps"].to_numpy() / div
            y = d[ycol].to_numpy() / yscale
            kw = dict(label=_label(run_label, k, len(sel)), linewidth=1.0)
            if step:
                ax.step(t, y, where="post", **kw)
            else:
                ax.plot(t, y, **kw)
            drawn += 1
    if drawn == 0:
        return None
    if extra is not None:
        for run_label, r in rl:
            extra(ax, run_label, r, yscale)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if any(lab for lab in (line.get_label() for line in ax.get_lines()) if not lab.startswith("_")):
        ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    if out is not None:
        save(fig, out)
    return fig


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


def fct_slowdown(runs: Runs, out: Union[str, "os.PathLike[str]"],
                 title: str = "Flow completion time slowdown vs flow size") -> Optional[Path]:
    """Slowdown (FCT / ideal FCT) vs flow size from the ``fct`` table: every finished flow as a
    faint point, and per size bin (< 100 KB, 100 KB-1 MB, > 1 MB) the median and the 99th
    percentile of each run as lines. Unfinished flows are left out (their count is in the
    legend)."""
    runs = _runs(runs)
    data = [(label, r.tables.get("fct")) for label, r in runs]
    data = [(label, t) for label, t in data if t is not None and t.height]
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
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
    out = Path(out)
    fig.savefig(out, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return out
