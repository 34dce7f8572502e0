"""The FFI boundary never lets anything but a ScenarioError (or a result) out for any input:
a panic in the core would surface as RuntimeError("internal error ...") and fail these tests."""

from __future__ import annotations

import json

import qcnsim
from conftest import SHORT, scenario_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PATHS = [
    "meta.duration", "meta.seed", "meta.quick_duration", "defaults.link_rate", "defaults.buffer",
    "defaults.switch_latency", "links.0.rate", "links.1.delay", "links.2.buffer", "flows.0.rate",
    "flows.0.frame", "flows.0.start", "flows.0.stop", "flows.0.size", "flows.0.traffic",
    "schedule.0.at", "schedule.0.rate", "schedule.1.port", "cc.mode", "cc.qcn.cp.q_eq",
    "cc.qcn.cp.w", "cc.qcn.cp.fb_bits", "cc.qcn.cp.jitter", "cc.qcn.rp.gd", "cc.qcn.rp.timer",
    "cc.qcn.rp.byte_counter", "cc.qcn.rp.min_rate", "cc.qcn.rp.r_ai", "cc.qcn.rp.frt",
    "metrics.throughput_bin", "metrics.queue_ports", "analysis.recovery_fraction", "hosts.0.name",
]
UNITS = ["", "ps", "ns", "us", "ms", "s", "B", "KB", "KiB", "bps", "Mbps", "Gbps", "Tbps", "frames", "x"]
numbers = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "1", "0.5", "1e3", "1_000", ".", "-0", "99999999999999999999"]),
)
values = st.one_of(
    st.builds(lambda n, u: n + u, numbers, st.sampled_from(UNITS)),
    st.sampled_from(["true", "false", '""', "[]", "{}", '["sw1->sw2"]', "infinite", "qcn", "none",
                     "switches", "all", "sw1->sw2", "[1, 2]", "{ a = 1 }"]),
    st.text(max_size=12),
)
overrides = st.lists(st.builds(lambda p, v: f"{p}={v}", st.sampled_from(PATHS), values), max_size=4)


def _check_validate(text, ovr):
    try:
        out = qcnsim._core.validate(text, ovr)
    except qcnsim._core.ScenarioError as e:
        assert isinstance(e.path, str) and isinstance(e.allowed, str)
    else:
        json.loads(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ovr=overrides)
def test_random_overrides_never_crash(ovr):
    _check_validate(scenario_path("hw-hotspot-1src").read_text(), ovr)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_random_text_never_crashes(text):
    _check_validate(text, [])


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_mangled_scenario_never_crashes(data):
    text = scenario_path("hw-hotspot-1src").read_text()
    lines = text.splitlines()
    i = data.draw(st.integers(0, len(lines) - 1))
    repl = data.draw(st.one_of(st.just(""), st.text(max_size=30)))
    lines[i] = repl
    _check_validate("\n".join(lines), [])


@settings(max_examples=25, deadline=None)
@given(ovr=st.lists(st.builds(lambda p, v: f"{p}={v}",
                              st.sampled_from(["flows.0.rate", "cc.qcn.cp.q_eq", "cc.qcn.rp.gd",
                                               "cc.qcn.cp.w", "flows.0.frame", "cc.qcn.rp.min_rate",
                                               "cc.qcn.rp.timer", "defaults.buffer"]),
                              values), max_size=3))
def test_random_valid_runs_never_crash(ovr):
    """Short runs with random (mostly invalid) parameters: a result or a ScenarioError."""
    sc = qcnsim.Scenario.load(scenario_path("hw-hotspot-1src")).with_overrides(
        [*SHORT, "meta.duration=20ms", "meta.quick_duration=20ms", "schedule.0.at=5ms",
         "schedule.1.at=10ms", *ovr])
    try:
        res = qcnsim.run(sc, seed=1, progress=False)
    except qcnsim.ScenarioError:
        return
    assert "summary" in res.tables
