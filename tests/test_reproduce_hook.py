"""The per-experiment hook of ``reproduce``: ``qcnsim.experiments.<name>.post(ctx)``."""

from __future__ import annotations

import sys
import types

import polars as pl
import pytest
from conftest import SHORT, scenario_path
from qcnsim.reproduce import reproduce
from sweep_helpers import TRIVIAL


def test_hook_gets_runs_and_its_rows_join_the_summary(tmp_path, monkeypatch):
    seen = {}

    def post(ctx):
        seen["variants"] = [name for name, _ in ctx.runs]
        seen["quick"] = ctx.quick
        fig = ctx.out_dir / "extra.png"
        fig.write_bytes(b"png")
        rows = pl.DataFrame({"variant": ["all"], "metric": ["hook_metric"], "value": [1.5],
                             "unit": ["x"], "detail": [""]})
        return [fig], rows

    mod = types.ModuleType("qcnsim.experiments.hw_hotspot_1src")
    mod.post = post
    monkeypatch.setitem(sys.modules, "qcnsim.experiments.hw_hotspot_1src", mod)
    summary = reproduce(str(scenario_path("hw-hotspot-1src")), tmp_path, quick=True,
                        overrides=SHORT[2:], seed=3, log=lambda s: None, echo=lambda s: None)
    assert seen == {"variants": ["hotspot-0.5G", "hotspot-1G", "nic-0.5G", "nic-1G", "nic-hw-0.5G", "nic-hw-1G"]
                    + [f"{s}-gate-{g}-{h}" for s in ("hotspot", "nic", "nic-hw") for g in ("bc", "either")
                       for h in ("0.5G", "1G")], "quick": True}
    row = summary.filter(pl.col("metric") == "hook_metric")
    assert row["value"].to_list() == [1.5] and row["variant"].to_list() == ["all"]
    assert "hook_metric" in (tmp_path / "summary.csv").read_text()


def test_no_hook_module_means_no_hook():
    from qcnsim.reproduce import experiment_hook

    assert experiment_hook("no-such-experiment-xyz") is None


QUICK_FLAG = TRIVIAL + """
[[variants]]
name = "fast"
[[variants]]
name = "slow"
quick = false
set = { "flows.0.rate" = "1Gbps" }
"""


def test_quick_false_variants_run_in_the_full_reproduce_only(tmp_path):
    """A variant with quick = false is left out of reproduce --quick (and said so in the log), and
    runs in the full reproduce; a scenario whose every variant is full-run-only is refused for
    --quick before anything runs."""
    import qcnsim

    scen = tmp_path / "qf.toml"
    scen.write_text(QUICK_FLAG, encoding="utf-8")
    assert [(v["name"], v["quick"]) for v in qcnsim.Scenario.load(scen).variants()] == [
        ("fast", True), ("slow", False)]
    logs = []
    s = reproduce(str(scen), tmp_path / "q", quick=True, log=logs.append, echo=lambda s: None)
    assert sorted(set(s["variant"].to_list())) == ["fast"]
    assert not (tmp_path / "q" / "slow").exists()
    assert any("full-run-only variants slow" in x for x in logs), logs
    s = reproduce(str(scen), tmp_path / "full", log=lambda s: None, echo=lambda s: None)
    assert sorted(set(s["variant"].to_list())) == ["fast", "slow"]
    only_slow = tmp_path / "only_slow.toml"
    only_slow.write_text(QUICK_FLAG.replace('name = "fast"', 'name = "fast"\nquick = false'), encoding="utf-8")
    with pytest.raises(qcnsim.ScenarioError) as ei:
        reproduce(str(only_slow), tmp_path / "none", quick=True, log=lambda s: None, echo=lambda s: None)
    assert ei.value.path == "variants.0.quick" and not (tmp_path / "none").exists()


def test_headline_goes_into_summary_published_and_report(tmp_path, monkeypatch):
    """An experiment module's HEADLINE (which variants carry the headline result, and why) is
    written under the title of summary.md and published.md and shown in the --all report; a
    HEADLINE that is not a non-empty string fails before anything runs."""
    from qcnsim.report import reproduce_all

    d = tmp_path / "scen"
    d.mkdir()
    (d / "tiny.toml").write_text(TRIVIAL, encoding="utf-8")
    monkeypatch.setenv("QCNSIM_SCENARIOS", str(d))
    mod = types.ModuleType("qcnsim.experiments.tiny")
    mod.HEADLINE = "the base run <b>, because it is the only one"
    mod.PUBLISHED = [dict(metric="nothing_measured", variant=None, value=1.0, unit="B",
                          source="test: 'a quote'")]
    monkeypatch.setitem(sys.modules, "qcnsim.experiments.tiny", mod)
    echoed = []
    reproduce("tiny", tmp_path / "one", log=lambda s: None, echo=echoed.append)
    for f in ("summary.md", "published.md"):
        lines = (tmp_path / "one" / f).read_text(encoding="utf-8").splitlines()
        assert lines[2] == "Headline: the base run <b>, because it is the only one", (f, lines[:4])
    assert any(e.startswith("\nheadline: the base run") for e in echoed)
    path, _ = reproduce_all(tmp_path / "all", names=["tiny"], log=lambda s: None, echo=lambda s: None)
    assert "<b>Headline:</b> the base run &lt;b&gt;, because it is the only one" in path.read_text(encoding="utf-8")
    mod.HEADLINE = ""
    with pytest.raises(ValueError, match="HEADLINE: expected a non-empty string"):
        reproduce("tiny", tmp_path / "bad", log=lambda s: None, echo=lambda s: None)
    assert not (tmp_path / "bad").exists()
