"""Small HTML fragments for the notebook views (``_repr_html_``) of Scenario, Results and
SweepResults. Plain HTML with inline styles: no template engine, no JavaScript."""

from __future__ import annotations

import html
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import polars as pl

STYLE = "border-collapse:collapse;font-size:0.9em;margin:0.3em 0"
CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def fmt_value(v: Any) -> str:
    """A number shown with 4 significant digits (integers in full); anything else as text."""
    if isinstance(v, bool) or v is None:
        return esc(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:.4g}"
    return esc(v)


def kv_table(rows: Iterable[Tuple[str, Any]]) -> str:
    """A two-column key/value table; values are escaped unless they are ``Raw``."""
    body = "".join(
        f"<tr><th style='{CELL}'>{esc(k)}</th><td style='{CELL}'>{v if isinstance(v, Raw) else esc(v)}</td></tr>"
        for k, v in rows)
    return f"<table style='{STYLE}'>{body}</table>"


class Raw(str):
    """Already-escaped HTML."""


def frame_table(df: pl.DataFrame, max_rows: int = 12, columns: Optional[Sequence[str]] = None) -> str:
    """The first ``max_rows`` rows of ``df`` as an HTML table, numbers shortened, with a note on
    how many rows were left out."""
    if columns is not None:
        df = df.select([c for c in columns if c in df.columns])
    head = "".join(f"<th style='{CELL}'>{esc(c)}</th>" for c in df.columns)
    rows: List[str] = []
    for rec in df.head(max_rows).iter_rows():
        rows.append("<tr>" + "".join(f"<td style='{CELL}'>{fmt_value(v)}</td>" for v in rec) + "</tr>")
    more = ""
    if df.height > max_rows:
        more = f"<div style='font-size:0.85em;color:#666'>… {df.height - max_rows:,} more rows</div>"
    return f"<table style='{STYLE}'><tr>{head}</tr>{''.join(rows)}</table>{more}"


def section(title: str, body: str) -> str:
    return f"<div style='margin:0.2em 0'><b>{esc(title)}</b>{body}</div>"


def box(title: str, body: str) -> str:
    return (f"<div class='qcnsim' style='font-family:sans-serif'><div style='font-weight:bold;"
            f"font-size:1.05em'>{esc(title)}</div>{body}</div>")
