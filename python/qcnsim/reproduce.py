"""Reproduce a reference experiment: run every variant of ``scenarios/<name>.toml``, draw its
figures and build a combined summary table.

``reproduce(name, out_dir)`` writes::

    out_dir/<variant>/      one result directory per variant (tables + run.json)
    out_dir/throughput.png  one panel per variant (also queue.png, cr.png, tr.png; see plot.py)
    out_dir/summary.csv     variant column + the summary rows of every variant
    out_dir/summary.md      the same as a Markdown table (under the module's ``HEADLINE``, if any:
                            which variants carry the headline result and why)
    out_dir/published.csv   the published values beside qcnsim's (when the experiment module
    out_dir/published.md    defines ``PUBLISHED``, see :func:`published_table`)

It is resumable: a variant whose directory already holds a complete result made with the same
overrides and seed is not run again.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import polars as pl

from . import plot
from ._errors import ScenarioError
from ._tables import to_markdown  # also qcnsim.reproduce.to_markdown, its old place
from .outputs import check_reproduce_dir, check_result_dir, mark_reproduce_dir
from .results import RUN_JSON, Results, is_complete
from .run import run
from .scenario import Scenario, variant_override

PathLike = Union[str, "os.PathLike[str]"]

_TIME_UNITS = {"ps": 1, "ns": 10**3, "us": 10**6, "µs": 10**6, "ms": 10**9, "s": 10**12}


class UnknownExperiment(LookupError):
    """No scenario file with that name."""


def parse_time_ps(value: Any) -> int:
    """``"4s"``/``"0.5us"`` or an integer number of picoseconds -> picoseconds."""
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*([0-9_]+(?:\.[0-9_]*)?)\s*([a-zµ]+)\s*", str(value))
    if not m or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"not a time: {value!r}")
    from decimal import Decimal

    return int(Decimal(m.group(1).replace("_", "")) * _TIME_UNITS[m.group(2)])


def scenario_dirs() -> List[Path]:
    """Directories searched for ``<name>.toml``, in order: $QCNSIM_SCENARIOS (os.pathsep-separated),
    then ./scenarios. After them come the scenarios compiled into qcnsim (``builtin``)."""
    dirs: List[Path] = []
    env = os.environ.get("QCNSIM_SCENARIOS")
    if env:
        dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    dirs.append(Path.cwd() / "scenarios")
    return [d for d in dirs if d.is_dir()]


def builtin_scenarios() -> Dict[str, str]:
    """The reference scenarios shipped inside the installed package: {name: TOML text}."""
    from . import _core

    return dict(_core.builtin_scenarios())


def list_experiments() -> List[str]:
    names = set(builtin_scenarios())
    for d in scenario_dirs():
        names.update(p.stem for p in d.glob("*.toml"))
    return sorted(names)


def find_scenario(name: str) -> Scenario:
    """The scenario of experiment ``name``: a .toml path, else ``<name>.toml`` in
    :func:`scenario_dirs`, else the copy built into qcnsim."""
    p = Path(name)
    if p.suffix == ".toml":
        if p.is_file():
            return Scenario.load(p)
        raise UnknownExperiment(f"scenario file not found: {name}")
    for d in scenario_dirs():
        cand = d / f"{name}.toml"
        if cand.is_file():
            return Scenario.load(cand)
    builtin = builtin_scenarios()
    if name in builtin:
        return Scenario.builtin(name)
    from ._suggest import did_you_mean

    names = list_experiments()
    known = ", ".join(names) or "(no scenario files found)"
    raise UnknownExperiment(f"unknown experiment {name!r}{did_you_mean(name, names)}; known experiments: {known}")


def describe_experiment(name: str) -> str:
    """One line on experiment ``name``: the first sentence of its ``meta.description``."""
    try:
        meta = find_scenario(name).resolved().get("meta", {}) or {}
    except (ScenarioError, UnknownExperiment, OSError, UnicodeDecodeError) as e:
        return f"(cannot read: {e})"
    text = " ".join(str(meta.get("description") or "").split())
    first = re.split(r"(?<=\.)\s|;\s", text, maxsplit=1)[0].rstrip(".;") if text else ""
    return f"{first}." if first else "(no meta.description)"


def quick_duration(resolved: Dict[str, Any]) -> str:
    """The duration of a ``--quick`` run: min(``meta.quick_duration``, ``meta.duration``), or a
    tenth of ``meta.duration`` when the scenario sets no ``quick_duration``."""
    meta = resolved.get("meta", {}) or {}
    dur = meta.get("duration")
    if dur is None:
        raise ScenarioError("the scenario has no meta.duration to shorten for --quick",
                            "meta.duration", "", "a time")
    dur_ps = parse_time_ps(dur)
    q = meta.get("quick_duration")
    if q not in (None, "", 0):
        q_ps = parse_time_ps(q)
        if q_ps >= dur_ps:
            return dur if isinstance(dur, str) else f"{dur_ps}ps"
        return q if isinstance(q, str) else f"{q_ps}ps"
    return f"{max(1, dur_ps // 10)}ps"


def _same_run(out: Path, overrides: List[str], seed: Optional[int]) -> bool:
    if not is_complete(out):
        return False
    try:
        info = json.loads((out / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if info.get("overrides") != overrides:
        return False
    return seed is None or info.get("seed") == seed


# -- published values ------------------------------------------------------------------------------
# Unit -> (dimension, factor to the dimension's base unit). A qcnsim value is converted into the
# published entry's unit when both units are listed here with the same dimension.
_UNITS: Dict[str, Tuple[str, float]] = {
    "s": ("time", 1.0), "ms": ("time", 1e-3), "us": ("time", 1e-6), "µs": ("time", 1e-6),
    "ns": ("time", 1e-9), "ps": ("time", 1e-12),
    "bps": ("rate", 1.0), "b/s": ("rate", 1.0), "Kbps": ("rate", 1e3), "kbps": ("rate", 1e3),
    "Mbps": ("rate", 1e6), "Mb/s": ("rate", 1e6), "Gbps": ("rate", 1e9), "Gb/s": ("rate", 1e9),
    "B": ("bytes", 1.0), "bytes": ("bytes", 1.0), "KB": ("bytes", 1e3), "kB": ("bytes", 1e3),
    "MB": ("bytes", 1e6), "frames": ("frames", 1.0), "pkts": ("frames", 1.0), "packets": ("frames", 1.0),
    "1": ("ratio", 1.0), "": ("ratio", 1.0), "fraction": ("ratio", 1.0), "%": ("ratio", 1e-2),
}
PUBLISHED_KEYS = ("metric", "variant", "value", "unit", "source", "detail")
PUBLISHED_SCHEMA = {"metric": pl.Utf8, "variant": pl.Utf8, "detail": pl.Utf8, "unit": pl.Utf8,
                    "published": pl.Float64, "qcnsim": pl.Float64, "ratio": pl.Float64, "note": pl.Utf8,
                    "source": pl.Utf8}


def _convert(value: float, unit: str, to: str) -> Optional[float]:
    if unit == to:
        return value
    a, b = _UNITS.get(unit), _UNITS.get(to)
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]


def check_published(entries: Any, where: str = "PUBLISHED") -> List[Dict[str, Any]]:
    """Validate an experiment's ``PUBLISHED`` list; a bad entry raises ``ValueError`` naming it."""
    if not isinstance(entries, (list, tuple)):
        raise ValueError(f"{where}: must be a list of dicts, got {type(entries).__name__}")
    out = []
    for i, e in enumerate(entries):
        at = f"{where}[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f"{at}: must be a dict, got {type(e).__name__}")
        unknown = sorted(set(e) - set(PUBLISHED_KEYS))
        if unknown:
            raise ValueError(f"{at}: unknown key(s) {unknown}; allowed: {', '.join(PUBLISHED_KEYS)}")
        for k in ("metric", "unit", "source"):
            if not isinstance(e.get(k), str) or (k != "unit" and not e[k].strip()):
                raise ValueError(f"{at}.{k}: must be a non-empty string, got {e.get(k)!r}")
        for k in ("variant", "detail"):
            if e.get(k) is not None and not isinstance(e[k], str):
                raise ValueError(f"{at}.{k}: must be a string or None, got {e[k]!r}")
        v = e.get("value")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            raise ValueError(f"{at}.value: must be a number, got {v!r}")
        out.append({"metric": e["metric"], "variant": e.get("variant"), "detail": e.get("detail"),
                    "value": float(v), "unit": e["unit"], "source": e["source"]})
    return out


def published_table(entries: Sequence[Dict[str, Any]], summary: pl.DataFrame) -> pl.DataFrame:
    """The published values beside qcnsim's, one row per entry of an experiment's ``PUBLISHED``.

    An entry ``dict(metric=, variant=None or a name, value=, unit=, source="<study>: '<quote>'")``
    (the study's number as docs/sources.md#study-numbers lists it)
    (optionally ``detail=``, a substring of the summary's ``detail`` column) is matched with the
    rows of the combined ``summary`` of the same ``metric`` and ``variant`` (``variant=None``
    matches rows without a variant, or the only variant of a one-variant experiment). Exactly one
    row must match: its value, converted into the entry's unit when the two units differ (time,
    rate, bytes, frames, ratio), is ``qcnsim`` and ``ratio`` is qcnsim / published. Whatever does
    not hold (no row, several rows, a unit that does not convert, a value that is not a number,
    a published 0) leaves ``qcnsim`` or ``ratio`` empty and says why in ``note``: nothing is
    invented."""
    entries = check_published(entries)
    cols = set(summary.columns)
    has = {"variant", "metric", "value"} <= cols
    variants = summary["variant"].unique().to_list() if has else []
    rows = []
    for e in entries:
        qv: Optional[float] = None
        note = ""
        if not has:
            note = "no qcnsim summary"
        else:
            m = summary.filter(pl.col("metric") == e["metric"])
            if e["variant"] is not None:
                m = m.filter(pl.col("variant") == e["variant"])
            else:
                nulls = m.filter(pl.col("variant").is_null())
                m = nulls if nulls.height or len(variants) != 1 else m
            if e["detail"] is not None:
                m = m.filter(pl.col("detail").fill_null("").str.contains(e["detail"], literal=True)) \
                    if "detail" in cols else m.clear()
            if m.height == 0:
                note = "missing: no matching summary row"
            elif m.height > 1:
                note = f"missing: {m.height} summary rows match (give detail=)"
            else:
                raw = m["value"][0]
                unit = (m["unit"][0] if "unit" in cols else None) or ""
                if raw is None or raw != raw:
                    note = "missing: qcnsim's value is not a number"
                else:
                    qv = _convert(float(raw), unit, e["unit"])
                    if qv is None:
                        note = f"missing: qcnsim's unit {unit!r} does not convert to {e['unit']!r}"
                    elif unit != e["unit"]:
                        note = f"converted from {unit}"
        ratio = None
        if qv is not None:
            if e["value"] == 0:
                note = (note + "; " if note else "") + "no ratio: published 0"
            else:
                ratio = qv / e["value"]
        rows.append({"metric": e["metric"], "variant": e["variant"], "detail": e["detail"], "unit": e["unit"],
                     "published": e["value"], "qcnsim": qv, "ratio": ratio, "note": note,
                     "source": e["source"]})
    return pl.DataFrame(rows, schema=PUBLISHED_SCHEMA)


def _experiment_module(stem: str):
    """Module ``qcnsim.experiments.<stem with _ for ->``, or None when there is none."""
    modname = "qcnsim.experiments." + re.sub(r"[^0-9a-zA-Z_]", "_", stem)
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if e.name == modname:
            return None
        raise


def experiment_published(stem: str) -> Optional[List[Dict[str, Any]]]:
    """The ``PUBLISHED`` list of module ``qcnsim.experiments.<stem>``, if it defines one."""
    mod = _experiment_module(stem)
    entries = getattr(mod, "PUBLISHED", None)
    return None if entries is None else check_published(entries, f"{mod.__name__}.PUBLISHED")


def experiment_headline(stem: str) -> Optional[str]:
    """The ``HEADLINE`` of module ``qcnsim.experiments.<stem>``, if it defines one: which
    variants carry the experiment's headline result (where it ships several readings of a
    study side by side) and why. ``reproduce`` writes it into summary.md and published.md."""
    mod = _experiment_module(stem)
    text = getattr(mod, "HEADLINE", None)
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise ValueError(f"{mod.__name__}.HEADLINE: expected a non-empty string, got {text!r}")
    return text


def write_published(stem: str, entries: Sequence[Dict[str, Any]], summary: pl.DataFrame, out_dir: Path,
                    quick: bool = False, headline: Optional[str] = None) -> pl.DataFrame:
    """Write ``published.csv`` / ``published.md`` of experiment ``stem`` (its ``PUBLISHED``
    ``entries`` matched with its combined ``summary``; its ``headline``, if any, under the title)
    into ``out_dir``; return the table."""
    table = published_table(entries, summary)
    table.write_csv(out_dir / "published.csv")
    title = f"# {stem}{' (quick)' if quick else ''}: published values beside qcnsim's\n\n"
    if headline:
        title += f"Headline: {headline}\n\n"
    note = ("ratio = qcnsim / published. A --quick run: where it is shorter than the full run "
            "(meta.quick_duration), its values are not comparable.\n\n" if quick else "ratio = qcnsim / published.\n\n")
    body = to_markdown(table) if table.height else ("(no published number entered: the study states none as text; "
                                                   "its docs page says what it gives and what was read)\n")
    (out_dir / "published.md").write_text(title + note + body, encoding="utf-8")
    return table


def combined_summary(runs: Sequence[tuple]) -> pl.DataFrame:
    frames = []
    for label, res in runs:
        s = res.summary
        if s.height == 0 and not s.columns:
            continue
        frames.append(s.select(pl.lit(label).alias("variant"), pl.all()))
    if not frames:
        return pl.DataFrame({"variant": [], "metric": [], "value": [], "unit": [], "detail": []},
                            schema={"variant": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64,
                                    "unit": pl.Utf8, "detail": pl.Utf8})
    return pl.concat(frames, how="diagonal_relaxed")


@dataclass
class ExperimentContext:
    """What an experiment's own post-processing hook gets (see :func:`experiment_hook`)."""

    name: str
    base: Scenario
    planned: List[Tuple[str, Scenario]]
    runs: List[Tuple[str, Results]]
    out_dir: Path
    quick: bool
    overrides: List[str]
    seed: Optional[int]
    fmt: str
    progress: Any
    log: Callable[[str], None]


def experiment_hook(stem: str):
    """The ``post(ctx)`` function of module ``qcnsim.experiments.<stem with _ for ->``, if that
    module exists. It draws the experiment's own figures (and may run extra runs, e.g. a
    parameter study) and returns ``(figure paths, extra summary rows or None)``; the extra rows
    use the summary's columns (variant, metric, value, unit, detail)."""
    return getattr(_experiment_module(stem), "post", None)


def reproduce(
    name: str,
    out_dir: PathLike,
    quick: bool = False,
    overrides: Sequence[str] = (),
    seed: Optional[int] = None,
    fmt: str = "parquet",
    progress=None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    echo: Callable[[str], None] = print,
    figures_out: Optional[List[Path]] = None,
    published_out: Optional[List[pl.DataFrame]] = None,
    verbose: bool = True,
) -> pl.DataFrame:
    """Run every variant of experiment ``name`` into ``out_dir`` and return the combined summary.
    The paths of the figures drawn are appended to ``figures_out`` when it is given; the
    published-values table (:func:`published_table`), when the experiment has one, to
    ``published_out``.

    Every log line also goes to ``out_dir/reproduce.log``. ``verbose`` (the default here): the
    log lines as they come (``log``) and the whole summary and published table at the end
    (``echo``). Not verbose (``qcnsim reproduce`` without ``--verbose``): a progress line per
    variant on a terminal only, then :func:`short_report` through ``echo`` — what ran, where the
    results are, the published values beside qcnsim's — and the detail stays in the files."""
    lines: List[str] = []

    def keep(msg: str) -> None:  # every line goes to reproduce.log; shown as it comes if verbose
        lines.append(msg)
        if verbose:
            log(msg)

    return _reproduce(name, out_dir, quick, overrides, seed, fmt, progress, keep, echo, figures_out,
                      published_out, verbose, lines)


def short_report(stem: str, out_dir: Path, n_run: int, n_done: int, quick: bool, headline: Optional[str],
                 published: Optional[pl.DataFrame], figs: Sequence[PathLike], max_rows: int = 12) -> str:
    """The few lines ``qcnsim reproduce`` prints by default: what ran, where the results are,
    the headline, the published values beside qcnsim's (at most ``max_rows`` rows; the rest and
    the sources are in published.md), and which files hold the detail."""
    n = n_run + n_done
    ran = f"{n_run} run now" + (f", {n_done} from an earlier run" if n_done else "")
    out = [f"{stem}{' (--quick)' if quick else ''}: {n} variant{'s' if n != 1 else ''} ({ran}); "
           f"results in {out_dir}/"]
    if headline:
        out.append(f"headline: {headline}")
    if published is not None and published.height:
        cols = [c for c in ("metric", "variant", "unit", "published", "qcnsim", "ratio") if c in published.columns]
        rows = published.select(cols)
        out.append("published values beside qcnsim's (ratio = qcnsim / published; sources and notes in "
                   "published.md):")
        out.append(to_markdown(rows.head(max_rows)).rstrip("\n"))
        if rows.height > max_rows:
            out.append(f"... and {rows.height - max_rows} more rows in published.md")
    elif published is not None:
        out.append("the study states no number to compare with (published.md)")
    else:
        out.append("no published values are listed for this experiment")
    names = [Path(f).name for f in figs]
    figs_txt = f"; figures: {', '.join(names)}" if names else ""
    out.append(f"detail: summary.md / summary.csv (every metric of every variant), reproduce.log, "
               f"one directory of tables per variant{figs_txt}")
    out.append("(qcnsim reproduce --verbose prints the whole summary and the log as it runs)")
    return "\n".join(out)


def _progress_line(msg: str) -> None:
    """One overwritten status line on a terminal's stderr (nothing when stderr is not one)."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg)
        sys.stderr.flush()


def _reproduce(name, out_dir, quick, overrides, seed, fmt, progress, log, echo, figures_out, published_out,
               verbose, lines) -> pl.DataFrame:
    found = find_scenario(name)
    stem = found.path.stem if found.path is not None else Path(name).stem
    published = experiment_published(stem)  # a broken list fails before anything runs
    headline = experiment_headline(stem)
    base = found.with_overrides(list(overrides))
    resolved = base.resolved()  # validates the base (and the user's overrides) up front
    variants = base.variants()
    named = bool(variants)  # else the plain base runs, as the one variant "base"
    if quick and named:
        # `quick = false` variants run in the full reproduce only (docs/scenario.md#variants)
        skipped = [v["name"] for v in variants if not v["quick"]]
        variants = [v for v in variants if v["quick"]]
        if not variants:
            raise ScenarioError("every variant has quick = false: --quick would run nothing",
                                "variants.0.quick", "false", "at least one variant that --quick runs")
        if skipped:
            log(f"--quick: leaving out the full-run-only variants {', '.join(skipped)}")
    variants = variants or [{"name": "base", "set": {}}]
    extra = [f"meta.duration={quick_duration(resolved)}"] if quick else []
    out_dir = Path(out_dir)
    check_reproduce_dir(out_dir, "out_dir")

    # Validate every variant and check its result directory before running any, so a typo or an
    # output path qcnsim will not write to fails fast.
    planned = []
    for v in variants:
        ovr = [*([variant_override(v["name"])] if named else []), *extra, *overrides]
        sc = Scenario(base.text, found.path, ovr, name=f"{stem}/{v['name']}")
        sc.resolved()
        if not _same_run(out_dir / v["name"], sc.overrides, seed):
            check_result_dir(out_dir / v["name"], "out_dir")
        planned.append((v["name"], sc))
    mark_reproduce_dir(out_dir, stem)

    runs = []
    n_run = 0
    for k, (vname, sc) in enumerate(planned):
        vdir = out_dir / vname
        if not verbose:
            _progress_line(f"{stem}: variant {k + 1} of {len(planned)}: {vname}")
        if _same_run(vdir, sc.overrides, seed):
            log(f"{vname}: already done ({vdir}), skipping")
        else:
            n_run += 1
            log(f"{vname}: running{' (quick)' if quick else ''} ...")
            res = run(sc, seed=seed, progress=progress if verbose else (progress or False))
            res.write(vdir, fmt=fmt)
            info = res.run_info
            eps = info.get("events_per_s") or 0
            log(f"{vname}: done in {info['wall_s']:.1f} s ({eps / 1e6:.2f} M events/s) -> {vdir}")
        runs.append((vname, Results.read(vdir)))

    figs = plot.plot_all(runs, out_dir)
    summary = combined_summary(runs)
    hook = experiment_hook(stem)
    if hook is not None:
        extra_figs, extra_summary = hook(ExperimentContext(
            name=stem, base=base, planned=planned, runs=runs, out_dir=out_dir, quick=quick,
            overrides=list(overrides), seed=seed, fmt=fmt, progress=progress, log=log))
        figs = [*figs, *extra_figs]
        if extra_summary is not None and extra_summary.height > 0:
            summary = pl.concat([summary, extra_summary], how="diagonal_relaxed")
    summary.write_csv(out_dir / "summary.csv")
    md = to_markdown(summary)
    title = f"# {stem}{' (quick)' if quick else ''}\n\n"
    if headline:
        title += f"Headline: {headline}\n\n"
    (out_dir / "summary.md").write_text(title + md, encoding="utf-8")
    if verbose:
        echo(md.rstrip("\n"))
        if headline:
            echo(f"\nheadline: {headline}")
    pub = None
    if published is not None:
        pub = write_published(stem, published, summary, out_dir, quick=quick, headline=headline)
        if published_out is not None:
            published_out.append(pub)
        if verbose:
            echo("\npublished values beside qcnsim's (ratio = qcnsim / published):\n"
                 + to_markdown(pub.drop("source")).rstrip("\n"))
    for f in figs:
        log(f"figure: {f}")
    (out_dir / "reproduce.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not verbose:
        _progress_line("")
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
        echo(short_report(stem, out_dir, n_run, len(planned) - n_run, quick, headline, pub, figs))
    if figures_out is not None:
        figures_out.extend(Path(f) for f in figs)
    return summary
