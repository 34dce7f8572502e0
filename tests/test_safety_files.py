"""File-system errors and special files (issue 10): a message, never a Python traceback or a hang;
``--debug`` / ``QCNSIM_DEBUG=1`` show the traceback."""

from __future__ import annotations

import os

import pytest
import qcnsim
from conftest import run_cli, scenario_path
from qcnsim import cli


class _R:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


def incli(capsys, *args):
    code = cli.main([str(a) for a in args])
    got = capsys.readouterr()
    return _R(code, got.out, got.err)


def _message(r, status, *needles):
    assert r.returncode == status, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: "), r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def test_special_files_are_refused_without_reading_them():
    r = run_cli("validate", "/dev/zero", timeout=20)
    _message(r, 2, "/dev/zero", "not a regular file")
    with pytest.raises(qcnsim.ScenarioError, match="not a regular file"):
        qcnsim.Scenario.load("/dev/zero")


def test_a_fifo_does_not_block(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    r = run_cli("validate", fifo, timeout=20)
    _message(r, 2, "not a regular file")


def test_a_directory_and_a_missing_file(tmp_path, capsys):
    _message(incli(capsys, "validate", tmp_path), 2, "is a directory")
    _message(incli(capsys, "validate", tmp_path / "nope.toml"), 2, "not found")


def test_non_utf8_is_a_scenario_error(tmp_path, capsys):
    p = tmp_path / "latin1.toml"
    p.write_bytes(scenario_path("hw-hotspot-1src").read_bytes() + "# caf\xe9\n".encode("latin-1"))
    with pytest.raises(qcnsim.ScenarioError, match="not a UTF-8 text file") as ei:
        qcnsim.Scenario.load(p)
    assert "0xe9" in str(ei.value)
    with pytest.raises(qcnsim.ScenarioError, match="UTF-8"):
        qcnsim.run(p)
    _message(incli(capsys, "validate", p), 2, "UTF-8")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path, capsys):
    p = tmp_path / "secret.toml"
    p.write_text(scenario_path("hw-hotspot-1src").read_text())
    p.chmod(0)
    _message(incli(capsys, "validate", p), 1, "secret.toml", "Permission denied")


def test_debug_shows_the_traceback(monkeypatch, capsys):
    args = ("validate", "/dev/zero")
    with pytest.raises(qcnsim.ScenarioError):
        cli.main(["--debug", *args])
    monkeypatch.setenv("QCNSIM_DEBUG", "1")
    with pytest.raises(qcnsim.ScenarioError):
        cli.main(list(args))
    monkeypatch.setenv("QCNSIM_DEBUG", "0")
    _message(incli(capsys, *args), 2)


def test_unexpected_errors_are_a_message(monkeypatch, capsys):
    def boom(a):
        raise RuntimeError("something broke")

    monkeypatch.setitem(cli.COMMANDS, "validate", boom)
    r = incli(capsys, "validate", "x.toml")
    _message(r, 1, "unexpected error: RuntimeError: something broke", "--debug")


def test_broken_pipe_on_stdout_is_quiet():
    import subprocess
    import sys

    p = subprocess.Popen(f"{sys.executable} -m qcnsim validate --resolved {scenario_path('og-stability')} | head -c 10",
                         shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
