"""`qcnsim reproduce --all`: interpretation markers, the self-contained HTML report, resumability,
a failing experiment. The CLI test runs every shipped experiment with --quick (as CI does)."""

from __future__ import annotations

import re

import polars as pl
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
    assert "5Gbit" in html and "1 ms" in html and "1 ran, 1 failed" in html
    assert reproduce_mod.list_experiments()  # the env dir does not hide the built-in scenarios
    assert [r["reused"] for r in by["tiny"].runs] == [False]

    # resumable: a second call reuses the finished run and rebuilds the report
    logs = []
    path, reports = reproduce_all(tmp_path / "out", quick=True, names=["tiny"], log=logs.append,
                                  echo=lambda s: None)
    assert not [x for x in logs if "running" in x] and any("already done" in x for x in logs)
    assert [r["reused"] for r in reports[0].runs] == [True]
    assert "1 ran, 0 failed" in path.read_text(encoding="utf-8")


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
    assert f"{len(names)} ran, 0 failed" in html
    # short by default (--verbose prints every experiment's log): a line as each starts and ends,
    # the variants' lines in each experiment's reproduce.log
    err = r.stderr.splitlines()
    assert not [x for x in err if "running" in x], err[:5]
    assert all(f"== {n}: ok in" in r.stderr for n in names)
    assert "running" in (out / names[0] / "reproduce.log").read_text(encoding="utf-8")
    # The overview comes first, then the experiments; every figure is embedded once.
    assert html.index("id='overview'") < html.index(f"<h2 id='x-{names[0]}'>")
    imgs = re.findall(r"src='data:image/png;base64,([^']+)'", html)
    assert len(imgs) == len(set(imgs))
    # the report grows with its experiments; what must not grow is each one's weight (about
    # 0.6 MB each measured: 7.9 MB for 13 on 2026-11-24, 12.5 MB for 21 on 2026-11-27)
    size = (out / "report.html").stat().st_size
    per = size / len(names)
    assert per < 700_000, f"report.html is {size / 1e6:.1f} MB, {per / 1e3:.0f} KB per experiment"


@pytest.mark.parametrize("args,needle", [
    (["reproduce", "--all", "hw-4rp"], "not both"),
    (["reproduce", "--all", "--set", "meta.seed=2"], "--set is not allowed"),
])
def test_reproduce_all_bad_input(capsys, tmp_path, args, needle):
    from qcnsim.cli import main

    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert needle in capsys.readouterr().err


def test_report_overview_published_captions_and_folding(tmp_path, monkeypatch):
    """The overview lists each experiment with its published numbers beside qcnsim's and a
    verdict; figures get the module's captions; the generic figures and long tables are folded."""
    import sys
    import types

    from qcnsim import plot
    from qcnsim.report import ExperimentReport, published_rows, render

    mod = types.ModuleType("qcnsim.experiments.fake_exp")
    mod.PUBLISHED = [
        dict(metric="recovery_time", variant="a", value=0.010, unit="s", source="study: 'about 10 ms'"),
        dict(metric="recovery_time", variant="b", value=0.010, unit="s", source="study: 'about 10 ms'"),
        dict(metric="max_queue", variant=None, value=5.0, unit="KB", source="study: 'five'"),
    ]
    mod.CAPTIONS = {"special.png": "The special figure of this experiment."}
    monkeypatch.setitem(sys.modules, "qcnsim.experiments.fake_exp", mod)
    summary = pl.DataFrame({"variant": ["a", "b"] + ["a"] * 30, "metric": ["recovery_time"] * 2 + ["x"] * 30,
                            "value": [0.011, 0.030] + [1.0] * 30, "unit": ["s"] * 32, "detail": [""] * 32})
    rows = published_rows("fake-exp", summary)
    assert [r["verdict"] for r in rows] == ["close", "deviates", "missing"]
    assert rows[0]["ratio"] == pytest.approx(1.1) and rows[2]["qcnsim"] is None

    import matplotlib.figure

    figs = []
    for name in ("special.png", "queue.png"):
        fig = matplotlib.figure.Figure()
        fig.subplots().plot([0, 1], [0, 1 if name == "queue.png" else 2])
        figs.append(plot.save(fig, tmp_path / name))
    rep = ExperimentReport(name="fake-exp", out_dir=tmp_path, description="Shows a thing. More words.",
                           figures=[*figs, figs[0]], summary=summary)
    html = render([rep], {"qcnsim": "test"})
    overview = html[html.index("id='overview'"):html.index("<h2 id='x-fake-exp'>")]
    assert "Shows a thing." in overview and "More words" not in overview
    assert "0.011 vs 0.01 s (×1.10)" in overview and "1 close, 1 deviates, 1 missing" in overview
    # the overview shows the first two numbers and links the rest (it must fit one screen)
    assert "max_queue" not in overview and "1 more</a> in its section" in overview
    assert "max_queue" in html[html.index("<h2 id='x-fake-exp'>"):]
    assert "The special figure of this experiment." in html
    assert html.count("<img ") == 2  # special.png twice in the list, embedded once
    folded = html[html.index("<details><summary>Generic figures"):]
    assert "queue.png" in folded[:folded.index("</details>")]
    assert "<details><summary>Summary (32 rows)</summary>" in html


def test_report_in_headless_chromium(tmp_path):
    """scripts/check_report.py opens a report in headless Chromium: it renders, the overview is in
    the DOM and ends within the first screen. Skipped where Chromium is not installed."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from qcnsim.report import ExperimentReport, render

    if not any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")):
        pytest.skip("no Chromium (apt-get install chromium)")
    summary = pl.DataFrame({"variant": ["a"] * 40, "metric": ["m"] * 40, "value": [1.0] * 40,
                            "unit": ["s"] * 40, "detail": [""] * 40})
    reps = [ExperimentReport(name=f"exp-{i}", out_dir=tmp_path, description=f"Experiment {i} shows a thing.",
                             summary=summary) for i in range(8)]
    path = tmp_path / "report.html"
    path.write_text(render(reps, {"qcnsim": "test"}), encoding="utf-8")
    script = Path(__file__).resolve().parents[1] / "scripts" / "check_report.py"
    r = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8 experiment section(s)" in r.stdout
    assert (tmp_path / "first-screen.png").read_bytes()[:4] == b"\x89PNG"
