"""Notebook views: the HTML reprs of Scenario, Results and SweepResults, and the notebook
progress switch."""

from __future__ import annotations

import importlib
import sys

import qcnsim

run_mod = importlib.import_module("qcnsim.run")


def test_scenario_html_shows_topology_parameters_variants(hotspot):
    html = hotspot.with_overrides(["cc.qcn.cp.q_eq=26KB"])._repr_html_()
    assert "Scenario hw-hotspot-1src" in html
    assert "2 hosts" in html and "2 switches" in html and "3 links" in html and "1 flows" in html
    assert "cc.qcn.cp.q_eq" in html and "26KB" in html  # the override is visible in the parameters
    assert "nic-0.5G" in html  # a variant
    assert "<script" not in html


def test_scenario_html_invalid_shows_the_error():
    sc = qcnsim.Scenario.builtin("hw-hotspot-1src").with_overrides(["cc.qcn.cp.q_eq=-3KB"])
    html = sc._repr_html_()
    assert "invalid" in html and "q_eq" in html


def test_results_html_tables_and_summary(short_results):
    html = short_results._repr_html_()
    for name, df in short_results.tables.items():
        assert f">{name}<" in html
        assert f">{df.height:,}<" in html  # its row count
    metric = short_results.summary["metric"][0]
    assert metric in html
    assert "<script" not in html


def test_results_html_escapes_text(fake_results):
    fake_results.run_info["scenario"] = "<b>x</b>"
    html = fake_results._repr_html_()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_sweep_html_axes_progress_metrics(tmp_path, short_hotspot):
    sw = qcnsim.sweep(short_hotspot, {"cc.qcn.cp.q_eq": ["16KB", "33KB"]}, replications=1,
                      out=tmp_path / "sw", executor="local", progress=False, log=lambda s: None)
    html = sw._repr_html_()
    assert "cc.qcn.cp.q_eq" in html and "16KB" in html and "33KB" in html
    assert "2 of 2 point(s) done, 0 failed, 0 pending" in html
    assert sw.metric_names()[0] in html and "ci95_low" in html


def test_builtin_scenario_unknown_name_suggests():
    import pytest

    with pytest.raises(qcnsim.ScenarioError, match="did you mean 'hw-hotspot-1src'"):
        qcnsim.Scenario.builtin("hw-hotspot-1scr")


def test_progress_on_in_a_notebook(monkeypatch):
    class OutStream:  # what ipykernel installs as sys.stderr
        def isatty(self):
            return False

    OutStream.__module__ = "ipykernel.iostream"
    monkeypatch.setitem(sys.modules, "ipykernel", type(sys)("ipykernel"))
    monkeypatch.setattr(sys, "stderr", OutStream())
    monkeypatch.delenv("QCNSIM_PROGRESS", raising=False)
    assert run_mod.in_notebook()
    assert run_mod._want_bar(None)
    assert not run_mod._want_bar(False)
