"""Parameter sweeps: ``qcnsim.sweep(scenario, axes, replications, executor=None) -> SweepResults``.

A sweep runs a scenario at every *point* of its axes (``grid``: every combination; ``zip``: the
i-th values together), ``replications`` times per point with derived seeds, on an executor
(:mod:`qcnsim.executors`), and aggregates each run's ``summary`` table into mean, standard
deviation and 95 % confidence interval per point and metric. See docs/sweeps.md.

Directory layout (``out``)::

    sweep.json                      the plan: axes, mode, replications, base seed, points
    point=<id>/rep=<r>/             one complete result directory per run (run.json + tables)
    points.<fmt>                    one row per point: id, axis values, runs done, status, error
    runs.<fmt>                      every run's summary rows (point, rep, seed, axis values, ...)
    aggregate.<fmt>                 per point and metric: n, mean, std, ci95_low, ci95_high
    fct_runs.<fmt>                  every run's fct_stats rows (scenarios with finite flows)
    fct_aggregate.<fmt>             per point, size bin and statistic: the FCT slowdown's n, mean,
                                    std and CI over the seeds, the bin's sizes (SweepResults.fct)

Points are ordered numerically along every axis whose values are quantities or numbers. After
aggregation, an axis along which every summary metric is identical is reported
(:attr:`SweepResults.warnings`, ``warnings`` in sweep.json). Point ids, seeds, resumability and
the executors are described in docs/sweeps.md.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import time
import warnings as _warnings
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import polars as pl

from . import _core, _stats
from ._errors import ScenarioError
from .executors import ExecutorLost, Task, make_executor
from .outputs import OutputError, check_sweep_dir, write_text_atomic
from .results import FORMATS, RUN_JSON, Results
from .run import ProgressBar, _fmt_secs, _want_bar
from .scenario import Scenario, format_override_value

PathLike = Union[str, "os.PathLike[str]"]

#: Version of the point-id and seed derivation; part of every hash.
ID_SCHEME = 1
MODES = ("grid", "zip")
SWEEP_JSON = "sweep.json"
#: Keys of the resolved scenario left out of a point's id: they do not change what a run computes.
ID_EXCLUDED_KEYS = ("overrides", "variants", "sweep")
ID_EXCLUDED_META = ("name", "description", "quick_duration")
CONFIDENCE = 0.95
MAX_ATTEMPTS = 2
#: Two per-point means count as identical in the no-effect check when they are equal or differ by
#: at most this much relative to the larger.
NO_EFFECT_RTOL = 1e-12

_MASK64 = (1 << 64) - 1


# -- seeds and ids ---------------------------------------------------------------------------------
def splitmix64(x: int) -> int:
    """The SplitMix64 output function (Steele, Lea & Flood 2014) on a 64-bit integer."""
    z = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def replication_seed(base_seed: int, rep: int) -> int:
    """The seed of replication ``rep``: the base seed itself for ``rep == 0`` (so replication 0 is
    the plain ``qcnsim run``), else ``splitmix64((base_seed + rep * 0x9E3779B97F4A7C15) mod 2^64)``."""
    if rep == 0:
        return base_seed & _MASK64
    return splitmix64((base_seed + rep * 0x9E3779B97F4A7C15) & _MASK64)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def id_payload(resolved: Mapping[str, Any]) -> Dict[str, Any]:
    """What a point id hashes: the resolved scenario without the keys that cannot change a run."""
    sc = {k: v for k, v in resolved.items() if k not in ID_EXCLUDED_KEYS}
    meta = sc.get("meta")
    if isinstance(meta, dict):
        sc["meta"] = {k: v for k, v in meta.items() if k not in ID_EXCLUDED_META}
    return {"qcnsim_point": ID_SCHEME, "scenario": sc}


def point_id(resolved: Mapping[str, Any]) -> str:
    """16 hex digits of SHA-256 over the canonical JSON of :func:`id_payload`."""
    return hashlib.sha256(canonical_json(id_payload(resolved)).encode("ascii")).hexdigest()[:16]


# -- axes ------------------------------------------------------------------------------------------
@dataclass
class Axis:
    """One swept field: its dotted ``path``, its values as written (``raw``: JSON values from a
    scenario file or the API, strings from the command line) and how errors name it (``label``)."""

    path: str
    raw: List[Any]
    label: str
    from_cli: bool = False

    def override(self, i: int) -> str:
        v = self.raw[i]
        return f"{self.path}={v if self.from_cli else format_override_value(v)}"


def split_values(text: str) -> List[str]:
    """Split ``a,b,c`` on the commas that are outside brackets, braces and quotes."""
    out, cur, depth, quote = [], [], 0, ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    return out


#: Top-level tables an axis may not point into (as in a scenario's [sweep.axes], checked by the core).
FORBIDDEN_ROOTS = ("sweep", "variants")


def _check_axis_root(path: str, label: str) -> None:
    if path.split(".")[0].strip() in FORBIDDEN_ROOTS:
        raise ScenarioError(f"`{label}` = {path!r}: expected a scenario field outside [sweep] and [[variants]] "
                            "(replications and mode are options of the sweep, not axes)", label, path,
                            "a scenario field outside [sweep] and [[variants]]")


def parse_cli_axes(items: Sequence[str]) -> List[Axis]:
    """``["cc.qcn.cp.q_eq=16KB,33KB", ...]`` (``--sweep``) -> axes. Errors name ``--sweep``."""
    axes: List[Axis] = []
    for item in items:
        path, sep, vals = item.partition("=")
        path = path.strip()
        if not sep or not path or any(not s.strip() for s in path.split(".")):
            raise ScenarioError(
                f"`--sweep` = {item!r}: expected PATH=V1,V2,... with a dotted field path, "
                "e.g. --sweep cc.qcn.cp.q_eq=16KB,33KB", "--sweep", item, "PATH=V1,V2,...")
        values = split_values(vals)
        if any(v == "" for v in values):
            raise ScenarioError(f"`--sweep {path}` = {vals!r}: expected a comma-separated list of values "
                                "with none empty", f"--sweep {path}", vals, "V1,V2,... (none empty)")
        _check_axis_root(path, f"--sweep {path}")
        if any(a.path == path for a in axes):
            raise ScenarioError(f"`--sweep {path}`: this field is swept twice", f"--sweep {path}", path,
                                "each field at most once")
        axes.append(Axis(path, values, f"--sweep {path}", from_cli=True))
    return axes


def axes_from_mapping(axes: Mapping[str, Iterable[Any]], label: str = "axes") -> List[Axis]:
    out = []
    for path, values in axes.items():
        if not isinstance(path, str):
            raise TypeError(f"axis paths must be strings, got {path!r}")
        _check_axis_root(path, f"{label}[{path!r}]")
        vals = [values] if isinstance(values, (str, bytes)) else list(values)
        if not vals:
            raise ScenarioError(f"`{label}[{path!r}]` = []: expected a non-empty list of values",
                                f"{label}[{path!r}]", "[]", "a non-empty list of values")
        out.append(Axis(path, vals, f"{label}[{path!r}]"))
    return out


def _axis_column(axis: Axis) -> pl.Series:
    """A column of the axis values: Int64/Float64 when every value is a number, else strings."""
    vals: List[Any] = []
    for v in axis.raw:
        if axis.from_cli:
            try:
                v = int(v)
            except ValueError:
                try:
                    v = float(v)
                except ValueError:
                    pass
        vals.append(v)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return pl.Series(axis.path, vals, dtype=pl.Int64)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return pl.Series(axis.path, [float(v) for v in vals], dtype=pl.Float64)
    return pl.Series(axis.path, [v if isinstance(v, str) else json.dumps(v) for v in vals], dtype=pl.Utf8)


def _axis_si_column(axis: Axis) -> Optional[pl.Series]:
    """The axis values in SI base units beside the labels, when every value is a quantity of one
    kind (``"16KB"`` -> 16000.0 in a column ``<path>_B``; times in ``_s``, rates in ``_bps``),
    parsed as the scenario reader parses them; else None."""
    got = [_core.si_value(v) if isinstance(v, str) else None for v in axis.raw]
    if not got or any(g is None for g in got) or len({g[1] for g in got}) != 1:
        return None
    return pl.Series(f"{axis.path}_{got[0][1]}", [g[0] for g in got], dtype=pl.Float64)


def _axis_sort_key(axis: Axis) -> Optional[List[Any]]:
    """What an axis's values sort by: their SI values when every value is a quantity of one kind,
    the numbers when every value is a number; None otherwise (names keep the order given)."""
    si = _axis_si_column(axis)
    if si is not None:
        return si.to_list()
    col = _axis_column(axis)
    if col.dtype in (pl.Int64, pl.Float64):
        return col.to_list()
    return None


def axis_order(axis: Axis) -> List[int]:
    """The indices of ``axis.raw`` in the order the sweep visits them: numerically ascending for
    quantities and numbers (stable, NaN last), as given for anything else."""
    key = _axis_sort_key(axis)
    if key is None:
        return list(range(len(axis.raw)))
    return sorted(range(len(key)), key=lambda i: (math.isnan(key[i]), 0 if math.isnan(key[i]) else key[i]))


def _axis_json(axis: Axis) -> Dict[str, Any]:
    """An axis in sweep.json: its path and values as written, plus the values in SI base units
    and their column name when every value is a quantity of one kind."""
    out: Dict[str, Any] = {"path": axis.path, "values": axis.raw}
    si = _axis_si_column(axis)
    if si is not None:
        out["si_column"] = si.name
        out["si_values"] = si.to_list()
    return out


# -- plan ------------------------------------------------------------------------------------------
@dataclass
class Point:
    id: str
    index: Tuple[int, ...]  # value index on each axis
    overrides: List[str]  # the axes' overrides only


@dataclass
class Plan:
    scenario: Scenario  # base scenario (with the user's overrides and the base seed)
    axes: List[Axis]
    mode: str
    replications: int
    base_seed: int
    points: List[Point]
    first_rep: int = 0

    @property
    def reps(self) -> range:
        """The replication indices run: ``first_rep`` .. ``first_rep + replications - 1``."""
        return range(self.first_rep, self.first_rep + self.replications)

    @property
    def n_runs(self) -> int:
        return len(self.points) * self.replications

    def tasks(self) -> List[Task]:
        seen = set()
        out = []
        base = self.scenario.overrides
        for p in self.points:
            if p.id in seen:  # two points that resolve to the same scenario run once
                continue
            seen.add(p.id)
            for r in self.reps:
                out.append(Task(p.id, r, tuple(base + p.overrides), replication_seed(self.base_seed, r)))
        return out

    def to_json(self) -> Dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "overrides": self.scenario.overrides,
            "mode": self.mode,
            "replications": self.replications,
            "first_rep": self.first_rep,
            "base_seed": self.base_seed,
            "id_scheme": ID_SCHEME,
            "axes": [_axis_json(a) for a in self.axes],
            "points": [{"id": p.id, "values": {a.path: a.raw[i] for a, i in zip(self.axes, p.index)}}
                       for p in self.points],
        }


def _rewrap(e: ScenarioError, label: str) -> ScenarioError:
    msg = f"{label}: {e}"
    return ScenarioError(msg, f"{label}: {e.path}" if e.path else label, e.value, e.allowed)


def plan_sweep(
    scenario: Scenario,
    axes: Union[None, Mapping[str, Iterable[Any]], Sequence[str]] = None,
    replications: Optional[int] = None,
    mode: Optional[str] = None,
    seed: Optional[int] = None,
    first_rep: int = 0,
) -> Plan:
    """Resolve every point of the sweep (validating each) and compute the point ids.

    ``axes``: ``None`` takes the scenario's ``[sweep]`` table; a mapping ``{path: values}``; or
    ``--sweep``-style strings ``"path=v1,v2"``. ``replications`` and ``mode`` default to the
    scenario's ``[sweep]`` values (1 and ``grid`` without one). ``first_rep`` shifts the
    replication indices (and so the seeds): e.g. 1 leaves out replication 0, the plain run.

    The points are ordered numerically along every axis whose values are quantities or numbers
    (:func:`axis_order`; in zip mode along the first axis), names keep the order given; a point's
    ``index`` and error messages refer to the values as given."""
    resolved = scenario.resolved()
    table = resolved.get("sweep") or {}
    if axes is None:
        ax = [Axis(p, list(v), f"sweep.axes.{json.dumps(p)}") for p, v in (table.get("axes") or {}).items()]
        mode = mode or table.get("mode", "grid")
    elif isinstance(axes, Mapping):
        ax = axes_from_mapping(axes)
    else:
        if isinstance(axes, str):
            axes = [axes]
        ax = parse_cli_axes(list(axes))
    mode = mode or "grid"
    if mode not in MODES:
        raise ScenarioError(f"`mode` = {mode!r}: expected one of {', '.join(MODES)}", "mode", str(mode),
                            ", ".join(MODES))
    if replications is None:
        replications = int(table.get("replications", 1))
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ScenarioError(f"`replications` = {replications!r}: expected a whole number of at least 1",
                            "replications", str(replications), "a whole number of at least 1")
    if mode == "zip" and ax and len({len(a.raw) for a in ax}) > 1:
        lens = ", ".join(f"{a.path}: {len(a.raw)}" for a in ax)
        raise ScenarioError(f"zip mode needs axes of one length, got {lens}", ax[0].label, lens,
                            "axes with the same number of values")

    base_seed = int(resolved["meta"]["seed"]) if seed is None else int(seed)
    if not 0 <= base_seed < 2**64:
        raise ScenarioError(f"`seed` = {base_seed}: expected a whole number from 0 to 2^64-1", "meta.seed",
                            str(base_seed), "a whole number from 0 to 2^64-1")
    # A TOML integer is signed 64-bit: a larger seed is given as a string of digits.
    seed_value = str(base_seed) if base_seed < 2**63 else f'"{base_seed}"'
    base = scenario.with_overrides([f"meta.seed={seed_value}"]) if seed is not None else scenario
    text, base_ovr = base.text, base.overrides

    def value_error(a: Axis, i: int) -> Optional[ScenarioError]:
        try:
            _core.validate(text, [*base_ovr, a.override(i)])
        except _core.ScenarioError as e:
            return _rewrap(ScenarioError._from_core(e), f"{a.label}[{i}]")
        return None

    if not ax:
        combos: List[Tuple[int, ...]] = [()]
    elif mode == "grid":
        combos = list(itertools.product(*(axis_order(a) for a in ax)))
    else:
        combos = [tuple([i] * len(ax)) for i in axis_order(ax[0])]

    points = []
    for idx in combos:
        ovr = [a.override(i) for a, i in zip(ax, idx)]
        try:
            res = json.loads(_core.validate(text, [*base_ovr, *ovr]))
        except _core.ScenarioError as e:
            # Name the axis value when it is invalid on its own, else the combination.
            for a in ax:
                for i in range(len(a.raw)):
                    err = value_error(a, i)
                    if err is not None:
                        raise err from None
            raise _rewrap(ScenarioError._from_core(e), "sweep point " + ", ".join(ovr)) from None
        points.append(Point(point_id(res), idx, ovr))
    if isinstance(first_rep, bool) or not isinstance(first_rep, int) or first_rep < 0:
        raise ValueError(f"first_rep must be a whole number >= 0, got {first_rep!r}")
    return Plan(base, ax, mode, replications, base_seed, points, first_rep)


# -- progress --------------------------------------------------------------------------------------
class SweepProgress(ProgressBar):
    """``sweep [#####.....]  40.0%  points 12/30  runs 120/300  2 failed  elapsed 1m02s  ETA 1m33s``.

    The ETA extrapolates the rate of the runs done in this session (runs found on disk at the
    start count as done but not towards the rate)."""

    def __init__(self, total_runs: int, total_points: int, **kw) -> None:
        kw.setdefault("delay", 0.5)
        super().__init__(label="sweep", **kw)
        self.total_runs = total_runs
        self.total_points = total_points
        self.skipped = 0
        self.last = 0.0

    def render_sweep(self, runs: int, points: int, failed: int, elapsed: float) -> str:
        frac = runs / self.total_runs if self.total_runs else 1.0
        filled = int(round(frac * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        new = runs - self.skipped
        left = self.total_runs - runs
        eta = _fmt_secs(elapsed * left / new) if new > 0 else "  ?"
        return (f"\rsweep [{bar}] {100 * frac:5.1f}%  points {points}/{self.total_points}  "
                f"runs {runs}/{self.total_runs}  {failed} failed  elapsed {_fmt_secs(elapsed)}  ETA {eta}")

    def update(self, runs: int, points: int, failed: int, force: bool = False) -> None:
        now = self.clock()
        elapsed = now - self.start
        if not self.shown and elapsed < self.delay and not force:
            return
        if not force and now - self.last < 0.2:
            return
        self.last = now
        self.shown = True
        self.stream.write(self.render_sweep(runs, points, failed, elapsed))
        self.stream.flush()


# -- results ---------------------------------------------------------------------------------------
def _table_path(d: Path, name: str, fmt: str) -> Path:
    return d / f"{name}.{fmt}"


def _write_table(df: pl.DataFrame, path: Path, fmt: str) -> None:
    """Write atomically (temporary file in the same directory, then rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    try:
        if fmt == "parquet":
            df.write_parquet(tmp)
        else:
            df.write_csv(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_table(path: Path, fmt: str) -> pl.DataFrame:
    return pl.read_parquet(path) if fmt == "parquet" else pl.read_csv(path)


def _write_json(obj: Any, path: Path) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, default=str) + "\n")


class SweepWarning(UserWarning):
    """Issued by :func:`sweep` for each of :attr:`SweepResults.warnings` (e.g. an axis that changed
    nothing)."""


def _same(a: Optional[float], b: Optional[float]) -> bool:
    """Two means are identical: equal (NaN equals NaN) or within ``NO_EFFECT_RTOL`` relative."""
    if a is None or b is None:
        return a is None and b is None
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= NO_EFFECT_RTOL * max(abs(a), abs(b))


def no_effect_warnings(aggregate: pl.DataFrame, axes: Sequence[str]) -> List[str]:
    """One message per axis that changed nothing: for every combination of the other axes' values,
    the points along the axis have the same summary rows (metric, unit, detail) with identical
    means (:func:`_same`). Needs two values of the axis with results in at least one combination;
    zip-mode axes (every point its own combination) are never reported."""
    need = [*axes, "metric", "unit", "detail", "mean"]
    if not axes or aggregate.height == 0 or any(c not in aggregate.columns for c in need):
        return []
    rows = aggregate.select(need).rows()
    na = len(axes)
    out = []
    for k, path in enumerate(axes):
        # other axes' values -> this axis's value -> {(metric, unit, detail): mean}
        groups: Dict[Tuple[Any, ...], Dict[Any, Dict[Tuple[Any, ...], Any]]] = {}
        for row in rows:
            other = row[:k] + row[k + 1:na]
            groups.setdefault(other, {}).setdefault(row[k], {})[row[na:na + 3]] = row[na + 3]
        seen: List[Any] = []
        same = True
        for by_value in groups.values():
            if len(by_value) < 2:
                continue
            seen += [v for v in by_value if v not in seen]
            first, *rest = by_value.values()
            if any(r.keys() != first.keys() or not all(_same(first[m], r[m]) for m in first) for r in rest):
                same = False
                break
        if same and seen:
            msg = f"axis {path} changed nothing: every summary metric is identical at its {len(seen)} values"
            if na > 1:
                msg += " (for every combination of the other axes' values)"
            out.append(msg)
    return out


class SweepResults:
    """The outcome of a sweep: ``points`` (one row per point), ``runs`` (every run's summary rows)
    and ``aggregate`` (mean, std, 95 % CI per point and metric) as polars DataFrames, and
    ``warnings`` (a list of messages, e.g. an axis that changed nothing)."""

    def __init__(self, out_dir: Path, plan_json: Dict[str, Any], points: pl.DataFrame, runs: pl.DataFrame,
                 aggregate: pl.DataFrame, fct_runs: Optional[pl.DataFrame] = None,
                 fct: Optional[pl.DataFrame] = None) -> None:
        self.out_dir = Path(out_dir)
        self.plan = plan_json
        self.points = points
        self.runs = runs
        self.aggregate = aggregate
        #: Every run's ``fct_stats`` rows (docs/tables.md) with the point, axis columns, rep and
        #: seed; empty when the scenario has no finite flow.
        self.fct_runs = fct_runs if fct_runs is not None else pl.DataFrame()
        #: The FCT slowdown statistics per point, size bin and statistic over the point's seeds:
        #: ``n``, ``mean``, ``std``, ``ci95_low``, ``ci95_high`` of ``slowdown`` and the means of the
        #: bin's sizes and flow counts (see :func:`aggregate_fct`); empty without finite flows.
        self.fct = fct if fct is not None else pl.DataFrame()
        got = plan_json.get("warnings")
        #: Messages about the sweep's results: one per axis that changed nothing (see
        #: :func:`no_effect_warnings`). From sweep.json; computed for a sweep written without them.
        self.warnings: List[str] = (list(got) if isinstance(got, list)
                                    else no_effect_warnings(aggregate, [a for a in self.axes if a in aggregate.columns]))

    @property
    def axes(self) -> List[str]:
        return [a["path"] for a in self.plan.get("axes", [])]

    @property
    def failed(self) -> pl.DataFrame:
        return self.points.filter(pl.col("status") == "failed")

    @property
    def complete(self) -> bool:
        return bool(self.points.height) and bool((self.points["status"] == "done").all())

    def metric_names(self) -> List[str]:
        return list(dict.fromkeys(self.aggregate["metric"].to_list())) if self.aggregate.height else []

    def metric(self, name: str, detail: Optional[str] = None) -> pl.DataFrame:
        """The aggregated table of one metric: a row per point (and per ``detail`` unless given)."""
        df = self.aggregate.filter(pl.col("metric") == name)
        if detail is not None:
            df = df.filter(pl.col("detail") == detail)
        if df.height == 0 and name not in self.metric_names():
            known = ", ".join(self.metric_names()) or "(none)"
            raise KeyError(f"no metric {name!r} in this sweep; metrics: {known}")
        return df

    @property
    def metrics(self) -> Dict[str, pl.DataFrame]:
        """``{metric: aggregated table}`` for every metric of the summary."""
        return {m: self.metric(m) for m in self.metric_names()}

    def axis_columns(self) -> Dict[str, Optional[str]]:
        """``{axis path: its SI column or None}`` (the SI column holds the values as numbers in
        SI base units, e.g. ``cc.qcn.cp.q_eq_B``)."""
        return {a["path"]: a.get("si_column") for a in self.plan.get("axes", [])}

    def to_xarray(self):
        """The aggregate as an :class:`xarray.Dataset`: variables ``mean``, ``std``, ``n``,
        ``ci95_low``, ``ci95_high`` over the dimensions (one per axis, named by its path),
        ``metric`` (in summary order) and ``detail``.

        An axis whose values are quantities has numeric coordinates in SI base units (bytes,
        seconds, bit/s), ascending, with ``attrs["units"]`` = ``"B"``, ``"s"`` or ``"bps"``; the
        values as written are the coordinate ``<path>_label`` (indexed:
        ``ds.sel({"cc.qcn.cp.q_eq_label": "16KB"})``) and the SI column's name
        (``cc.qcn.cp.q_eq_B``) is a coordinate too. An axis of plain numbers has them as ascending
        coordinates; any other axis keeps its labels in the order given.

        With finite flows the FCT slowdown statistics (:attr:`fct`) are variables of their own,
        ``fct_n``, ``fct_mean``, ``fct_std``, ``fct_ci95_low``, ``fct_ci95_high`` over the axes,
        ``size_bin`` (every bin of every binning, in table order) and ``stat`` (``mean``, ``p50``,
        ``p95``, ``p99``), and ``fct_flows``, ``fct_finished``, ``fct_unfinished``,
        ``fct_unfinished_bytes`` (means over the seeds) and ``fct_unfinished_as`` over the axes and
        ``size_bin``; ``size_bin`` has the coordinates ``binning`` and the numeric ``size_bin_lo``
        and ``size_bin_hi`` (bytes, means over the seeds: a quantile bin's sizes depend on the
        run's flows). The summary's FCT rows (metrics ``fct_*`` and ``flows_unfinished``, whose
        size bin is only in ``detail``) are then left out of ``mean``/``n``/...: they are the
        same statistics. Needs xarray and pandas (``pip install 'qcnsim[xarray]'``)."""
        try:
            import xarray as xr
        except ImportError:
            raise ImportError("SweepResults.to_xarray() needs xarray: pip install 'qcnsim[xarray]'") from None
        axes = self.axes
        si_of = self.axis_columns()
        agg = self.aggregate
        fct = self.fct
        if fct.height:
            agg = agg.filter(~is_fct_summary_metric(pl.col("metric")))
        # A quantity axis is indexed by its SI values (numbers sort numerically, labels would not).
        def index(df: pl.DataFrame) -> List[pl.Expr]:
            return [pl.col(si_of[a]).alias(a) if si_of.get(a) and si_of[a] in df.columns else pl.col(a) for a in axes]

        df = (agg.select([*index(agg), "metric", "detail", "n", "mean", "std", "ci95_low", "ci95_high"]).to_pandas()
              .set_index([*axes, "metric", "detail"]))
        ds = xr.Dataset.from_dataframe(df)
        if fct.height:
            ds = xr.merge([ds, self._fct_dataset(xr, index(fct))], join="outer", compat="no_conflicts")
        pts = self.points
        for a in axes:
            si = si_of.get(a)
            if si and si in pts.columns:
                ds = ds.sortby(a)
                label_of: Dict[float, Any] = {}
                for v, lab in zip(pts[si].to_list(), pts[a].to_list()):
                    label_of.setdefault(v, lab)
                vals = ds[a].values.tolist()
                ds = ds.assign_coords({f"{a}_label": (a, [label_of.get(v) for v in vals]), si: (a, vals)})
                ds[a].attrs.update(units=si[len(a) + 1:], long_name=a)
                ds[f"{a}_label"].attrs.update(long_name=f"{a} as written")
                try:  # select by the values as written, too
                    ds = ds.set_xindex(f"{a}_label")
                except (AttributeError, ValueError, TypeError):  # an xarray without set_xindex
                    pass
            elif a in pts.columns and pts.schema[a] in (pl.Int64, pl.Float64):
                ds = ds.sortby(a)
                ds[a].attrs.update(long_name=a)
            elif a in pts.columns:
                present = set(ds[a].values.tolist())
                ds = ds.reindex({a: [v for v in dict.fromkeys(pts[a].to_list()) if v in present]})
        names = [m for m in self.metric_names() if m in set(agg["metric"].to_list())]
        if names and set(names) == set(ds["metric"].values.tolist()):
            ds = ds.reindex({"metric": names})
        ds.attrs.update(scenario=str(self.plan.get("scenario")), replications=int(self.plan.get("replications") or 0),
                        confidence=0.95)
        return ds

    def _fct_dataset(self, xr, index: List[pl.Expr]):
        """The ``fct_*`` variables of :meth:`to_xarray` (axes indexed by ``index``)."""
        fct = self.fct
        axes = self.axes
        # bins in binning order (fixed, quantile, all) and by size within a binning: a quantile bin
        # missing at some points (few flows) still takes its place
        rank = {"fixed": 0, "quantile": 1, "all": 2}
        order = (fct.group_by("size_bin", maintain_order=True)
                 .agg(pl.col("binning").first(), pl.col("size_bin_lo").min(), pl.col("size_bin_hi").min())
                 .with_columns(pl.col("binning").replace_strict(rank, default=3).alias("_rank"))
                 .sort(["_rank", "size_bin_lo", "size_bin_hi"], maintain_order=True))
        bins = order["size_bin"].to_list()
        stats = list(dict.fromkeys(fct["stat"].to_list()))
        binning_of: Dict[str, str] = {}
        for b, k in zip(fct["size_bin"].to_list(), fct["binning"].to_list()):
            binning_of.setdefault(b, k)
        per_stat = (fct.select([*index, "size_bin", "stat", "n", "mean", "std", "ci95_low", "ci95_high"]).to_pandas()
                    .set_index([*axes, "size_bin", "stat"]))
        ds = xr.Dataset.from_dataframe(per_stat).rename({c: f"fct_{c}" for c in
                                                          ("n", "mean", "std", "ci95_low", "ci95_high")})
        first = fct.filter(pl.col("stat") == stats[0])
        per_bin = (first.select([*index, "size_bin", "size_bin_lo", "size_bin_hi", "flows", "finished", "unfinished",
                                 "unfinished_bytes", "unfinished_as"]).to_pandas().set_index([*axes, "size_bin"]))
        pb = xr.Dataset.from_dataframe(per_bin)
        ds = ds.assign({f"fct_{c}": pb[c] for c in ("flows", "finished", "unfinished", "unfinished_bytes",
                                                    "unfinished_as")})
        ds = ds.assign_coords(size_bin_lo=pb["size_bin_lo"], size_bin_hi=pb["size_bin_hi"])
        ds = ds.reindex({"size_bin": bins, "stat": stats})
        ds = ds.assign_coords(binning=("size_bin", [binning_of[b] for b in bins]))
        ds["size_bin_lo"].attrs.update(units="B", long_name="smallest flow size of the bin (mean over seeds)")
        ds["size_bin_hi"].attrs.update(units="B", long_name="largest flow size of the bin (mean over seeds)")
        ds["fct_mean"].attrs.update(long_name="FCT slowdown statistic, mean over seeds", units="1")
        return ds

    def run_dir(self, point: str, rep: int = 0) -> Path:
        return self.out_dir / f"point={point}" / f"rep={rep}"

    def result(self, point: str, rep: int = 0) -> Results:
        """The full :class:`Results` of one run."""
        return Results.read(self.run_dir(point, rep))

    @classmethod
    def read(cls, out_dir: PathLike) -> "SweepResults":
        d = Path(out_dir)
        plan = json.loads((d / SWEEP_JSON).read_text(encoding="utf-8"))
        fmt = plan.get("format", "parquet")
        tables = [_read_table(_table_path(d, n, fmt), fmt) for n in ("points", "runs", "aggregate")]
        fct = [_read_table(p, fmt) if p.is_file() else None
               for p in (_table_path(d, n, fmt) for n in ("fct_runs", "fct_aggregate"))]
        return cls(d, plan, *tables, *fct)

    def __repr__(self) -> str:
        n = self.points.height
        done = int((self.points["status"] == "done").sum()) if n else 0
        return f"SweepResults({str(self.out_dir)!r}, points {done}/{n} done, metrics {len(self.metric_names())})"

    def _repr_html_(self) -> str:
        """Notebook view: the axes and their values, progress (points done / failed / pending),
        and the aggregate of the first metrics (mean and 95 % CI per point)."""
        from . import _html as h

        def values(a: Dict[str, Any]) -> List[Any]:  # in sweep order (as the tables), else as given
            path = a["path"]
            return list(dict.fromkeys(self.points[path].to_list())) if path in self.points.columns \
                else a.get("values", [])

        axes = [(a["path"], ", ".join(map(str, values(a)))) for a in self.plan.get("axes", [])]
        st = self.points["status"].to_list() if self.points.height else []
        progress = (f"{st.count('done')} of {len(st)} point(s) done, {st.count('failed')} failed, "
                    f"{st.count('pending')} pending; {self.plan.get('replications')} replication(s) each")
        facts = [("directory", str(self.out_dir)), ("scenario", self.plan.get("scenario")),
                 ("mode", self.plan.get("mode")), ("progress", progress)]
        body = h.kv_table(facts) + h.section("axes", h.kv_table(axes))
        if self.warnings:
            body += h.section("warnings", h.kv_table([("warning", w) for w in self.warnings]))
        names = self.metric_names()
        if names:
            shown = names[:6]
            axis_cols = [c for c in self.aggregate.columns if c in self.axes]
            df = self.aggregate.filter(pl.col("metric").is_in(shown))
            body += h.section(
                f"metrics ({len(shown)} of {len(names)}: SweepResults.metric(name))",
                h.frame_table(df, max_rows=30,
                              columns=[*axis_cols, "metric", "detail", "unit", "n", "mean", "ci95_low", "ci95_high"]))
        return h.box("qcnsim SweepResults", body)


#: One run's summary as plain lists (metric, value, unit, detail) plus its seed: cheap to keep for
#: every run of a large sweep, turned into one DataFrame at the end.
SummaryRows = Tuple[List[str], List[float], List[str], List[str], int]


def _rows_from_frame(df: pl.DataFrame, seed: int) -> SummaryRows:
    def col(name: str, default: Any) -> List[Any]:
        return df[name].to_list() if name in df.columns else [default] * df.height

    return (col("metric", ""), [float("nan") if v is None else float(v) for v in col("value", None)],
            col("unit", ""), col("detail", ""), seed)


def _rows_from_core(raw: Mapping[str, Any]) -> SummaryRows:
    """The summary straight from ``_core.run``'s column payloads (no DataFrame needed)."""
    import numpy as np

    cols = {name: (kind, payload) for name, kind, payload in raw["tables"].get("summary", [])}

    def strs(name: str, n: int) -> List[str]:
        return list(cols[name][1]) if name in cols else [""] * n

    n = len(cols["metric"][1]) if "metric" in cols else 0
    values = np.frombuffer(cols["value"][1], dtype="<f8").tolist() if "value" in cols else [float("nan")] * n
    return strs("metric", n), values, strs("unit", n), strs("detail", n), int(raw["seed"])


def aggregate(runs: pl.DataFrame, key_cols: Sequence[str]) -> pl.DataFrame:
    """Mean, sample std and Student-t 95 % CI of ``value`` per (key columns, metric, unit, detail)."""
    group = [*key_cols, "metric", "unit", "detail"]
    if runs.height == 0:
        return pl.DataFrame(schema={**{c: runs.schema[c] for c in key_cols}, "metric": pl.Utf8, "unit": pl.Utf8,
                                    "detail": pl.Utf8, "n": pl.Int64, "mean": pl.Float64, "std": pl.Float64,
                                    "ci95_low": pl.Float64, "ci95_high": pl.Float64})
    rows = []
    grouped = runs.group_by(group, maintain_order=True).agg(pl.col("value"))
    for rec in grouped.iter_rows(named=True):
        n, mean, sd, half = _stats.mean_std_ci(rec.pop("value"), CONFIDENCE)
        rec.update(n=n, mean=mean, std=sd, ci95_low=mean - half, ci95_high=mean + half)
        rows.append(rec)
    return pl.DataFrame(rows, schema={**{c: runs.schema[c] for c in group}, "n": pl.Int64, "mean": pl.Float64,
                                      "std": pl.Float64, "ci95_low": pl.Float64, "ci95_high": pl.Float64},
                        orient="row")


#: The ``fct_stats`` columns that key a statistic (besides the point): its bin and statistic.
FCT_KEYS = ("binning", "size_bin", "stat")
#: ``fct_stats`` columns averaged over a point's seeds in :func:`aggregate_fct`.
FCT_MEANS = ("size_bin_lo", "size_bin_hi", "flows", "finished", "unfinished", "unfinished_bytes")


def is_fct_summary_metric(metric: pl.Expr) -> pl.Expr:
    """The summary rows that repeat ``fct_stats`` (their size bin is only in ``detail``): the
    metrics ``fct_*`` and ``flows_unfinished`` (docs/tables.md, ``fct``)."""
    return metric.str.starts_with("fct_") | (metric == "flows_unfinished")


def aggregate_fct(fct_runs: pl.DataFrame, key_cols: Sequence[str]) -> pl.DataFrame:
    """The FCT slowdown statistics over each point's seeds: per (key columns, ``binning``,
    ``size_bin``, ``stat``) ``n`` (runs with a value: a bin without a finished flow has NaN and is
    left out), ``mean``, ``std``, ``ci95_low``, ``ci95_high`` of ``slowdown`` (as :func:`aggregate`),
    the means over the runs of ``size_bin_lo``, ``size_bin_hi``, ``flows``, ``finished``,
    ``unfinished``, ``unfinished_bytes`` (a quantile bin's sizes and counts depend on the run's
    flows), ``runs`` (the runs with the bin) and ``unfinished_as``."""
    if fct_runs.height == 0:
        return pl.DataFrame()
    group = [*key_cols, *FCT_KEYS]
    grouped = fct_runs.group_by(group, maintain_order=True).agg(
        pl.col("slowdown"), pl.len().alias("runs"),
        *[pl.col(c).cast(pl.Float64).mean() for c in FCT_MEANS],
        pl.col("unfinished_as").unique(maintain_order=True).str.join(",").alias("unfinished_as"))
    rows = []
    for rec in grouped.iter_rows(named=True):
        n, mean, sd, half = _stats.mean_std_ci(rec.pop("slowdown"), CONFIDENCE)
        rec.update(n=n, mean=mean, std=sd, ci95_low=mean - half, ci95_high=mean + half)
        rows.append(rec)
    cols = [*group[:-1], "size_bin_lo", "size_bin_hi", "stat", "n", "mean", "std", "ci95_low", "ci95_high",
            "runs", "flows", "finished", "unfinished", "unfinished_bytes", "unfinished_as"]
    schema = {**{c: fct_runs.schema[c] for c in group}, "n": pl.Int64, "runs": pl.Int64, "unfinished_as": pl.Utf8,
              **{c: pl.Float64 for c in (*FCT_MEANS, "mean", "std", "ci95_low", "ci95_high")}}
    return pl.DataFrame(rows, schema={c: schema[c] for c in rows[0]}, orient="row").select(cols)


class SweepStopped(RuntimeError):
    """The sweep stopped before its end because results could not be written (e.g. a full disk).
    Every run written before is complete; rerunning the sweep resumes."""


class _Lock:
    """An exclusive lock on the sweep directory (``.sweep.lock``, flock): one sweep per directory
    at a time. Released by the OS if the process dies."""

    def __init__(self, d: Path) -> None:
        self.path = d / ".sweep.lock"
        self.f = None

    def __enter__(self) -> "_Lock":
        self.f = open(self.path, "a+")
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return self
        try:
            fcntl.flock(self.f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise ScenarioError(f"another sweep is running in {self.path.parent} (locked {self.path.name})",
                                "--out", str(self.path.parent), "a directory no other sweep is using") from None
        return self

    def __exit__(self, *exc) -> None:
        if self.f is not None:
            self.f.close()


def _clean_temporaries(out: Path) -> int:
    """Remove what an interrupted write left behind (``.rep=N.tmp-*`` / ``.old-*`` directories,
    ``.*.tmp-*`` files). Only called while holding the directory lock."""
    n = 0
    for p in list(out.glob("point=*/.rep=*.tmp-*")) + list(out.glob("point=*/.rep=*.old-*")) + list(out.glob(".*.tmp-*")):
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                p.unlink()
            except OSError:
                continue
        n += 1
    return n


def _finished_summary(rep_dir: Path, point: str, rep: int) -> Optional[SummaryRows]:
    """The summary rows and seed of a complete run of (point, rep) in ``rep_dir``, else None."""
    try:
        info = json.loads((rep_dir / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not info.get("complete"):
        return None
    sw = info.get("sweep") or {}
    if sw.get("point") != point or sw.get("rep") != rep:
        return None
    fmt = info.get("format", "parquet")
    if not all((rep_dir / f"{name}.{fmt}").is_file() for name in info.get("tables", [])):
        return None
    path = rep_dir / f"summary.{fmt}"
    try:
        df = _read_table(path, fmt) if path.is_file() else pl.DataFrame()
    except (OSError, pl.exceptions.PolarsError):  # unreadable: run it again
        return None
    return _rows_from_frame(df, int(info["seed"]))


def _finished_fct(rep_dir: Path) -> Optional[pl.DataFrame]:
    """The ``fct_stats`` table of a complete run in ``rep_dir``, if it wrote one."""
    try:
        info = json.loads((rep_dir / RUN_JSON).read_text(encoding="utf-8"))
        fmt = info.get("format", "parquet")
        if "fct_stats" not in info.get("tables", []):
            return None
        return _read_table(rep_dir / f"fct_stats.{fmt}", fmt)
    except (OSError, ValueError, AttributeError, pl.exceptions.PolarsError):
        return None


#: Threads that write finished runs (file-system latency, Parquet encoding and fsync release the GIL).
WRITER_THREADS = 4
#: Runs received but not yet written, at most (bounds memory when writing is the bottleneck).
MAX_UNWRITTEN = 16


def run_sweep(
    plan: Plan,
    out: PathLike,
    executor: Any = None,
    fmt: str = "parquet",
    tables: Optional[Sequence[str]] = None,
    progress: Union[None, bool, Callable[[Dict[str, int]], object]] = None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    warn: Optional[Callable[[str], None]] = None,
) -> SweepResults:
    """Run ``plan`` into ``out`` (resumable) and aggregate. See :func:`sweep`. Each of the
    result's ``warnings`` is passed to ``warn`` (default: ``log("warning: " + message)``, one
    line on stderr for the CLI)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    keep = None if tables is None else {*tables, "summary", "fct_stats"}  # both small; the sweep aggregates them
    out = Path(out)
    check_sweep_dir(out, "out")  # before any run: a sweep never writes over files it did not write
    out.mkdir(parents=True, exist_ok=True)
    executor = make_executor(executor)
    with _Lock(out):
        _clean_temporaries(out)
        from ._provenance import provenance

        prov = provenance(plan.scenario)
        plan_json = {**plan.to_json(), "format": fmt, "qcnsim_version": _core.version(), "provenance": prov}
        try:
            _write_json(plan_json, out / SWEEP_JSON)
        except OSError as e:
            raise SweepStopped(f"cannot write {out / SWEEP_JSON} ({e})") from e

        tasks = plan.tasks()
        values_of = {p.id: {a.path: a.raw[i] for a, i in zip(plan.axes, p.index)} for p in plan.points}
        summaries: Dict[Tuple[str, int], SummaryRows] = {}
        fct_of: Dict[Tuple[str, int], pl.DataFrame] = {}  # each run's fct_stats (runs with finite flows)
        todo = []
        for t in tasks:
            rep_dir = out / f"point={t.point}" / f"rep={t.rep}"
            got = _finished_summary(rep_dir, t.point, t.rep)
            if got is not None:
                summaries[t.key] = got
                f = _finished_fct(rep_dir)
                if f is not None:
                    fct_of[t.key] = f
            else:
                todo.append(t)
        reps_left: Dict[str, int] = {}
        for t in tasks:
            reps_left[t.point] = reps_left.get(t.point, 0) + (0 if t.key in summaries else 1)
        n_points = len(reps_left)
        state = {"runs": len(summaries), "runs_total": len(tasks),
                 "points": sum(1 for v in reps_left.values() if v == 0), "points_total": n_points, "failed": 0}
        if summaries:
            log(f"sweep: {len(summaries)} of {len(tasks)} runs already done in {out}, skipping them")

        errors: Dict[Tuple[str, int], str] = {}
        bar: Optional[SweepProgress] = None
        cb = progress if callable(progress) else None
        if cb is None and _want_bar(progress if not callable(progress) else False):
            bar = SweepProgress(len(tasks), n_points)
            bar.skipped = len(summaries)

        def report(force: bool = False) -> None:
            state["failed"] = len(errors)
            if cb is not None:
                cb(dict(state))
            elif bar is not None:
                bar.update(state["runs"], state["points"], len(errors), force=force)

        def write(task: Task, res: Results) -> None:
            d = out / f"point={task.point}" / f"rep={task.rep}"
            try:
                res.write(d, fmt=fmt)
            except OutputError as e:
                raise SweepStopped(f"sweep stopped: {e}; every run written before is complete") from e
            except OSError as e:
                why = "the disk is full" if e.errno in (errno.ENOSPC, errno.EDQUOT) else str(e)
                raise SweepStopped(f"sweep stopped: cannot write {d} ({why}); every run written before is "
                                   "complete, rerun the sweep to resume") from e

        unwritten: "deque[Tuple[Future, Task, SummaryRows]]" = deque()

        def settle(limit: int) -> None:
            """Wait for written runs until at most ``limit`` are unwritten; record them."""
            while unwritten and (len(unwritten) > limit or unwritten[0][0].done()):
                fut, task, rows = unwritten.popleft()
                fut.result()  # SweepStopped from the writer thread
                summaries[task.key] = rows
                errors.pop(task.key, None)
                state["runs"] += 1
                reps_left[task.point] -= 1
                if reps_left[task.point] == 0:
                    state["points"] += 1
                report()

        t0 = time.monotonic()
        pending = todo
        writers = ThreadPoolExecutor(max_workers=WRITER_THREADS, thread_name_prefix="qcnsim-sweep-write")
        lost: Optional[ExecutorLost] = None
        try:
            try:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    if not pending:
                        break
                    if attempt > 1:
                        log(f"sweep: retrying {len(pending)} failed run(s)")
                    retry = []
                    for task, status, payload in executor.map(plan.scenario.text, pending):
                        if status == "ok":
                            if keep is not None:
                                payload = {**payload, "tables": {k: v for k, v in payload["tables"].items() if k in keep}}
                            res = Results._from_core(payload, scenario_name=plan.scenario.name,
                                                     overrides=list(task.overrides), scenario=plan.scenario,
                                                     started=prov["started"])
                            res.run_info["sweep"] = {"point": task.point, "rep": task.rep, "attempt": attempt,
                                                     "values": values_of.get(task.point, {}),
                                                     "base_seed": plan.base_seed}
                            f = res.tables.get("fct_stats")
                            if f is not None:
                                fct_of[task.key] = f
                            unwritten.append((writers.submit(write, task, res), task, _rows_from_core(payload)))
                            settle(MAX_UNWRITTEN)
                        elif attempt < MAX_ATTEMPTS:
                            retry.append(task)
                        else:
                            errors[task.key] = str(payload)
                            report()
                    settle(0)
                    pending = retry
            except ExecutorLost as e:
                lost = e
                settle(0)  # keep every run received before the loss
        finally:
            writers.shutdown(wait=True)  # a run being written is finished, not torn
            if bar is not None:
                report(force=True)
                bar.close()
        wall = time.monotonic() - t0
        ran = len(todo) - len(errors)
        if todo:
            log(f"sweep: {ran} run(s) in {wall:.1f} s ({ran / wall if wall > 0 else 0:.1f} runs/s)"
                + (f", {len(errors)} failed" if errors else ""))
        res = _collect(plan, plan_json, out, fmt, summaries, errors,
                       {k: v for k, v in fct_of.items() if k in summaries})
        if lost is not None:
            raise SweepStopped(f"sweep stopped: {lost}; {len(summaries)} of {len(tasks)} run(s) are done and kept in "
                               f"{out}; rerun the same command to resume") from None
        for w in res.warnings:
            if warn is None:
                log(f"warning: {w}")
            else:
                warn(w)
        return res


def _collect(plan: Plan, plan_json: Dict[str, Any], out: Path, fmt: str,
             summaries: Dict[Tuple[str, int], SummaryRows],
             errors: Dict[Tuple[str, int], str],
             fct_of: Optional[Dict[Tuple[str, int], pl.DataFrame]] = None) -> SweepResults:
    axis_cols: List[pl.Series] = []
    axis_pos: List[int] = []  # the axis each column belongs to
    for k, a in enumerate(plan.axes):
        axis_cols.append(_axis_column(a))
        axis_pos.append(k)
        si = _axis_si_column(a)
        if si is not None:
            axis_cols.append(si)
            axis_pos.append(k)
    n = len(plan.points)
    ids = [p.id for p in plan.points]
    done = [sum((p.id, r) in summaries for r in plan.reps) for p in plan.points]
    failed = [sum((p.id, r) in errors for r in plan.reps) for p in plan.points]
    first_err = []
    for p in plan.points:
        errs = [f"rep {r}: {errors[(p.id, r)]}" for r in plan.reps if (p.id, r) in errors]
        first_err.append("; ".join(errs) if errs else None)
    status = ["done" if d == plan.replications else ("failed" if f else "pending") for d, f in zip(done, failed)]
    points = pl.DataFrame([
        pl.Series("point", ids, dtype=pl.Utf8),
        *[pl.Series(c.name, [c[p.index[k]] for p in plan.points], dtype=c.dtype) for k, c in zip(axis_pos, axis_cols)],
        pl.Series("replications", [plan.replications] * n, dtype=pl.Int64),
        pl.Series("runs_done", done, dtype=pl.Int64),
        pl.Series("runs_failed", failed, dtype=pl.Int64),
        pl.Series("status", status, dtype=pl.Utf8),
        pl.Series("error", first_err, dtype=pl.Utf8),
    ])

    cols: Dict[str, List[Any]] = {c: [] for c in ("point", "rep", "seed", "metric", "value", "unit", "detail")}
    seen = set()
    for p in plan.points:
        if p.id in seen:
            continue
        seen.add(p.id)
        for r in plan.reps:
            got = summaries.get((p.id, r))
            if got is None:
                continue
            metric, value, unit, detail, seed = got
            k = len(metric)
            cols["point"] += [p.id] * k
            cols["rep"] += [r] * k
            cols["seed"] += [seed] * k
            cols["metric"] += metric
            cols["value"] += value
            cols["unit"] += unit
            cols["detail"] += detail
    key_cols = ["point", *[c.name for c in axis_cols]]
    axis_of = {p.id: p.index for p in reversed(plan.points)}  # first point with an id wins
    runs = pl.DataFrame([
        pl.Series("point", cols["point"], dtype=pl.Utf8),
        *[pl.Series(c.name, [c[axis_of[pid][k]] for pid in cols["point"]], dtype=c.dtype)
          for k, c in zip(axis_pos, axis_cols)],
        pl.Series("rep", cols["rep"], dtype=pl.Int64),
        pl.Series("seed", cols["seed"], dtype=pl.UInt64),
        pl.Series("metric", cols["metric"], dtype=pl.Utf8),
        pl.Series("value", cols["value"], dtype=pl.Float64),
        pl.Series("unit", cols["unit"], dtype=pl.Utf8),
        pl.Series("detail", cols["detail"], dtype=pl.Utf8),
    ])
    runs = runs.select([*key_cols, "rep", "seed", "metric", "value", "unit", "detail"])
    agg = aggregate(runs, key_cols)
    # FCT statistics from the runs' tidy fct_stats tables, in point and rep order
    frames = []
    seen = set()
    for p in plan.points:
        if p.id in seen:  # a point listed twice (zip of equal values) counts once, as above
            continue
        seen.add(p.id)
        for r in plan.reps:
            f = (fct_of or {}).get((p.id, r))
            if f is None or f.height == 0:
                continue
            seed = summaries[(p.id, r)][4]
            frames.append(f.select([
                pl.lit(p.id, dtype=pl.Utf8).alias("point"),
                *[pl.lit(c[p.index[k]], dtype=c.dtype).alias(c.name) for k, c in zip(axis_pos, axis_cols)],
                pl.lit(r, dtype=pl.Int64).alias("rep"), pl.lit(seed, dtype=pl.UInt64).alias("seed"), pl.all()]))
    fct_runs = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    fct_agg = aggregate_fct(fct_runs, key_cols)
    plan_json["warnings"] = no_effect_warnings(agg, [a.path for a in plan.axes])
    try:
        tables = [("points", points), ("runs", runs), ("aggregate", agg)]
        if fct_runs.height:
            tables += [("fct_runs", fct_runs), ("fct_aggregate", fct_agg)]
        for name, df in tables:
            _write_table(df, _table_path(out, name, fmt), fmt)
        _write_json(plan_json, out / SWEEP_JSON)  # now with the warnings
    except OSError as e:
        raise SweepStopped(f"cannot write the sweep tables in {out} ({e}); every run is complete on disk, "
                           "rerun the sweep to aggregate") from e
    return SweepResults(out, plan_json, points, runs, agg, fct_runs, fct_agg)


def sweep(
    scenario: Union[Scenario, PathLike],
    axes: Union[None, Mapping[str, Iterable[Any]], Sequence[str]] = None,
    replications: Optional[int] = None,
    executor: Any = None,
    *,
    out: Optional[PathLike] = None,
    mode: Optional[str] = None,
    seed: Optional[int] = None,
    first_rep: int = 0,
    overrides: Sequence[str] = (),
    fmt: str = "parquet",
    tables: Optional[Sequence[str]] = None,
    progress: Union[None, bool, Callable[[Dict[str, int]], object]] = None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> SweepResults:
    """Run ``scenario`` at every point of ``axes``, ``replications`` times each, and aggregate.

    - ``axes``: ``{"cc.qcn.cp.q_eq": ["16KB", "33KB"], ...}``, or ``--sweep`` strings
      ``["cc.qcn.cp.q_eq=16KB,33KB"]``, or ``None`` for the scenario's ``[sweep]`` table.
    - ``replications``: runs per point (default: ``sweep.replications``, else 1); replication r
      uses :func:`replication_seed` of the base seed (``seed``, else ``meta.seed``).
    - ``executor``: ``None``/``"local"`` (all cores), ``"dask"`` (a LocalCluster), or an executor
      object (:class:`qcnsim.executors.LocalExecutor`, :class:`qcnsim.executors.DaskExecutor`).
    - ``out``: the sweep directory (resumable: finished runs are skipped); a new temporary
      directory when ``None``.
    - ``mode``: ``"grid"`` or ``"zip"`` (default: the scenario's, else grid).
    - ``first_rep``: index of the first replication (default 0; 1 leaves out the plain run).
    - ``tables``: the tables to keep per run (``summary`` and ``fct_stats`` are always kept); default all.
    - ``progress``: ``None`` shows a bar on a terminal, ``True``/``False`` force it, a callable gets
      ``{"runs", "runs_total", "points", "points_total", "failed"}`` after every run.

    Each of the result's ``warnings`` (e.g. ``axis cc.qcn.cp.q_eq changed nothing: every summary
    metric is identical at its 3 values``) is also issued as a :class:`SweepWarning` with
    :func:`warnings.warn`.

    Raises :class:`qcnsim.ScenarioError` for an invalid scenario, axis or value (before any run),
    and :class:`SweepStopped` if results cannot be written (e.g. disk full).
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(Path(scenario))
    if overrides:
        scenario = scenario.with_overrides(list(overrides))
    plan = plan_sweep(scenario, axes, replications, mode, seed, first_rep)
    if out is None:
        out = tempfile.mkdtemp(prefix="qcnsim-sweep-")
    res = run_sweep(plan, out, executor=executor, fmt=fmt, tables=tables, progress=progress, log=log,
                    warn=lambda w: None)
    for w in res.warnings:
        _warnings.warn(w, SweepWarning, stacklevel=2)
    return res


def format_aggregate(res: SweepResults, max_rows: int = 40) -> str:
    """A compact text table of the aggregate (for the CLI)."""
    from ._tables import to_markdown

    df = res.aggregate
    if df.height == 0:
        return ""
    show = df.select([c for c in df.columns if c != "point"] + ["point"])
    extra = ""
    if show.height > max_rows:
        extra = f"... {show.height - max_rows} more rows in {_table_path(res.out_dir, 'aggregate', res.plan.get('format', 'parquet'))}\n"
        show = show.head(max_rows)
    return to_markdown(show) + extra

