"""Run results: polars tables plus run metadata; atomic write to a directory and read back."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

import numpy as np
import polars as pl

from .outputs import check_result_dir, clean_stale_temporaries, temp_dir_for

RUN_JSON = "run.json"
FORMATS = ("parquet", "csv")

_NUMPY_KINDS = {"i64": np.dtype("<i8"), "f64": np.dtype("<f8"), "bool": np.dtype("u1")}


def column_to_series(name: str, kind: str, payload: Any) -> pl.Series:
    """Turn one column payload from ``_core.run`` into a polars Series."""
    if kind == "str":
        return pl.Series(name, list(payload), dtype=pl.Utf8)
    if kind == "cat":  # (little-endian u32 codes, the strings they index)
        codes, values = payload
        idx = np.frombuffer(codes, dtype="<u4").astype(np.uint32)
        return pl.Series(name, list(values), dtype=pl.Utf8).gather(idx)
    try:
        dt = _NUMPY_KINDS[kind]
    except KeyError:
        raise ValueError(f"column {name!r}: unknown kind {kind!r}") from None
    arr = np.frombuffer(payload, dtype=dt)
    if kind == "bool":
        arr = arr.astype(bool)
    elif dt.byteorder not in ("=", "|"):  # big-endian host: convert to native order
        arr = arr.astype(dt.newbyteorder("="))
    return pl.Series(name, arr)


def tables_from_core(raw: Mapping[str, List[Any]]) -> Dict[str, pl.DataFrame]:
    return {
        name: pl.DataFrame([column_to_series(c, k, p) for (c, k, p) in cols])
        for name, cols in raw.items()
    }


def with_seconds(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with a Float64 column ``<name>_s`` (seconds) after every integer column
    ``<name>_ps`` (picoseconds): ``t_ps`` -> ``t_s``, ``bin_ps`` -> ``bin_s``. The ``_ps`` columns
    stay: they are exact, the seconds are for plotting and reading."""
    exprs = []
    for c in df.columns:
        exprs.append(pl.col(c))
        if c.endswith("_ps") and df.schema[c].is_integer() and f"{c[:-3]}_s" not in df.columns:
            exprs.append((pl.col(c).cast(pl.Float64) * 1e-12).alias(f"{c[:-3]}_s"))
    return df.select(exprs)


class Results:
    """The outcome of one run.

    ``tables`` maps table names (``summary``, ``flows``, ``ports``, ``port_throughput``,
    ``queue_samples``, ``rp_rates``, ``events``) to polars DataFrames; ``run_info`` holds the
    resolved scenario, seed, qcnsim version, wall time and event counts.
    """

    def __init__(self, tables: Dict[str, pl.DataFrame], run_info: Dict[str, Any]) -> None:
        self.tables = tables
        self.run_info = run_info

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def _from_core(cls, raw: Mapping[str, Any], *, scenario_name: str = "", overrides=(), scenario=None,
                   started: Optional[str] = None) -> "Results":
        from ._provenance import provenance
        from ._version import __version__

        resolved = json.loads(raw["resolved"])
        wall_s = float(raw["wall_s"])
        events = int(raw["events"])
        info = {
            "scenario": scenario_name,
            "overrides": list(overrides),
            "seed": int(raw["seed"]),
            "qcnsim_version": __version__,
            "wall_s": wall_s,
            "events": events,
            "events_per_s": (events / wall_s) if wall_s > 0 else None,
            "sim_time_ps": int(raw["sim_time_ps"]),
            "sim_time_s": int(raw["sim_time_ps"]) * 1e-12,
            "frames_forwarded": int(raw["frames_forwarded"]),
            "provenance": provenance(scenario, started),
            "resolved": resolved,
        }
        return cls(tables_from_core(raw["tables"]), info)

    # -- accessors ----------------------------------------------------------------------------
    @property
    def summary(self) -> pl.DataFrame:
        """The experiment's headline numbers (long format: metric, value, unit, detail)."""
        return self.tables.get("summary", pl.DataFrame())

    @property
    def resolved(self) -> Dict[str, Any]:
        return self.run_info.get("resolved", {})

    @property
    def seed(self) -> int:
        return int(self.run_info["seed"])

    def __getitem__(self, table: str) -> pl.DataFrame:
        return self.tables[table]

    def table(self, name: str, seconds: bool = True) -> pl.DataFrame:
        """Table ``name``; with ``seconds`` (the default) every ``<x>_ps`` time column is
        followed by ``<x>_s`` in seconds (:func:`with_seconds`). Unknown names raise KeyError
        listing the tables."""
        if name not in self.tables:
            from ._suggest import did_you_mean

            raise KeyError(f"no table {name!r}{did_you_mean(name, self.tables)}; tables: {', '.join(self.tables)}")
        df = self.tables[name]
        return with_seconds(df) if seconds else df

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}[{v.height}]" for k, v in self.tables.items())
        return f"Results(seed={self.run_info.get('seed')}, tables: {shapes})"

    def _repr_html_(self) -> str:
        """Notebook view: the run's facts, every table's shape and columns, the headline summary."""
        from . import _html as h

        info = self.run_info
        facts = [("scenario", info.get("scenario", "")), ("seed", info.get("seed"))]
        if info.get("overrides"):
            facts.append(("overrides", ", ".join(map(str, info["overrides"]))))
        if info.get("sim_time_s") is not None:
            wall = info.get("wall_s")
            eps = info.get("events_per_s")
            facts.append(("simulated", f"{info['sim_time_s']:g} s in {wall:.2f} s wall"
                          + (f", {eps / 1e6:.2f} M events/s" if eps else "") if wall is not None else
                          f"{info['sim_time_s']:g} s"))
        shapes = pl.DataFrame({
            "table": list(self.tables),
            "rows": [df.height for df in self.tables.values()],
            "columns": [", ".join(df.columns) for df in self.tables.values()],
        })
        body = h.kv_table(facts) + h.section("tables", h.frame_table(shapes, max_rows=50))
        if self.summary.height:
            body += h.section("summary", h.frame_table(self.summary, max_rows=15))
        return h.box("qcnsim Results", body)

    # -- I/O ------------------------------------------------------------------------------------
    def write(self, out_dir: Union[str, "os.PathLike[str]"], fmt: str = "parquet") -> Path:
        """Write every table as ``<name>.<fmt>`` plus ``run.json`` into ``out_dir``, atomically.

        ``out_dir`` must be new, an empty directory, or a previous qcnsim result holding only what
        qcnsim wrote (see :mod:`qcnsim.outputs`); anything else raises
        :class:`qcnsim.OutputError` before a file is written. Everything is written into a
        temporary directory beside the target, which is renamed into place at the end; a previous
        result is replaced only after the new one is complete, so a crash never leaves a
        half-written result directory. Temporary directories left by a killed write to the same
        place are removed first.
        """
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
        target = Path(out_dir)
        check_result_dir(target, "out_dir")
        parent = target.parent
        parent.mkdir(parents=True, exist_ok=True)
        unknown = clean_stale_temporaries(target)
        if unknown:
            warnings.warn(f"left alone (temporary directories of an older qcnsim, maybe still running): "
                          f"{', '.join(unknown)}", stacklevel=2)
        tmp = temp_dir_for(target)
        try:
            for name, df in self.tables.items():
                path = tmp / f"{name}.{fmt}"
                if fmt == "parquet":
                    df.write_parquet(path)
                else:
                    df.write_csv(path)
            info = dict(self.run_info)
            info["format"] = fmt
            info["tables"] = list(self.tables)
            info["complete"] = True
            with open(tmp / RUN_JSON, "w", encoding="utf-8") as f:
                json.dump(info, f, indent=2, default=str)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o755)  # mkdtemp creates 0700
            _replace_dir(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    @classmethod
    def read(cls, out_dir: Union[str, "os.PathLike[str]"]) -> "Results":
        """Load a directory written by :meth:`write`."""
        d = Path(out_dir)
        run_json = d / RUN_JSON
        if not run_json.is_file():
            raise FileNotFoundError(f"{d}: not a qcnsim result directory (no {RUN_JSON})")
        info = json.loads(run_json.read_text(encoding="utf-8"))
        fmt = info.get("format", "parquet")
        names = info.get("tables")
        if names is None:
            names = sorted(p.stem for p in d.glob(f"*.{fmt}"))
        tables = {}
        for name in names:
            path = d / f"{name}.{fmt}"
            tables[name] = pl.read_parquet(path) if fmt == "parquet" else pl.read_csv(path)
        for k in ("format", "tables", "complete"):
            info.pop(k, None)
        return cls(tables, info)


def is_complete(out_dir: Union[str, "os.PathLike[str]"]) -> bool:
    """True if ``out_dir`` holds a complete result (``run.json`` marked complete, tables present)."""
    d = Path(out_dir)
    try:
        info = json.loads((d / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(info, dict) or not info.get("complete"):
        return False
    fmt = info.get("format", "parquet")
    return all((d / f"{name}.{fmt}").is_file() for name in info.get("tables", []))


def _replace_dir(src: Path, target: Path) -> None:
    """Move the finished directory ``src`` to ``target``, replacing an existing target safely."""
    if not target.exists() and not target.is_symlink():
        os.rename(src, target)
        return
    if target.is_file() or target.is_symlink():
        raise FileExistsError(f"{target} exists and is not a directory")
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
    os.rename(target, old / "previous")
    try:
        os.rename(src, target)
    except BaseException:
        os.rename(old / "previous", target)  # put the previous result back
        os.rmdir(old)
        raise
    shutil.rmtree(old, ignore_errors=True)
