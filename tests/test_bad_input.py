"""Bad input: every invalid scenario raises qcnsim.ScenarioError naming the offending field path.

Each case starts from scenarios/hw-hotspot-1src.toml and breaks one thing, either with `--set`
style overrides or by editing the TOML text.
"""

from __future__ import annotations

import pytest
import qcnsim
from conftest import run_cli, scenario_path

# (id, overrides, expected path)
OVERRIDE_CASES = [
    ("unknown-top-level-key", ["bogus=1"], "bogus"),
    ("unknown-nested-key", ["cc.qcn.cp.qeq=33KB"], "cc.qcn.cp.qeq"),
    ("unknown-meta-key", ["meta.foo=1"], "meta.foo"),
    ("size-with-rate-unit", ["cc.qcn.cp.q_eq=33Gbps"], "cc.qcn.cp.q_eq"),
    ("rate-with-size-unit", ["flows.0.rate=10GB"], "flows.0.rate"),
    ("rate-without-s", ["links.0.rate=10G"], "links.0.rate"),
    ("size-without-unit", ["cc.qcn.cp.q_eq=26000"], "cc.qcn.cp.q_eq"),
    ("zero-flow-rate", ["flows.0.rate=0Gbps"], "flows.0.rate"),
    ("negative-flow-rate", ["flows.0.rate=-1Gbps"], "flows.0.rate"),
    ("flow-rate-above-nic", ["flows.0.rate=20Gbps"], "flows.0.rate"),
    ("zero-link-rate", ["defaults.link_rate=0bps"], "defaults.link_rate"),
    ("negative-link-delay", ["links.0.delay=-1us"], "links.0.delay"),
    ("qeq-above-buffer", ["cc.qcn.cp.q_eq=200KB"], "cc.qcn.cp.q_eq"),
    ("buffer-garbage", ["defaults.buffer=lots"], "defaults.buffer"),
    ("schedule-after-end", ["schedule.0.at=5s"], "schedule.0.at"),
    ("schedule-negative-time", ["schedule.0.at=-1s"], "schedule.0.at"),
    ("schedule-rate-above-link", ["schedule.0.rate=20Gbps"], "schedule.0.rate"),
    ("schedule-unknown-port", ["schedule.0.port=sw1->sw3"], "schedule.0.port"),
    ("flow-to-unknown-host", ["flows.0.dst=nowhere"], "flows.0.dst"),
    ("flow-start-after-end", ["flows.0.start=5s"], "flows.0.start"),
    ("frame-too-small", ["flows.0.frame=10B"], "flows.0.frame"),
    ("frame-too-big", ["flows.0.frame=10000B"], "flows.0.frame"),
    ("unknown-traffic", ["flows.0.traffic=tcp"], "flows.0.traffic"),
    ("zero-duration", ["meta.duration=0s"], "meta.duration"),
    ("sub-picosecond-time", ["cc.qcn.rp.timer=0.1ps"], "cc.qcn.rp.timer"),
    ("zero-quick-duration", ["meta.quick_duration=0s"], "meta.quick_duration"),
    ("fb-bits-out-of-range", ["cc.qcn.cp.fb_bits=0"], "cc.qcn.cp.fb_bits"),
    ("gd-above-one", ["cc.qcn.rp.gd=2"], "cc.qcn.rp.gd"),
    ("w-negative", ["cc.qcn.cp.w=-1"], "cc.qcn.cp.w"),
    ("frt-not-a-number", ["cc.qcn.rp.frt=five"], "cc.qcn.rp.frt"),
    ("unknown-cc-mode", ["cc.mode=dctcp"], "cc.mode"),
    ("cp-on-host-port", ["cc.qcn.cp_ports=src->sw1"], "cc.qcn.cp_ports"),
    ("duplicate-node-name", ["hosts.1.name=src"], "hosts.1.name"),
    ("link-to-itself", ['links.0.between=["sw1", "sw1"]'], "links.0.between"),
    ("link-to-unknown-node", ['links.0.between=["src", "nope"]'], "links.0.between.1"),
    ("array-index-out-of-range", ["flows.5.rate=1Gbps"], "flows.5"),
    ("recovery-fraction-above-one", ["analysis.recovery_fraction=1.5"], "analysis.recovery_fraction"),
    ("zero-throughput-bin", ["metrics.throughput_bin=0s"], "metrics.throughput_bin"),
    ("unknown-event-kind", ['metrics.events=["foo"]'], "metrics.events.0"),
    ("negative-seed", ["meta.seed=-1"], "meta.seed"),
    ("override-without-equals", ["flows.0.rate"], "--set"),
    ("ba-threshold-zero", ["cc.qcn.ba.qlen_threshold=0"], "cc.qcn.ba.qlen_threshold"),
    ("ba-hold-not-a-time", ["cc.qcn.ba.hold=10"], "cc.qcn.ba.hold"),
    ("ba-enabled-not-bool", ["cc.qcn.ba.enabled=yes"], "cc.qcn.ba.enabled"),
    ("sonar-unknown-key", ["cc.qcn.sonar.wpp=10ms"], "cc.qcn.sonar.wpp"),
    ("sonar-wp-zero", ["cc.qcn.sonar.wp=0s"], "cc.qcn.sonar.wp"),
    ("sonar-we-multiple-negative", ["cc.qcn.sonar.we_rtt_multiple=-4"], "cc.qcn.sonar.we_rtt_multiple"),
    ("sonar-we-starts-unknown", ["cc.qcn.sonar.we_starts=later"], "cc.qcn.sonar.we_starts"),
    ("sonar-byte-counter-rate", ["cc.qcn.sonar.byte_counter=1Gbps"], "cc.qcn.sonar.byte_counter"),
    ("pushback-timer-size", ["cc.qcn.pushback.timer=5KB"], "cc.qcn.pushback.timer"),
    ("pushback-step-back-unknown", ["cc.qcn.pushback.step_back=all"], "cc.qcn.pushback.step_back"),
    ("rp-timer-enabled-not-bool", ["cc.qcn.rp.timer_enabled=0"], "cc.qcn.rp.timer_enabled"),
    ("count-not-an-integer", ["flows.0.count=two"], "flows.0.count"),
    ("count-too-large", ["hosts.0.count=1000000"], "hosts.0.count"),
    ("downward-factor-below-one", ["analysis.downward_factor=0.5"], "analysis.downward_factor"),
    # BCN
    ("bcn-gd-makes-rate-negative", ["cc.mode=bcn", "cc.bcn.rp.gd=0.001"], "cc.bcn.rp.gd"),
    ("bcn-qeq-pushes-fb-max", ["cc.mode=bcn", "cc.bcn.cp.q_eq=100KB"], "cc.bcn.rp.gd"),
    ("bcn-gi-negative", ["cc.bcn.rp.gi=-1"], "cc.bcn.rp.gi"),
    ("bcn-jitter-above-window", ["cc.bcn.cp.sample_window=10KB", "cc.bcn.cp.sample_jitter=20KB"],
     "cc.bcn.cp.sample_jitter"),
    ("bcn-qsc-garbage", ["cc.bcn.cp.q_sc=high"], "cc.bcn.cp.q_sc"),
    ("bcn-rmin-above-line", ["cc.mode=bcn", "cc.bcn.rp.r_min=20Gbps"], "cc.bcn.rp.r_min"),
    ("bcn-severe-check-unknown", ["cc.bcn.cp.severe_check=always"], "cc.bcn.cp.severe_check"),
    ("bcn-detection-off-unknown-switch", ['cc.bcn.detection_off=["sw9"]'], "cc.bcn.detection_off.0"),
    ("bcn-unknown-key", ["cc.bcn.cp.window=10KB"], "cc.bcn.cp.window"),
    # NIC-side QCN feedback
    ("unknown-feedback", ["cc.qcn.feedback=cp"], "cc.qcn.feedback"),
    ("conmes-interval-too-small", ["cc.qcn.feedback=nic", "cc.qcn.nic.conmes_interval=1B"],
     "cc.qcn.nic.conmes_interval"),
    ("conmes-interval-as-rate", ["cc.qcn.nic.conmes_interval=1Gbps"], "cc.qcn.nic.conmes_interval"),
    ("conmes-frame-too-big", ["cc.qcn.nic.conmes_frame=9000B"], "cc.qcn.nic.conmes_frame"),
    ("unknown-nic-sample-count", ["cc.qcn.nic.sample_count=frames"], "cc.qcn.nic.sample_count"),
    ("unknown-nic-key", ["cc.qcn.nic.q_eq=33KB"], "cc.qcn.nic.q_eq"),
    ("nic-feedback-with-pushback", ["cc.qcn.feedback=nic", "cc.qcn.pushback.enabled=true"], "cc.qcn.feedback"),
    # link-level flow control (PAUSE / PFC)
    ("fc-unknown-mode", ["flow_control.mode=xon"], "flow_control.mode"),
    ("fc-unknown-watermark", ["flow_control.mode=pause", "flow_control.watermark=shared"],
     "flow_control.watermark"),
    ("fc-xon-equal-to-xoff", ["flow_control.mode=pause", "flow_control.xoff=60KB", "flow_control.xon=60KB"],
     "flow_control.xon"),
    ("fc-xon-above-xoff", ["flow_control.mode=pause", "flow_control.xoff=60KB", "flow_control.xon=70KB"],
     "flow_control.xon"),
    ("fc-headroom-below-one-frame", ["flow_control.mode=pause", "flow_control.xoff=150KB"], "flow_control.xoff"),
    ("pfc-priority-without-queue", ["flow_control.mode=pfc", "flow_control.queues=2", "flow_control.priorities=[0, 4]"],
     "flow_control.priorities.1"),
    ("pfc-flow-priority-without-queue", ["flow_control.mode=pfc", "flow_control.queues=2", "flows.0.priority=5"],
     "flows.0.priority"),
    ("fc-quanta-too-large", ["flow_control.mode=pause", "flow_control.pause_quanta=70000"], "flow_control.pause_quanta"),
    ("fc-on-a-host", ["flow_control.mode=pause", 'flow_control.switches=["src"]'], "flow_control.switches.0"),
    # issue 27: bounds of the fluid step and of the detection intervals
    ("fluid-dt-too-many-steps", ["fluid.dt=1ps"], "fluid.dt"),
    ("fluid-dt-above-the-duration", ["fluid.dt=100s"], "fluid.dt"),
    ("deadlock-detection-below-a-frame", ["flow_control.mode=pfc", "flow_control.deadlock_detection=1ps"],
     "flow_control.deadlock_detection"),
    ("watchdog-below-a-frame", ["flow_control.mode=pause", "flow_control.watchdog=1ns"], "flow_control.watchdog"),
]


@pytest.mark.parametrize("overrides,path", [c[1:] for c in OVERRIDE_CASES], ids=[c[0] for c in OVERRIDE_CASES])
def test_bad_override(hotspot, overrides, path):
    with pytest.raises(qcnsim.ScenarioError) as ei:
        hotspot.with_overrides(overrides).resolved()
    e = ei.value
    assert e.path == path, str(e)
    assert isinstance(e, ValueError)
    assert e.allowed  # says what would be accepted
    if path != "--set":
        assert f"`{path}`" in str(e)


def _drop(text: str, block: str) -> str:
    assert block in text, block
    return text.replace(block, "")


# (id, function of the base text -> broken text, expected path; None = startswith check below)
TEXT_CASES = [
    ("empty-file", lambda t: "", "meta.duration"),
    ("empty-topology", lambda t: '[meta]\nduration = "1s"\n', "hosts"),
    ("toml-syntax-error", lambda t: t.replace("[cc.qcn.cp]", "[cc.qcn.cp", 1), ""),
    ("duplicate-table", lambda t: t + '\n[cc]\nmode = "qcn"\n', ""),
    ("unreachable-destination",
     lambda t: _drop(t, '[[links]]\nbetween = ["sw2", "dst"]\n'), "flows.0.dst"),
    ("bare-number-duration", lambda t: t.replace('duration = "4s"', "duration = 4"), "meta.duration"),
    ("bad-variant-set",
     lambda t: t + '\n[[variants]]\nname = "broken"\nset = { "flows.0.rate" = "fast" }\n',
     "variants.18.set: flows.0.rate"),
    ("duplicate-variant-name",
     lambda t: t + '\n[[variants]]\nname = "hotspot-1G"\n', "variants.18.name"),
    ("variant-quick-not-bool",
     lambda t: t + '\n[[variants]]\nname = "slow"\nquick = "no"\n', "variants.18.quick"),
]


@pytest.mark.parametrize("mutate,path", [c[1:] for c in TEXT_CASES], ids=[c[0] for c in TEXT_CASES])
def test_bad_text(hotspot, mutate, path):
    sc = qcnsim.Scenario.from_text(mutate(hotspot.text))
    with pytest.raises(qcnsim.ScenarioError) as ei:
        sc.resolved()
    assert ei.value.path == path, str(ei.value)


def test_run_raises_scenario_error_too(hotspot):
    with pytest.raises(qcnsim.ScenarioError) as ei:
        qcnsim.run(hotspot.with_overrides(["cc.qcn.cp.q_eq=200KB"]))
    assert ei.value.path == "cc.qcn.cp.q_eq"


def test_error_parts_and_core_class(hotspot):
    with pytest.raises(qcnsim._core.ScenarioError) as ei:  # the core's class catches it too
        hotspot.with_overrides(["flows.0.rate=10GB"]).resolved()
    e = ei.value
    assert (e.path, e.value) == ("flows.0.rate", '"10GB"')
    assert "Gbps" in e.allowed
    assert str(e).startswith("`flows.0.rate` = \"10GB\": expected")
    assert e.args[1:] == (e.path, e.value, e.allowed)


def test_core_error_without_wrapper(hotspot):
    with pytest.raises(qcnsim._core.ScenarioError) as ei:
        qcnsim._core.validate(hotspot.text, ["cc.mode=dctcp"])
    assert ei.value.path == "cc.mode"
    assert ei.value.args[1] == "cc.mode"


@pytest.mark.parametrize("overrides,path", [c[1:] for c in OVERRIDE_CASES[::6]], ids=[c[0] for c in OVERRIDE_CASES[::6]])
def test_bad_override_cli(overrides, path):
    args = []
    for o in overrides:
        args += ["--set", o]
    r = run_cli("validate", scenario_path("hw-hotspot-1src"), *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ")
    assert path in r.stderr
