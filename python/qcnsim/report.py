"""``qcnsim reproduce --all``: run every reference experiment and write one self-contained HTML
report (``report.html``: figures embedded as base64 PNG, inline CSS, no external assets, no
JavaScript).

The report opens with a one-screen overview: per experiment what it shows (the first sentence of
``meta.description``), its headline numbers beside the study's (the experiment module's
``PUBLISHED`` entries matched against its summary by
:func:`qcnsim.reproduce.published_table`) and a verdict
(ran / failed; close to or deviating from the published values). Then, per experiment, its own
figures with captions (the module's ``CAPTIONS``) and its own tables (``REPORT_TABLES``), with
the generic figures (throughput, queue, CR, TR of every variant), the setup, the
interpretations, long tables and the runs folded into
``<details>`` sections; then the run metadata (qcnsim version, Python, platform, CPU, start time,
wall times). Each figure is embedded once.

It is resumable like ``reproduce``: a variant already complete in ``OUT/<experiment>/<variant>``
with the same overrides and seed is not run again (the report says "reused"). An experiment that
fails is reported with its error and the others still run.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import os
import platform
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import polars as pl

from ._errors import ScenarioError
from .outputs import check_reproduce_dir, mark_reproduce_dir
from .results import RUN_JSON

PathLike = Union[str, "os.PathLike[str]"]
REPORT = "report.html"

_MARKER = re.compile(r"^\s*(?:\*\*)?\[interpretation\](?:\*\*)?:?\s*", re.IGNORECASE)
_ARRAY_HEADER = re.compile(r"^\[\[\s*([^\[\]]+?)\s*\]\]$")
_TABLE_HEADER = re.compile(r"^\[\s*([^\[\]]+?)\s*\]$")


def _split_comment(line: str) -> Tuple[str, str]:
    """(code, comment) of one TOML line: the first ``#`` outside a quoted string starts the comment."""
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i], line[i + 1:]
        i += 1
    return line, ""


def _unquote_key(k: str) -> str:
    k = k.strip()
    if len(k) >= 2 and k[0] == k[-1] and k[0] in "\"'":
        return k[1:-1]
    return ".".join(part.strip().strip("\"'") for part in k.split("."))


def interpretations(text: str) -> List[Dict[str, str]]:
    """The interpretation choices marked in a scenario file's comments.

    A comment whose text *starts* with ``[interpretation]`` marks one (``**[interpretation]**``
    and a trailing colon are accepted too). On a ``key = value`` line it applies to that field; on
    a line of its own it applies to the ``key = value`` line right below it, or, when none
    follows, to the enclosing table. Returns ``[{"field", "value", "note"}]`` in file order, with
    the field as a dotted path (``schedule.0.at``: entries of ``[[tables]]`` are numbered)."""
    out: List[Dict[str, str]] = []
    section = ""
    counts: Dict[str, int] = {}
    waiting: Optional[str] = None  # note of a comment-only marker line, waiting for its key line
    for line in text.splitlines():
        code, comment = _split_comment(line)
        code = code.strip()
        m = _MARKER.match(comment) if comment else None
        note = comment[m.end():].strip() if m else None
        if not code:
            if waiting is not None and note is None and comment.strip():
                waiting = f"{waiting} {comment.strip()}"  # a continued comment
                continue
            if waiting is not None:
                out.append({"field": section, "value": "", "note": waiting})
                waiting = None
            if note is not None:
                waiting = note
            continue
        header = _ARRAY_HEADER.match(code) or _TABLE_HEADER.match(code)
        if header is not None:
            if waiting is not None:
                out.append({"field": section, "value": "", "note": waiting})
                waiting = None
            name = _unquote_key(header.group(1))
            if code.startswith("[["):
                idx = counts.get(name, 0)
                counts[name] = idx + 1
                section = f"{name}.{idx}"
            else:
                section = name
            if note is not None:
                out.append({"field": section, "value": "", "note": note})
            continue
        key, eq, value = code.partition("=")
        fld = (f"{section}.{_unquote_key(key)}" if section else _unquote_key(key)) if eq else section
        if waiting is not None:
            out.append({"field": fld, "value": value.strip(), "note": waiting})
            waiting = None
        if note is not None:
            out.append({"field": fld, "value": value.strip(), "note": note})
    if waiting is not None:
        out.append({"field": section, "value": "", "note": waiting})
    return out


#: Relative tolerance within which a qcnsim value counts as close to the published one. A reading
#: aid, not a validation criterion: the ratio is always shown.
DEFAULT_TOLERANCE = 0.25

#: Captions of the figures every experiment gets (``qcnsim.plot.plot_all``).
GENERIC_CAPTIONS = {
    "throughput.png": "Throughput at each port's output, per throughput bin, every variant on one axis.",
    "queue.png": "Queue length of each sampled port over time; the dashed line is the set point Qeq.",
    "cr.png": "Current rate CR of each reaction point over time.",
    "tr.png": "Target rate TR of each reaction point over time.",
}
#: Tables longer than this are folded.
FOLD_ROWS = 12


def _module(name: str):
    import importlib

    try:
        return importlib.import_module("qcnsim.experiments." + re.sub(r"[^0-9a-zA-Z_]", "_", name))
    except ModuleNotFoundError:
        return None


def published_rows(name: str, summary: Optional[pl.DataFrame],
                   published: Optional[pl.DataFrame] = None) -> List[Dict[str, Any]]:
    """The rows of the experiment's published table (``published``, as ``reproduce`` made it;
    else :func:`qcnsim.reproduce.published_table` of the module's ``PUBLISHED`` and ``summary``),
    each with a ``verdict``: ``close`` (ratio within :data:`DEFAULT_TOLERANCE` of 1), ``deviates``,
    or ``missing`` (no qcnsim value or no ratio; the table's ``note`` says why)."""
    from .reproduce import experiment_published, published_table

    if published is None:
        entries = experiment_published(name)
        if not entries:
            return []
        published = published_table(entries, summary if summary is not None else pl.DataFrame())
    out = []
    for row in published.iter_rows(named=True):
        ratio = row.get("ratio")
        verdict = "missing" if ratio is None else ("close" if abs(ratio - 1.0) <= DEFAULT_TOLERANCE else "deviates")
        out.append({**row, "verdict": verdict})
    return out


def first_sentence(text: str) -> str:
    text = " ".join(str(text or "").split())
    first = re.split(r"(?<=\.)\s|;\s", text, maxsplit=1)[0].rstrip(".;") if text else ""
    return f"{first}." if first else ""


def experiment_tables(name: str, out_dir: Path) -> List[Tuple[str, pl.DataFrame]]:
    """The tables the experiment module lists in ``REPORT_TABLES`` (``{file name in the
    experiment's output directory: title}``, CSV files its ``post`` wrote), in that order, those
    that exist: the report shows them in the experiment's section after its figures."""
    tables = getattr(_module(name), "REPORT_TABLES", None) or {}
    out = []
    for fname, title in tables.items():
        p = Path(out_dir) / fname
        if p.is_file():
            out.append((str(title), pl.read_csv(p)))
    return out


def caption(name: str, fig: Path) -> str:
    """A figure's caption: the experiment module's ``CAPTIONS[file name]``, else the generic
    caption, else the file name."""
    caps = getattr(_module(name), "CAPTIONS", None) or {}
    return caps.get(fig.name) or GENERIC_CAPTIONS.get(fig.name) or fig.stem.replace("_", " ")


@dataclass
class ExperimentReport:
    name: str
    out_dir: Path
    description: str = ""
    variants: List[Dict[str, Any]] = field(default_factory=list)
    interpretations: List[Dict[str, str]] = field(default_factory=list)
    figures: List[Path] = field(default_factory=list)
    summary: Optional[pl.DataFrame] = None
    published: Optional[pl.DataFrame] = None
    headline: Optional[str] = None
    runs: List[Dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    error: Optional[str] = None


def _run_rows(exp_dir: Path, variants: Sequence[Dict[str, Any]], started: float) -> List[Dict[str, Any]]:
    rows = []
    for v in variants:
        p = exp_dir / v["name"] / RUN_JSON
        try:
            info = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rows.append({"variant": v["name"], "seed": info.get("seed"), "wall_s": info.get("wall_s"),
                     "sim_time_s": info.get("sim_time_s"), "events": info.get("events"),
                     "reused": p.stat().st_mtime < started})
    return rows


def reproduce_all(
    out_dir: PathLike,
    quick: bool = False,
    seed: Optional[int] = None,
    fmt: str = "parquet",
    names: Optional[Sequence[str]] = None,
    progress=None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    echo: Callable[[str], None] = print,
    verbose: bool = True,
) -> Tuple[Path, List[ExperimentReport]]:
    """Run every reference experiment (``names``, default :func:`qcnsim.reproduce.list_experiments`)
    into ``out_dir/<name>/`` and write ``out_dir/report.html``. Returns the report path and the
    per-experiment records (``error`` is set for an experiment that failed). ``verbose``: every
    experiment's log lines through ``log`` as they come; otherwise only a line as each experiment
    starts and ends (each experiment's log is in its ``reproduce.log``)."""
    from .reproduce import experiment_headline, find_scenario, list_experiments, reproduce

    out = Path(out_dir)
    check_reproduce_dir(out, "out_dir")
    mark_reproduce_dir(out, "all")
    names = list(names) if names is not None else list_experiments()
    started_wall = time.time()
    t0 = time.monotonic()
    reports: List[ExperimentReport] = []
    for name in names:
        rep = ExperimentReport(name=name, out_dir=out / name)
        reports.append(rep)
        log(f"== {name}")
        t_exp = time.monotonic()
        started = time.time()
        try:
            sc = find_scenario(name)
            resolved = sc.resolved()
            rep.description = str((resolved.get("meta") or {}).get("description") or "")
            rep.variants = sc.variants() or [{"name": "base", "set": {}, "description": ""}]
            rep.interpretations = interpretations(sc.text)
            rep.headline = experiment_headline(sc.path.stem if sc.path is not None else Path(name).stem)
            figs: List[Path] = []
            pub: List[pl.DataFrame] = []
            rep.summary = reproduce(name, rep.out_dir, quick=quick, seed=seed, fmt=fmt, progress=progress,
                                    log=log, echo=lambda s: None, figures_out=figs, published_out=pub,
                                    verbose=verbose)
            rep.figures = figs
            rep.published = pub[0] if pub else None
        except KeyboardInterrupt:
            raise
        except ScenarioError as e:
            rep.error = f"ScenarioError: {e}"
        except Exception as e:  # noqa: BLE001 - one broken experiment must not hide the others
            rep.error = f"{type(e).__name__}: {e}\n" + "".join(traceback.format_exc(limit=8))
        rep.wall_s = time.monotonic() - t_exp
        rep.runs = _run_rows(rep.out_dir, rep.variants, started)
        log(f"== {name}: {'FAILED' if rep.error else 'ok'} in {rep.wall_s:.1f} s")
    meta = run_metadata(quick=quick, seed=seed, started=started_wall, wall_s=time.monotonic() - t0)
    path = write_report(out / REPORT, reports, meta)
    echo(str(path))
    return path, reports


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_metadata(quick: bool, seed: Optional[int], started: float, wall_s: float) -> Dict[str, str]:
    from ._version import __version__

    return {
        "qcnsim": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": f"{platform.machine()}, {os.cpu_count() or '?'} CPUs, {_cpu_model()}",
        "started (UTC)": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "wall time": f"{wall_s:.1f} s",
        "mode": "quick (meta.quick_duration)" if quick else "full length",
        "seed": "each scenario's meta.seed" if seed is None else str(seed),
        "command": " ".join(["qcnsim", *sys.argv[1:]]) if sys.argv and "qcnsim" in sys.argv[0] else "qcnsim.report",
    }


# -- HTML ------------------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;
padding:0 1em;color:#222;line-height:1.45}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .55em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.err{background:#fee;border:1px solid #c00;padding:.6em;white-space:pre-wrap;font-family:monospace}
.ok{color:#070}.bad{color:#b00}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}code{background:#f5f5f5;padding:0 .2em}
.muted{color:#666;font-size:.9em}details{margin:.5em 0}summary{cursor:pointer;color:#245}
table.overview td{font-size:.85em;padding-top:2px;padding-bottom:2px;line-height:1.3}ul.nums{margin:0;padding-left:1.1em}
h2#overview{margin-top:.8em}h1{margin-top:.5em}
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return _e(v)


def _html_table(df: pl.DataFrame) -> str:
    if df is None or df.height == 0:
        return "<p class='muted'>(no rows)</p>"
    head = "".join(f"<th>{_e(c)}</th>" for c in df.columns)
    body = []
    for row in df.iter_rows():
        cells = "".join(f"<td class='num'>{_num(v)}</td>" if isinstance(v, (int, float)) and not isinstance(v, bool)
                        else f"<td>{_e(v)}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _report_png(path: Path) -> bytes:
    """The PNG bytes to embed for ``path``: the file, or the same image in 256 colours when that
    is smaller (Pillow, which matplotlib requires). Line plots lose nothing visible and the
    report stays a few MB; the PNG files beside the report keep every colour."""
    data = path.read_bytes()
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - matplotlib depends on Pillow
        return data
    try:
        with Image.open(io.BytesIO(data)) as im:
            small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
            buf = io.BytesIO()
            small.save(buf, format="PNG")
    except (OSError, ValueError):
        return data
    out = buf.getvalue()
    return out if len(out) < len(data) else data


def _img(path: Path, cap: str = "") -> str:
    try:
        data = base64.b64encode(_report_png(path)).decode("ascii")
    except OSError as e:
        return f"<p class='bad'>figure {_e(path.name)} unreadable: {_e(e)}</p>"
    cap = cap or path.name
    return (f"<figure><img alt='{_e(cap)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{_e(cap)} <span class='muted'>({_e(path.name)})</span></figcaption></figure>")


def _fold(title: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{_e(title)}</summary>{body}</details>"


def _table_maybe_folded(title: str, df: Optional[pl.DataFrame]) -> str:
    if df is None or df.height == 0:
        return f"<h3>{_e(title)}</h3><p class='muted'>(no rows)</p>"
    if df.height > FOLD_ROWS:
        return _fold(f"{title} ({df.height} rows)", _html_table(df))
    return f"<h3>{_e(title)}</h3>" + _html_table(df)


#: Published numbers per experiment in the overview (the rest are in the experiment's section), so
#: that the overview of every reference experiment fits about one screen.
OVERVIEW_NUMBERS = 2


def _overview(reports: Sequence[ExperimentReport], quick: bool = False) -> str:
    rows = ["<table class='overview'><thead><tr><th>experiment</th><th>what it shows</th>"
            "<th>headline numbers: qcnsim vs the study</th><th>verdict</th></tr></thead><tbody>"]
    for r in reports:
        pub = published_rows(r.name, r.summary, r.published)
        if pub:
            items = []
            for p in pub[:OVERVIEW_NUMBERS]:
                ours = "missing" if p["qcnsim"] is None else _num(p["qcnsim"])
                ratio = "" if p["ratio"] is None else f" (×{p['ratio']:.2f})"
                cls = {"close": "ok", "deviates": "bad"}.get(p["verdict"], "muted")
                var = f" [{_e(p['variant'])}]" if p.get("variant") else ""
                items.append(f"<li><span class='{cls}'>{_e(p['metric'])}{var}: {ours} vs {_num(p['published'])} "
                             f"{_e(p['unit'])}{ratio}</span></li>")
            if len(pub) > OVERVIEW_NUMBERS:
                items.append(f"<li class='muted'><a href='#{_slug(r.name)}'>{len(pub) - OVERVIEW_NUMBERS} more</a>"
                             " in its section</li>")
            numbers = f"<ul class='nums'>{''.join(items)}</ul>"
        else:
            numbers = "<span class='muted'>no published numbers recorded for this experiment</span>"
        if r.error:
            verdict = "<span class='bad'>failed</span>"
        else:
            counts = {v: sum(1 for p in pub if p["verdict"] == v) for v in ("close", "deviates", "missing")}
            bits = [f"{n} {v}" for v, n in counts.items() if n]
            verdict = "<span class='ok'>ran</span>" + (f"; {', '.join(bits)}" if bits else "")
        rows.append(f"<tr><td><a href='#{_slug(r.name)}'>{_e(r.name)}</a></td>"
                    f"<td>{_e(first_sentence(r.description))}</td><td>{numbers}</td><td>{verdict}</td></tr>")
    rows.append("</tbody></table>")
    rows.append(f"<p class='muted'>“close”: within ±{DEFAULT_TOLERANCE:.0%} of the published value, a reading aid; "
                "the ratio is qcnsim/published. Sources are quoted in each experiment's section."
                + (" Quick runs: where shorter than the full run, the numbers are not comparable." if quick else "")
                + "</p>")
    return "".join(rows)


def _slug(name: str) -> str:
    return "x-" + re.sub(r"[^0-9a-zA-Z_-]", "-", name)


def quick_mode(meta: Dict[str, str]) -> bool:
    return str(meta.get("mode", "")).startswith("quick")


def render(reports: Sequence[ExperimentReport], meta: Dict[str, str]) -> str:
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>qcnsim reproduction report</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>qcnsim reproduction report</h1>",
             f"<p class='muted'>{len(reports)} experiment(s), "
             f"{sum(1 for r in reports if r.error is None)} ran, {sum(1 for r in reports if r.error)} failed; "
             f"{_e(meta.get('mode', ''))}; <a href='#run-metadata'>run metadata</a>.</p>",
             "<h2 id='overview'>Overview</h2>", _overview(reports, quick_mode(meta))]
    generic = set(GENERIC_CAPTIONS)
    for r in reports:
        parts.append(f"<h2 id='{_slug(r.name)}'>{_e(r.name)}</h2>")
        if r.description:
            parts.append(f"<p>{_e(r.description)}</p>")
        if r.headline:
            parts.append(f"<p><b>Headline:</b> {_e(r.headline)}</p>")
        if r.error:
            parts.append(f"<div class='err'>{_e(r.error)}</div>")
        pub = published_rows(r.name, r.summary, r.published)
        if pub:
            parts.append("<h3>Published values beside qcnsim's</h3><p class='muted'>ratio = qcnsim / published"
                         + ("; quick runs: where shorter than the full run, not comparable" if quick_mode(meta)
                            else "") + ".</p>")
            parts.append(_html_table(pl.DataFrame(
                [{k: p.get(k) for k in ("metric", "variant", "published", "qcnsim", "unit", "ratio", "verdict", "note",
                                        "source")} for p in pub],
                schema={"metric": pl.Utf8, "variant": pl.Utf8, "published": pl.Float64, "qcnsim": pl.Float64,
                        "unit": pl.Utf8, "ratio": pl.Float64, "verdict": pl.Utf8, "note": pl.Utf8,
                        "source": pl.Utf8})))
        seen = set()
        figs = []
        for f in r.figures:  # each figure once, even if two hooks return the same path
            key = Path(f).resolve()
            if key not in seen:
                seen.add(key)
                figs.append(Path(f))
        own = [f for f in figs if f.name not in generic]
        common = [f for f in figs if f.name in generic]
        if own:
            parts.append("<h3>Figures</h3>")
            parts.extend(_img(f, caption(r.name, f)) for f in own)
        for title, df in experiment_tables(r.name, r.out_dir):
            parts.append(f"<h3>{_e(title)}</h3>" + _html_table(df) if df.height <= 4 * FOLD_ROWS
                         else _fold(f"{title} ({df.height} rows)", _html_table(df)))
        if common:
            parts.append(_fold(f"Generic figures ({len(common)}: throughput, queues and rates of every variant)",
                               "".join(_img(f, caption(r.name, f)) for f in common), open_=not own))
        if r.variants:
            rows = ["<table><thead><tr><th>variant</th><th>description</th><th>settings</th></tr></thead><tbody>"]
            for v in r.variants:
                sets = ", ".join(f"{k} = {json.dumps(val)}" for k, val in (v.get("set") or {}).items())
                desc = v.get("description", "")
                if not v.get("quick", True):
                    desc = f"{desc} (full run only: --quick leaves it out)".strip()
                rows.append(f"<tr><td>{_e(v['name'])}</td><td>{_e(desc)}</td>"
                            f"<td><code>{_e(sets or '(base scenario)')}</code></td></tr>")
            rows.append("</tbody></table>")
            parts.append(_fold(f"Setup ({len(r.variants)} variant(s))", "".join(rows)))
        if r.interpretations:
            parts.append(_fold(f"Interpretations ({len(r.interpretations)})", _html_table(pl.DataFrame(
                r.interpretations, schema={"field": pl.Utf8, "value": pl.Utf8, "note": pl.Utf8}))))
        else:
            parts.append("<p class='muted'>No interpretations marked in the scenario file.</p>")
        if r.summary is not None:
            parts.append(_table_maybe_folded("Summary", r.summary))
        if r.runs:
            parts.append(_fold(f"Runs ({len(r.runs)})", _html_table(pl.DataFrame(r.runs))))
        parts.append(f"<p class='muted'>results: <code>{_e(r.name)}/</code>; wall time {r.wall_s:.1f} s</p>")
    parts.append("<h2 id='run-metadata'>Run metadata</h2><table><tbody>")
    for k, v in meta.items():
        parts.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
    parts.append("</tbody></table></body></html>\n")
    return "".join(parts)


def write_report(path: PathLike, reports: Sequence[ExperimentReport], meta: Dict[str, str]) -> Path:
    """Write the report atomically (temporary file, then rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(render(reports, meta), encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    return path
