"""Data safety (issue 10): qcnsim never deletes or overwrites a file it did not write, checks every
output path before it simulates, and cleans up its temporary directories."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import qcnsim
from conftest import SHORT, scenario_path
from qcnsim import cli, outputs

SETS = [x for o in SHORT for x in ("--set", o)]


def _user_files(d: Path) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    files = {"scenario.toml": "x = 1\n", "notes.txt": "my notes\n"}
    for n, t in files.items():
        (d / n).write_text(t)
    return files


class _R:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


def incli(capsys, *args):
    """The command line in this process (no interpreter start-up per call)."""
    code = cli.main([str(a) for a in args])
    got = capsys.readouterr()
    return _R(code, got.out, got.err)


def _assert_refused(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


# -- Results.write ---------------------------------------------------------------------------------
def test_write_refuses_a_directory_of_user_files(short_results, tmp_path):
    d = tmp_path / "out"
    files = _user_files(d)
    with pytest.raises(qcnsim.OutputError, match="not empty"):
        short_results.write(d)
    assert {p.name: p.read_text() for p in d.iterdir()} == files


def test_write_new_empty_and_previous(short_results, tmp_path):
    d = tmp_path / "a" / "b"
    short_results.write(d)  # new (parents created)
    assert (d / "run.json").is_file()
    short_results.write(d)  # a previous result is replaced
    e = tmp_path / "empty"
    e.mkdir()
    short_results.write(e, fmt="csv")
    assert (e / "summary.csv").is_file()
    # a previous result plus a file qcnsim did not write: refused, nothing changed
    (d / "notes.txt").write_text("keep")
    before = sorted(p.name for p in d.iterdir())
    with pytest.raises(qcnsim.OutputError, match="notes.txt"):
        short_results.write(d)
    assert sorted(p.name for p in d.iterdir()) == before
    assert (d / "notes.txt").read_text() == "keep"
    assert not [p for p in tmp_path.rglob(".*tmp-*")]


def test_write_refuses_a_file_and_a_path_under_a_file(short_results, tmp_path):
    f = tmp_path / "file"
    f.write_text("mine")
    with pytest.raises(qcnsim.OutputError, match="not a directory"):
        short_results.write(f)
    with pytest.raises(qcnsim.OutputError, match="is a file"):
        short_results.write(f / "sub")
    assert f.read_text() == "mine"


def test_write_refuses_an_unwritable_place(short_results, tmp_path):
    # /proc refuses new entries even to root
    with pytest.raises(qcnsim.OutputError, match="cannot write"):
        short_results.write("/proc/qcnsim-out")
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            with pytest.raises(qcnsim.OutputError, match="cannot write"):
                short_results.write(ro / "out")
        finally:
            ro.chmod(0o755)


def test_figures_drawn_by_plot_are_part_of_the_result(short_results, tmp_path, capsys):
    d = tmp_path / "r"
    short_results.write(d)
    r = incli(capsys, "plot", d)
    assert r.returncode == 0, r.stderr
    pngs = sorted(p.name for p in d.glob("*.png"))
    assert pngs and set(pngs) <= outputs.recorded_figures(d)
    r = incli(capsys, "plot", d)  # its own figures: redrawn
    assert r.returncode == 0, r.stderr
    short_results.write(d)  # replaces the result, figures included (they showed the old tables)
    assert (d / "run.json").is_file()


def test_stale_temporaries_of_a_dead_process_are_removed(short_results, tmp_path):
    d = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.tmp-{dead.pid}-abc"
    stale.mkdir()
    (stale / "summary.parquet").write_bytes(b"truncated")
    old = tmp_path / f".out.old-{dead.pid}-xyz"
    old.mkdir()
    live = tmp_path / f".out.tmp-{os.getppid()}-def"  # a running process: left alone
    live.mkdir()
    legacy = tmp_path / ".out.tmp-q1w2e3"  # older naming, cannot be attributed: reported
    legacy.mkdir()
    other = tmp_path / f".other.tmp-{dead.pid}-abc"  # another target's
    other.mkdir()
    with pytest.warns(UserWarning, match="q1w2e3"):
        short_results.write(d)
    assert not stale.exists() and not old.exists()
    assert live.exists() and legacy.exists() and other.exists()


# -- the command line ------------------------------------------------------------------------------
def test_run_refuses_before_simulating(tmp_path, capsys):
    d = tmp_path / "work"
    files = _user_files(d)
    t0 = time.monotonic()
    r = incli(capsys, "run", scenario_path("hw-hotspot-1src"), "--out", d)  # a 4 s run if it started
    _assert_refused(r, "not empty", "notes.txt", "--out")
    assert time.monotonic() - t0 < 30
    assert {p.name: p.read_text() for p in d.iterdir()} == files
    f = tmp_path / "f.txt"
    f.write_text("x")
    _assert_refused(incli(capsys, "run", scenario_path("hw-hotspot-1src"), "--out", f), "not a directory")
    _assert_refused(incli(capsys, "run", scenario_path("hw-hotspot-1src"), "--out", f / "x"), "is a file")
    _assert_refused(incli(capsys, "run", scenario_path("hw-hotspot-1src"), "--out", "/proc/qcnsim"), "cannot write")
    assert f.read_text() == "x"


def test_rerun_replaces_its_own_result(tmp_path, capsys):
    d = tmp_path / "r"
    for _ in range(2):
        r = incli(capsys, "run", scenario_path("hw-hotspot-1src"), *SETS, "--out", d, "--no-progress")
        assert r.returncode == 0, r.stderr
    assert json.loads((d / "run.json").read_text())["complete"]


def test_sweep_refuses_a_foreign_directory(tmp_path, capsys):
    d = tmp_path / "sw"
    files = _user_files(d)
    r = incli(capsys, "sweep", scenario_path("hw-hotspot-1src"), *SETS, "--out", d, "--sweep", "meta.seed=1,2")
    _assert_refused(r, "sweep.json", "notes.txt")
    assert {p.name: p.read_text() for p in d.iterdir()} == files


def test_reproduce_refuses_a_foreign_directory(tmp_path, capsys):
    d = tmp_path / "rep"
    files = _user_files(d)
    r = incli(capsys, "reproduce", "hw-hotspot-1src", "--quick", *SETS, "--out", d)
    _assert_refused(r, "reproduce", "notes.txt")
    assert {p.name: p.read_text() for p in d.iterdir()} == files


def test_plot_never_overwrites_a_foreign_figure(short_results, tmp_path, capsys):
    d = tmp_path / "r"
    short_results.write(d)
    out = tmp_path / "figs"
    out.mkdir()
    (out / "throughput.png").write_bytes(b"my own figure")
    r = incli(capsys, "plot", d, "--out", out)
    _assert_refused(r, "throughput.png")
    assert (out / "throughput.png").read_bytes() == b"my own figure"
    assert sorted(p.name for p in out.iterdir()) == ["throughput.png"]


def test_sigterm_during_a_run_leaves_no_temporary_directory(tmp_path):
    d = tmp_path / "out"
    env = dict(os.environ, QCNSIM_PROGRESS="0")
    p = subprocess.Popen([sys.executable, "-m", "qcnsim", "run", str(scenario_path("hw-hotspot-1src")),
                          "--set", "meta.duration=60s", "--out", str(d)], env=env,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    assert not d.exists()
    assert not list(tmp_path.iterdir())
