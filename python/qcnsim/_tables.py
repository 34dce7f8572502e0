"""Markdown rendering of a polars table, shared by reproduce, sweeps, the command line and the
experiment modules.

A bottom module: it imports nothing from qcnsim, so any module of the package can use it without
an import cycle (``qcnsim.reproduce`` still exports ``to_markdown`` under its old name).
"""

from __future__ import annotations

from typing import Any

import polars as pl


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def to_markdown(df: pl.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "|".join("---" for _ in df.columns) + "|"]
    for row in df.iter_rows():
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"
