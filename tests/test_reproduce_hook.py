"""The per-experiment hook of ``reproduce``: ``qcnsim.experiments.<name>.post(ctx)``."""

from __future__ import annotations

import sys
import types

import polars as pl
from conftest import SHORT, scenario_path
from qcnsim.reproduce import reproduce


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
    assert seen == {"variants": ["hotspot-0.5G", "hotspot-1G", "nic-0.5G", "nic-1G", "nic-hw-0.5G",
                                 "nic-hw-1G", "nic-hw-gate-bc-0.5G", "nic-hw-gate-bc-1G",
                                 "nic-hw-gate-either-0.5G", "nic-hw-gate-either-1G"], "quick": True}
    row = summary.filter(pl.col("metric") == "hook_metric")
    assert row["value"].to_list() == [1.5] and row["variant"].to_list() == ["all"]
    assert "hook_metric" in (tmp_path / "summary.csv").read_text()


def test_no_hook_module_means_no_hook():
    from qcnsim.reproduce import experiment_hook

    assert experiment_hook("no-such-experiment-xyz") is None
