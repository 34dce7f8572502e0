"""Shared fixtures. The tests import the *installed* qcnsim (see scripts/test.sh)."""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

# Make sure we are not testing a source tree without the compiled extension by accident.
import qcnsim  # noqa: E402

assert hasattr(qcnsim, "_core"), "qcnsim._core missing: install the package first (pip install .)"


def scenario_path(name: str) -> Path:
    p = SCENARIOS / f"{name}.toml"
    if not p.is_file():
        pytest.skip(f"scenario {name} not in the tree yet")
    return p


# Shorten hw-hotspot-1src so that a test run takes well under a second of wall time: 50 ms with
# the hotspot from 10 ms to 30 ms (the schedule must lie within the run).
SHORT = ["meta.duration=50ms", "meta.quick_duration=50ms", "schedule.0.at=10ms", "schedule.1.at=30ms"]


@pytest.fixture
def hotspot_path() -> Path:
    return scenario_path("hw-hotspot-1src")


@pytest.fixture
def hotspot(hotspot_path):
    return qcnsim.Scenario.load(hotspot_path)


@pytest.fixture
def short_hotspot(hotspot):
    return hotspot.with_overrides(SHORT)


@pytest.fixture(scope="session")
def short_results():
    """One short run of hw-hotspot-1src shared by the read-only API tests."""
    sc = qcnsim.Scenario.load(scenario_path("hw-hotspot-1src")).with_overrides(SHORT)
    return qcnsim.run(sc, seed=11, progress=False)


def _le(fmt: str, vals) -> bytes:
    return struct.pack("<%d%s" % (len(vals), fmt), *vals)


def fake_core_output(seed: int = 1) -> dict:
    """A dict shaped exactly like ``_core.run``'s, with small synthetic tables."""
    n = 20
    t = [i * 10_000_000_000 for i in range(n)]  # every 10 ms
    thr = [10e9 if i < 5 or i > 14 else 0.5e9 for i in range(n)]
    q = [float(i % 7) * 5000 for i in range(n)]
    tables = {
        "summary": [
            ("metric", "str", ["recovery_time", "mean_throughput"]),
            ("value", "f64", _le("d", [0.0123, 9.5e9])),
            ("unit", "str", ["s", "bps"]),
            ("detail", "str", ["resolution 10ms, fraction 0.9", ""]),
        ],
        "port_throughput": [
            ("port", "str", ["sw0.p1"] * n),
            ("t_ps", "i64", _le("q", t)),
            ("bin_ps", "i64", _le("q", [10_000_000_000] * n)),
            ("bytes", "i64", _le("q", [int(x / 8 * 0.01) for x in thr])),
            ("frames", "i64", _le("q", [int(x / 8 * 0.01 / 312) for x in thr])),
            ("throughput_bps", "f64", _le("d", thr)),
        ],
        "queue_samples": [
            ("port", "str", ["sw0.p1"] * n),
            ("t_ps", "i64", _le("q", t)),
            ("qlen_bytes", "i64", _le("q", [int(x) for x in q])),
            ("qlen_frames", "i64", _le("q", [int(x // 312) for x in q])),
        ],
        "rp_rates": [
            ("flow", "i64", _le("q", [0] * n)),
            ("t_ps", "i64", _le("q", t)),
            ("cr_bps", "f64", _le("d", thr)),
            ("tr_bps", "f64", _le("d", [x * 1.1 for x in thr])),
            ("rl_active", "bool", bytes([1 if i > 4 else 0 for i in range(n)])),
        ],
        "empty": [("t_ps", "i64", b""), ("kind", "str", [])],
    }
    return {
        "tables": tables,
        "resolved": json.dumps({"meta": {"name": "fake", "duration": "200ms", "seed": seed}}),
        "seed": seed,
        "events": 12345,
        "sim_time_ps": 200_000_000_000,
        "wall_s": 0.5,
        "frames_forwarded": 1000,
    }


@pytest.fixture
def fake_results():
    return qcnsim.Results._from_core(fake_core_output(), scenario_name="fake")


def run_cli(*args, cwd=None, env=None, timeout=600):
    import subprocess

    e = dict(os.environ)
    e.pop("QCNSIM_PROGRESS", None)
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "qcnsim", *map(str, args)], cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=timeout)
