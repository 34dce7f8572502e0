"""Results: conversion from the core's column payloads, atomic write, read back."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import qcnsim
from qcnsim.results import Results, column_to_series, is_complete


def test_column_payloads_convert_to_typed_series():
    s = column_to_series("a", "i64", np.array([1, -2, 3], dtype="<i8").tobytes())
    assert s.dtype == pl.Int64 and s.to_list() == [1, -2, 3]
    s = column_to_series("b", "f64", np.array([0.5, 1e9], dtype="<f8").tobytes())
    assert s.dtype == pl.Float64 and s.to_list() == [0.5, 1e9]
    s = column_to_series("c", "bool", bytes([0, 1, 1]))
    assert s.dtype == pl.Boolean and s.to_list() == [False, True, True]
    s = column_to_series("d", "str", ["x", "y"])
    assert s.dtype == pl.Utf8 and s.to_list() == ["x", "y"]
    assert column_to_series("e", "i64", b"").len() == 0
    with pytest.raises(ValueError):
        column_to_series("f", "u32", b"")


def test_fake_results_tables_are_polars(fake_results):
    t = fake_results.tables
    assert isinstance(t["port_throughput"], pl.DataFrame)
    assert t["port_throughput"].columns == ["port", "t_ps", "bin_ps", "bytes", "frames", "throughput_bps"]
    assert t["rp_rates"]["rl_active"].dtype == pl.Boolean
    assert t["empty"].height == 0
    assert fake_results.summary.columns == ["metric", "value", "unit", "detail"]
    info = fake_results.run_info
    for k in ("resolved", "seed", "qcnsim_version", "wall_s", "events", "events_per_s", "sim_time_s",
              "frames_forwarded"):
        assert k in info
    assert info["events_per_s"] == pytest.approx(12345 / 0.5)
    assert info["sim_time_s"] == pytest.approx(0.2)
    assert info["qcnsim_version"] == qcnsim.__version__


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_write_read_roundtrip(tmp_path, fake_results, fmt):
    out = fake_results.write(tmp_path / "r", fmt=fmt)
    names = sorted(p.name for p in out.iterdir())
    assert "run.json" in names
    for t in fake_results.tables:
        assert f"{t}.{fmt}" in names
    info = json.loads((out / "run.json").read_text())
    assert info["complete"] is True and info["format"] == fmt and info["seed"] == 1
    assert is_complete(out)
    back = Results.read(out)
    assert back.run_info["seed"] == 1
    assert back.tables["summary"]["metric"].to_list() == ["recovery_time", "mean_throughput"]
    if fmt == "parquet":
        for name, df in fake_results.tables.items():
            assert back.tables[name].equals(df), name
    # only the result dir, no temporary leftovers beside it
    assert [p.name for p in tmp_path.iterdir()] == ["r"]


def test_write_fails_midway_leaves_no_target(tmp_path, fake_results, monkeypatch):
    calls = {"n": 0}
    orig = pl.DataFrame.write_parquet

    def flaky(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full (simulated)")
        return orig(self, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", flaky)
    with pytest.raises(OSError, match="simulated"):
        fake_results.write(tmp_path / "r")
    assert not (tmp_path / "r").exists()
    assert list(tmp_path.iterdir()) == []  # the temporary directory was removed too


def test_write_failure_keeps_previous_result(tmp_path, fake_results, monkeypatch):
    out = fake_results.write(tmp_path / "r")
    before = sorted(p.name for p in out.iterdir())

    def boom(*a, **k):
        raise RuntimeError("crash while writing run.json (simulated)")

    monkeypatch.setattr(json, "dump", boom)
    with pytest.raises(RuntimeError, match="simulated"):
        fake_results.write(tmp_path / "r")
    assert sorted(p.name for p in out.iterdir()) == before
    assert is_complete(out)
    assert [p.name for p in tmp_path.iterdir()] == ["r"]


def test_write_replaces_a_previous_result_only(tmp_path, fake_results):
    """A previous qcnsim result is replaced; a directory holding a file qcnsim did not write is
    refused and left as it was (issue 10: never delete the user's files)."""
    out = tmp_path / "r"
    fake_results.write(out, fmt="parquet")
    fake_results.write(out, fmt="csv")
    assert is_complete(out) and not list(out.glob("*.parquet"))
    assert [p.name for p in tmp_path.iterdir()] == ["r"]
    (out / "stale.txt").write_text("old")
    with pytest.raises(qcnsim.OutputError):
        fake_results.write(out, fmt="csv")
    assert (out / "stale.txt").read_text() == "old"


def test_write_rejects_unknown_format(tmp_path, fake_results):
    with pytest.raises(ValueError):
        fake_results.write(tmp_path / "r", fmt="xlsx")
    assert not (tmp_path / "r").exists()


def test_is_complete_false_for_partial_dirs(tmp_path):
    d = tmp_path / "x"
    d.mkdir()
    assert not is_complete(d)
    (d / "run.json").write_text("{not json")
    assert not is_complete(d)
    (d / "run.json").write_text(json.dumps({"complete": True, "format": "csv", "tables": ["summary"]}))
    assert not is_complete(d)  # summary.csv missing
    (d / "summary.csv").write_text("metric,value\n")
    assert is_complete(d)


def test_read_missing_dir_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        Results.read(tmp_path / "nope")
