"""The ``published`` tables of ``reproduce``: an experiment module's ``PUBLISHED`` list matched with
its combined summary, written as ``published.csv`` / ``published.md`` and shown first in the report."""

from __future__ import annotations

import importlib
import math
import re
import sys
import types
from pathlib import Path

import polars as pl
import pytest
from qcnsim.report import reproduce_all
from qcnsim.reproduce import check_published, list_experiments, published_table, reproduce
from sweep_helpers import TRIVIAL

SUMMARY = pl.DataFrame({
    "variant": ["a", "a", "b", "b", "b", None],
    "metric": ["recovery_time", "drops", "recovery_time", "mean_throughput", "mean_throughput", "all_x"],
    "value": [0.04, 12.0, float("nan"), 5e8, 9.5e9, 3.0],
    "unit": ["s", "frames", "s", "bps", "bps", "x"],
    "detail": ["", "", "", "p from 1s to 3s", "p from 3s to 4s", ""],
})


def _e(**kw):
    return dict({"variant": None, "unit": "s", "source": "000: 'quoted'"}, **kw)


# (entry, expected qcnsim value, expected ratio, expected note pattern)
CASES = [
    (_e(metric="recovery_time", variant="a", value=0.02), 0.04, 2.0, "^$"),
    (_e(metric="recovery_time", variant="a", value=40.0, unit="ms"), 40.0, 1.0, "converted from s"),
    (_e(metric="recovery_time", variant="b", value=0.02), None, None, "not a number"),
    (_e(metric="recovery_time", variant="c", value=0.02), None, None, "no matching summary row"),
    (_e(metric="mean_throughput", variant="b", value=1.0, unit="Gbps"), None, None, "2 summary rows match"),
    (_e(metric="mean_throughput", variant="b", value=10.0, unit="Gbps", detail="from 3s"), 9.5, 0.95,
     "converted from bps"),
    (_e(metric="drops", variant="a", value=0.0, unit="frames"), 12.0, None, "published 0"),
    (_e(metric="drops", variant="a", value=3.0, unit="ms"), None, None, "does not convert"),
    (_e(metric="all_x", value=6.0, unit="x"), 3.0, 0.5, "^$"),  # variant None: the row without one
]


@pytest.mark.parametrize("entry,qcnsim,ratio,note", CASES)
def test_published_row(entry, qcnsim, ratio, note):
    t = published_table([entry], SUMMARY)
    assert t.height == 1
    row = t.row(0, named=True)
    assert row["published"] == entry["value"] and row["source"] == entry["source"]
    for key, want in (("qcnsim", qcnsim), ("ratio", ratio)):
        if want is None:
            assert row[key] is None
        else:
            assert math.isclose(row[key], want, rel_tol=1e-12)
    assert re.search(note, row["note"]), row["note"]


def test_variant_none_matches_the_only_variant():
    one = SUMMARY.filter(pl.col("variant") == "a")
    row = published_table([_e(metric="drops", value=6.0, unit="frames")], one).row(0, named=True)
    assert row["qcnsim"] == 12.0 and row["ratio"] == 2.0
    # with several variants and no variant-less row, variant=None matches nothing
    row = published_table([_e(metric="drops", value=6.0, unit="frames")], SUMMARY).row(0, named=True)
    assert row["qcnsim"] is None and "no matching" in row["note"]


@pytest.mark.parametrize("bad,field", [
    ({"metric": "m", "value": 1.0, "unit": "s"}, r"\[0\]\.source"),
    ({"metric": "", "value": 1.0, "unit": "s", "source": "x"}, r"\[0\]\.metric"),
    ({"metric": "m", "value": "1", "unit": "s", "source": "x"}, r"\[0\]\.value"),
    ({"metric": "m", "value": float("nan"), "unit": "s", "source": "x"}, r"\[0\]\.value"),
    ({"metric": "m", "value": 1.0, "unit": "s", "source": "x", "varaint": "a"}, r"unknown key.*varaint"),
    ({"metric": "m", "value": 1.0, "unit": "s", "source": "x", "variant": 3}, r"\[0\]\.variant"),
])
def test_bad_entries_are_named(bad, field):
    with pytest.raises(ValueError, match=field):
        check_published([bad])
    with pytest.raises(ValueError, match="list"):
        check_published({"metric": "m"})


def _study_labels():
    """The study labels of docs/sources.md#study-numbers: the seeds' numbers and the labels of the
    published sources outside the seeds (``CoNEXT16``, ...)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "sources.md").read_text(encoding="utf-8")
    section = text[text.index("### Study numbers"):]
    return set(re.findall(r"^\| (\w+) \|", section, flags=re.M)) - {"number"}


def test_shipped_published_lists_are_valid_and_quote_a_listed_study():
    labels = _study_labels()
    assert {"000", "004", "CoNEXT16"} <= labels
    seen = 0
    for name in list_experiments():
        try:
            mod = importlib.import_module("qcnsim.experiments." + name.replace("-", "_"))
        except ModuleNotFoundError:
            continue
        entries = getattr(mod, "PUBLISHED", None)
        if entries is None:
            continue
        seen += 1
        for e in check_published(entries, name):
            m = re.match(r"^(\w+): '.+'", e["source"])
            assert m and m.group(1) in labels, (name, e["source"])
    assert seen >= 5  # hw-hotspot-1src, hw-4rp, og-hotspot-10src, og-stability, dcqcn-fluid


def test_reproduce_writes_published_and_the_report_shows_it_first(tmp_path, monkeypatch):
    d = tmp_path / "scen"
    d.mkdir()
    (d / "pubtiny.toml").write_text(TRIVIAL, encoding="utf-8")
    monkeypatch.setenv("QCNSIM_SCENARIOS", str(d))
    mod = types.ModuleType("qcnsim.experiments.pubtiny")
    mod.PUBLISHED = [
        dict(metric="generated_frames", variant=None, value=100.0, unit="frames", source="000: 'one'"),
        dict(metric="no_such_metric", variant=None, value=1.0, unit="s", source="000: 'two'"),
    ]
    monkeypatch.setitem(sys.modules, "qcnsim.experiments.pubtiny", mod)
    out: list = []
    summary = reproduce("pubtiny", tmp_path / "one", log=lambda s: None, echo=out.append)
    gen = summary.filter(pl.col("metric") == "generated_frames")["value"][0]
    pub = pl.read_csv(tmp_path / "one" / "published.csv")
    assert pub["metric"].to_list() == ["generated_frames", "no_such_metric"]
    assert pub["qcnsim"][0] == gen and math.isclose(pub["ratio"][0], gen / 100.0)
    assert pub["qcnsim"][1] is None and "no matching" in pub["note"][1]
    md = (tmp_path / "one" / "published.md").read_text(encoding="utf-8")
    assert "000: 'two'" in md and "| missing: no matching summary row |" in md
    assert "published values beside qcnsim's" in out[-1]

    path, reports = reproduce_all(tmp_path / "all", names=["pubtiny"], log=lambda s: None, echo=lambda s: None)
    assert reports[0].published is not None and reports[0].published.height == 2
    html = path.read_text(encoding="utf-8")
    assert html.index("Published values beside qcnsim") < html.index("<summary>Setup (")

    # a broken list fails before anything runs
    mod.PUBLISHED = [dict(metric="m", value=1.0, unit="s")]
    with pytest.raises(ValueError, match="source"):
        reproduce("pubtiny", tmp_path / "two", log=lambda s: None, echo=lambda s: None)
    assert not (tmp_path / "two").exists()


def test_no_published_list_writes_no_table(tmp_path, monkeypatch):
    d = tmp_path / "scen"
    d.mkdir()
    (d / "nopub.toml").write_text(TRIVIAL, encoding="utf-8")
    monkeypatch.setenv("QCNSIM_SCENARIOS", str(d))
    reproduce("nopub", tmp_path / "o", log=lambda s: None, echo=lambda s: None)
    assert not (tmp_path / "o" / "published.csv").exists()
