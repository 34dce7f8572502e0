"""A run is a pure function of scenario + seed."""

from __future__ import annotations

import qcnsim


def _run(sc, seed):
    return qcnsim.run(sc, seed=seed, progress=False)


def test_same_seed_identical_tables(short_hotspot):
    a = _run(short_hotspot, 5)
    b = _run(short_hotspot, 5)
    assert set(a.tables) == set(b.tables)
    for name in a.tables:
        assert a.tables[name].equals(b.tables[name]), name
    assert a.run_info["events"] == b.run_info["events"]
    assert a.run_info["resolved"] == b.run_info["resolved"]


def test_seed_from_scenario_by_default(short_hotspot):
    a = _run(short_hotspot, None)
    assert a.seed == short_hotspot.resolved()["meta"]["seed"]
    b = _run(short_hotspot.with_overrides([f"meta.seed={a.seed}"]), None)
    for name in a.tables:
        assert a.tables[name].equals(b.tables[name]), name


def test_explicit_seed_recorded(short_hotspot):
    assert _run(short_hotspot, 12345).seed == 12345


def test_roundtrip_through_disk_is_identical(tmp_path, short_hotspot):
    a = _run(short_hotspot, 9)
    back = qcnsim.Results.read(a.write(tmp_path / "a"))
    for name in a.tables:
        assert back.tables[name].equals(a.tables[name]), name
