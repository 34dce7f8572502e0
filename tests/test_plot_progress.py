"""Figures and the progress bar, on synthetic results (no simulation needed)."""

from __future__ import annotations

import io

import pytest
import qcnsim
from qcnsim import plot
from qcnsim.reproduce import combined_summary, parse_time_ps, to_markdown
from qcnsim.run import ProgressBar, _want_bar


def _png(p):
    assert p is not None and p.is_file()
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _fig_saved(fig, path):
    from matplotlib.figure import Figure

    assert isinstance(fig, Figure)
    _png(path)
    return fig


def test_plots_several_labelled_runs(tmp_path, fake_results):
    runs = {"standard": fake_results, "nic-fb": fake_results}
    _fig_saved(plot.throughput(runs, tmp_path / "thr.png"), tmp_path / "thr.png")
    _fig_saved(plot.queue(runs, tmp_path / "q.png"), tmp_path / "q.png")
    _fig_saved(plot.rates(runs, tmp_path / "cr.png"), tmp_path / "cr.png")
    _fig_saved(plot.rates([("a", fake_results)], tmp_path / "tr.png", which="tr"), tmp_path / "tr.png")
    made = plot.plot_all(fake_results, tmp_path / "all")
    assert {p.name for p in made} == {"throughput.png", "queue.png", "cr.png", "tr.png"}


def test_plot_returns_figure_without_saving(tmp_path, fake_results):
    """In a notebook: a Figure comes back, nothing is written, and pyplot does not keep it open
    (no duplicate inline display)."""
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    fig = plot.queue({"a": fake_results, "b": fake_results})
    assert fig is not None and [ax.get_title() for ax in fig.axes] == ["a", "b"]  # one panel per run
    assert all(ax.get_lines() for ax in fig.axes)
    assert len(plt.get_fignums()) == before
    assert list(tmp_path.iterdir()) == []
    assert plot.save(fig, tmp_path / "sub" / "q.png") == tmp_path / "sub" / "q.png"
    _png(tmp_path / "sub" / "q.png")
    assert plot.save(None, tmp_path / "none.png") is None


def test_plot_nothing_to_draw(tmp_path):
    empty = qcnsim.Results({}, {"seed": 0})
    assert plot.throughput(empty, tmp_path / "x.png") is None
    assert not (tmp_path / "x.png").exists()


def test_plot_load_runs(tmp_path, fake_results):
    fake_results.write(tmp_path / "a")
    fake_results.write(tmp_path / "b")
    runs = plot.load_runs(tmp_path)
    assert [label for label, _ in runs] == ["a", "b"]
    assert [label for label, _ in plot.load_runs(tmp_path / "a")] == [""]
    with pytest.raises(FileNotFoundError):
        plot.load_runs(tmp_path / "a" / "nonexistent")


def test_combined_summary_and_markdown(fake_results):
    s = combined_summary([("std", fake_results), ("nic", fake_results)])
    assert s.columns[0] == "variant"
    assert s.height == 2 * fake_results.summary.height
    md = to_markdown(s)
    assert md.splitlines()[0].startswith("| variant | metric | value | unit | detail |")
    assert "recovery_time" in md


def test_progress_bar_is_silent_at_first_then_shows_eta():
    now = [0.0]
    buf = io.StringIO()
    bar = ProgressBar(label="x", stream=buf, delay=2.0, clock=lambda: now[0])
    now[0] = 1.0
    bar(0.1)
    assert buf.getvalue() == ""
    now[0] = 4.0
    bar(0.5)
    out = buf.getvalue()
    assert " 50.0%" in out and "ETA" in out and "4s" in out  # 4 s elapsed for half -> 4 s left
    bar.close()
    assert buf.getvalue().endswith("\n")


def test_progress_bar_short_run_prints_nothing():
    buf = io.StringIO()
    bar = ProgressBar(stream=buf, delay=2.0, clock=lambda: 0.5)
    bar(1.0)
    bar.close()
    assert buf.getvalue() == ""


def test_want_bar(monkeypatch):
    assert _want_bar(True) is True
    assert _want_bar(False) is False
    monkeypatch.setenv("QCNSIM_PROGRESS", "1")
    assert _want_bar(None) is True
    monkeypatch.setenv("QCNSIM_PROGRESS", "never")
    assert _want_bar(None) is False


def test_run_passes_progress_and_seed_to_core(monkeypatch):
    """The Python run() wrapper with the core replaced by a stub (plumbing only)."""
    from conftest import fake_core_output

    seen = {}

    def fake_run(text, overrides, seed, progress):
        seen.update(text=text, overrides=overrides, seed=seed)
        for f in (0.0, 0.5, 1.0):
            progress(f)
        return fake_core_output(seed=seed)

    monkeypatch.setattr(qcnsim._core, "run", fake_run)
    monkeypatch.setattr(qcnsim._core, "validate", lambda t, o: '{"meta": {"name": "stub"}}')
    fr = []
    sc = qcnsim.Scenario.from_text("[meta]\n").with_overrides(["a.b=1"])
    res = qcnsim.run(sc, seed=7, progress=fr.append)
    assert fr == [0.0, 0.5, 1.0]
    assert seen == {"text": "[meta]\n", "overrides": ["a.b=1"], "seed": 7}
    assert res.seed == 7 and res.run_info["overrides"] == ["a.b=1"]


def test_quick_duration():
    from qcnsim.reproduce import quick_duration

    assert quick_duration({"meta": {"duration": "4s", "quick_duration": "1s"}}) == "1s"
    assert quick_duration({"meta": {"duration": "4s", "quick_duration": "10s"}}) == "4s"  # min
    assert quick_duration({"meta": {"duration": "4s"}}) == f"{4 * 10**11}ps"  # a tenth
    with pytest.raises(qcnsim.ScenarioError):
        quick_duration({"meta": {}})


def test_parse_time_ps():
    assert parse_time_ps("4s") == 4 * 10**12
    assert parse_time_ps("0.5us") == 500_000
    assert parse_time_ps("10ms") == 10**10
    assert parse_time_ps(123) == 123
    with pytest.raises(ValueError):
        parse_time_ps("fast")


def test_panel_draws_few_series_and_summarises_the_rest():
    """At most MAX_LINES series per panel; beyond that SHOWN of them plus the mean and the
    min-max band of all, computed at each sample time."""
    import matplotlib.pyplot as plt
    import polars as pl

    n, t = 30, [0, 10, 20]
    df = pl.DataFrame({"t_ps": [x for _ in range(n) for x in t],
                       "flow": [f"f{k}" for k in range(n) for _ in t],
                       "cr_bps": [float(k * 10 + j) for k in range(n) for j in range(len(t))]})
    keys = [f"f{k}" for k in range(n)]
    colors = {k: "C0" for k in keys}
    fig, ax = plt.subplots()
    drawn = plot._panel(ax, df, "flow", "cr_bps", keys, colors, 1.0, 1.0, step=False)
    lines = ax.get_lines()
    assert drawn == len(lines) == plot.SHOWN + 1
    mean = lines[-1]
    assert mean.get_label() == f"all {n}: mean"
    assert list(mean.get_ydata()) == [sum(k * 10 + j for k in range(n)) / n for j in range(3)]
    assert len(ax.collections) == 1  # the min-max band
    plt.close(fig)
    few = df.filter(pl.col("flow").is_in(keys[:plot.MAX_LINES]))
    fig, ax = plt.subplots()
    assert plot._panel(ax, few, "flow", "cr_bps", keys, colors, 1.0, 1.0, step=True) == plot.MAX_LINES
    assert not ax.collections
    plt.close(fig)


@pytest.mark.parametrize("n,grid", [(1, (1, 1)), (2, (2, 1)), (3, (1, 3)), (4, (2, 3)), (18, (6, 3))])
def test_one_panel_per_run(n, grid):
    assert plot._grid(n) == grid


def test_shared_axis_spans_every_panel(fake_results):
    """The panels share the y axis: it spans the highest panel, wherever that panel is (the
    axis used to freeze at the first panel's range and cut the peaks of the others)."""
    import polars as pl

    q = fake_results.tables["queue_samples"]
    low = qcnsim.Results({"queue_samples": q}, {"seed": 0})
    high = qcnsim.Results({"queue_samples": q.with_columns(pl.col("qlen_bytes") * 10)}, {"seed": 0})
    peak_kb = float(q["qlen_bytes"].max()) * 10 / 1e3
    for order in (("low", "high"), ("high", "low")):
        runs = {"low": low, "high": high}
        fig = plot.queue({k: runs[k] for k in order})
        for ax in fig.axes:
            lo, hi = ax.get_ylim()
            assert lo == 0 and hi >= peak_kb
