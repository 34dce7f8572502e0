"""`qcnsim reproduce --all`: interpretation markers, the self-contained HTML report, resumability,
a failing experiment. The CLI test runs every shipped experiment with --quick (as CI does)."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli
from qcnsim import reproduce as reproduce_mod
from qcnsim.report import interpretations, reproduce_all
from sweep_helpers import TRIVIAL

MARKED = '''# Header comment. Every [interpretation] below is a visible parameter (not a marker).
[meta]
name = "x"                # plain comment
duration = "4s"           # [interpretation] run 4 s
description = "a # inside a string"  # **[interpretation]** bold marker

[defaults]
# [interpretation] standalone, applies to the key below
#   and continues on this line
link_delay = "0.5us"

[[flows]]
name = "f0"
[[flows]]
name = "f1"
rate = "1Gbps"            # [Interpretation]: case and colon
"cc.x" = 1                # [interpretation] quoted key

[cc.qcn]
# [interpretation] about the table as a whole

[metrics]
q = 1 # see [interpretation] elsewhere (not a marker: it does not start the comment)
'''


def test_interpretation_markers():
    assert interpretations(MARKED) == [
        {"field": "meta.duration", "value": '"4s"', "note": "run 4 s"},
        {"field": "meta.description", "value": '"a # inside a string"', "note": "bold marker"},
        {"field": "defaults.link_delay", "value": '"0.5us"',
         "note": "standalone, applies to the key below and continues on this line"},
        {"field": "flows.1.rate", "value": '"1Gbps"', "note": "case and colon"},
        {"field": "flows.1.cc.x", "value": "1", "note": "quoted key"},
        {"field": "cc.qcn", "value": "", "note": "about the table as a whole"},
    ]


def test_failed_experiment_is_reported_and_the_others_run(tmp_path, monkeypatch):
    d = tmp_path / "scen"
    d.mkdir()
    (d / "tiny.toml").write_text(TRIVIAL.replace('duration = "1ms"', 'duration = "1ms"  # [interpretation] 1 ms'),
                                 encoding="utf-8")
    (d / "broken.toml").write_text(TRIVIAL.replace('rate = "5Gbps"', 'rate = "5Gbit"'), encoding="utf-8")
    monkeypatch.setenv("QCNSIM_SCENARIOS", str(d))
    path, reports = reproduce_all(tmp_path / "out", quick=True, names=["broken", "tiny"], log=lambda s: None,
                                  echo=lambda s: None)
    by = {r.name: r for r in reports}
    assert "flows.0.rate" in by["broken"].error and by["tiny"].error is None
    assert by["tiny"].summary is not None and by["tiny"].summary.height > 0
    html = path.read_text(encoding="utf-8")
    assert "5Gbit" in html and "1 ms" in html and "1 ok, 1 failed" in html
    assert reproduce_mod.list_experiments()  # the env dir does not hide the built-in scenarios
    assert [r["reused"] for r in by["tiny"].runs] == [False]

    # resumable: a second call reuses the finished run and rebuilds the report
    logs = []
    path, reports = reproduce_all(tmp_path / "out", quick=True, names=["tiny"], log=logs.append,
                                  echo=lambda s: None)
    assert not [x for x in logs if "running" in x] and any("already done" in x for x in logs)
    assert [r["reused"] for r in reports[0].runs] == [True]
    assert "1 ok, 0 failed" in path.read_text(encoding="utf-8")


def test_reproduce_all_quick_cli(tmp_path):
    out = tmp_path / "all"
    r = run_cli("reproduce", "--all", "--quick", "--out", out)
    assert r.returncode == 0, r.stderr[-3000:]
    html = (out / "report.html").read_text(encoding="utf-8")
    names = reproduce_mod.list_experiments()
    assert names
    for n in names:
        assert f"<h2 id='x-{n}'>{n}</h2>" in html
        assert (out / n / "summary.csv").is_file()
    # self-contained: every image is embedded, nothing is loaded from elsewhere
    srcs = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", html)
    assert srcs and all(s.startswith(("data:image/png;base64,", "#")) for s in srcs), srcs[:5]
    assert html.count("<img ") >= len(names)
    assert "delivered_bytes" in html and "Run metadata" in html and "qcnsim" in html
    assert "hotspot starts at 1 s" in html or "hw-hotspot-1src" not in names
    assert f"{len(names)} ok, 0 failed" in html


@pytest.mark.parametrize("args,needle", [
    (["reproduce", "--all", "hw-4rp"], "not both"),
    (["reproduce", "--all", "--set", "meta.seed=2"], "--set is not allowed"),
])
def test_reproduce_all_bad_input(capsys, tmp_path, args, needle):
    from qcnsim.cli import main

    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert needle in capsys.readouterr().err
