"""The command line, run as a subprocess (`python -m qcnsim`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from conftest import SHORT, run_cli, scenario_path


def _sets(overrides):
    out = []
    for o in overrides:
        out += ["--set", o]
    return out


def assert_user_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert "error:" in r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def test_help_and_version():
    r = run_cli("--help")
    assert r.returncode == 0 and "reproduce" in r.stdout
    # the description names what is inside, not QCN alone
    text = " ".join(r.stdout.split())
    for name in ("QCN", "DCQCN", "PFC", "ECMP", "flow completion times"):
        assert name in text, name
    r = run_cli("--version")
    assert r.returncode == 0 and "qcnsim" in r.stdout


def test_validate_ok():
    r = run_cli("validate", scenario_path("hw-hotspot-1src"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")
    assert "hw-hotspot-1src" in r.stdout and "variants" in r.stdout
    assert len(r.stdout.strip().splitlines()) == 1


def test_validate_resolved_json():
    r = run_cli("validate", scenario_path("hw-hotspot-1src"), "--resolved", "--set", "cc.qcn.cp.q_eq=26KB")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cc"]["qcn"]["cp"]["q_eq"] in ("26KB", "26000B")


def test_validate_scenario_error():
    r = run_cli("validate", scenario_path("hw-hotspot-1src"), "--set", "cc.qcn.cp.q_eq=33Gbps")
    assert_user_error(r, "cc.qcn.cp.q_eq")


def test_validate_unknown_key():
    r = run_cli("validate", scenario_path("hw-hotspot-1src"), "--set", "cc.qcn.cp.qeq=1KB")
    assert_user_error(r, "cc.qcn.cp.qeq")


def test_missing_file(tmp_path):
    assert_user_error(run_cli("validate", tmp_path / "nope.toml"), "not found")
    assert_user_error(run_cli("run", tmp_path / "nope.toml"), "not found")


def test_bad_set_syntax():
    r = run_cli("validate", scenario_path("hw-hotspot-1src"), "--set", "flows.0.rate")
    assert_user_error(r, "path=value")
    r = run_cli("run", scenario_path("hw-hotspot-1src"), "--set", "=5")
    assert_user_error(r)


def test_unknown_experiment(tmp_path):
    r = run_cli("reproduce", "no-such-experiment", "--out", tmp_path / "o")
    assert_user_error(r, "no-such-experiment")
    assert not (tmp_path / "o").exists()


def test_unknown_variant(tmp_path):
    r = run_cli("run", scenario_path("hw-hotspot-1src"), "--variant", "nope", "--out", tmp_path / "o")
    assert_user_error(r, "nope")


def test_not_toml(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("this is [ not toml")
    assert_user_error(run_cli("validate", p), "TOML")


def test_bad_cli_usage():
    r = run_cli("run")  # argparse: missing SCENARIO
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run_cli("run", scenario_path("hw-hotspot-1src"), "--seed", "minus-one")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_run_writes_results(tmp_path):
    out = tmp_path / "r"
    r = run_cli("run", scenario_path("hw-hotspot-1src"), "--out", out, *_sets(SHORT), "--seed", "4",
                "--format", "csv")
    assert r.returncode == 0, r.stderr
    names = {p.name for p in out.iterdir()}
    assert {"run.json", "summary.csv", "port_throughput.csv", "queue_samples.csv", "rp_rates.csv",
            "flows.csv", "ports.csv", "events.csv"} <= names
    info = json.loads((out / "run.json").read_text())
    assert info["seed"] == 4 and info["complete"] is True
    assert "recovery_time" in r.stdout  # the summary is printed


def test_run_fluid_solver(tmp_path):
    """qcnsim run --solver fluid writes the fluid model's tables, the same as qcnsim.fluid();
    --seed is refused (the model draws no random numbers); a scenario the fluid model cannot take
    is a user error naming the field, before anything is written."""
    import polars as pl
    import qcnsim

    out = tmp_path / "f"
    sets = _sets(["meta.duration=20ms", "analysis.stats_from=5ms", "analysis.stats_to=20ms"])
    r = run_cli("run", scenario_path("fluid-xcheck"), "--solver", "fluid", "--variant", "rtt100", "--out", out,
                *sets, "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "fluid solver" in r.stderr and "fluid_queue_mean" in r.stdout
    info = json.loads((out / "run.json").read_text())
    assert info["solver"] == "fluid" and info["resolved"]["links"][1]["delay"] == "50us"
    got = pl.read_csv(out / "summary.csv")
    want = qcnsim.fluid(qcnsim.Scenario.load(scenario_path("fluid-xcheck")).with_overrides(
        ["meta.duration=20ms", "analysis.stats_from=5ms", "analysis.stats_to=20ms"]).variant("rtt100")).summary
    assert got["metric"].to_list() == want["metric"].to_list()
    assert got["value"].to_list() == pytest.approx(want["value"].to_list(), rel=1e-12)
    assert {"queue_samples.csv", "rp_rates.csv", "fluid_inputs.csv"} <= {p.name for p in out.iterdir()}
    assert_user_error(run_cli("run", scenario_path("fluid-xcheck"), "--solver", "fluid", "--seed", "3",
                              "--out", tmp_path / "s"), "--seed has no effect with --solver fluid")
    assert_user_error(run_cli("run", scenario_path("multicast-star"), "--solver", "fluid", "--out", tmp_path / "m"),
                      "analysis.bottleneck")
    assert not (tmp_path / "s").exists() and not (tmp_path / "m").exists()


def test_run_variant_default_out(tmp_path):
    r = run_cli("run", scenario_path("hw-hotspot-1src"), "--variant", "hotspot-1G", *_sets(SHORT),
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "results" / "hw-hotspot-1src" / "hotspot-1G"
    info = json.loads((out / "run.json").read_text())
    assert info["resolved"]["schedule"][0]["rate"] == "1Gbps"


def test_plot_command(tmp_path):
    out = tmp_path / "r"
    assert run_cli("run", scenario_path("hw-hotspot-1src"), "--out", out, *_sets(SHORT)).returncode == 0
    r = run_cli("plot", out, "--out", tmp_path / "figs")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "figs" / "throughput.png").is_file()
    assert (tmp_path / "figs" / "queue.png").is_file()
    assert_user_error(run_cli("plot", tmp_path / "missing"), "not found")


def test_reproduce_list():
    r = run_cli("reproduce", "--list", cwd="/")
    assert r.returncode == 0
    names = r.stdout.split()
    assert "hw-hotspot-1src" in names and "hw-4rp" in names  # from the copy built into the package


def test_reproduce_quick_and_resume(tmp_path):
    out = tmp_path / "hs"
    args = ["reproduce", "hw-hotspot-1src", "--out", out, "--quick", *_sets(SHORT[2:]),
            "--set", "meta.duration=60ms", "--set", "meta.quick_duration=60ms"]
    r = run_cli(*args, cwd=tmp_path)  # not the repo: uses the scenarios built into the package
    assert r.returncode == 0, r.stderr
    for v in ("hotspot-0.5G", "hotspot-1G", "nic-0.5G", "nic-1G", "nic-hw-0.5G", "nic-hw-1G",
              "nic-hw-gate-bc-1G", "nic-hw-gate-either-0.5G"):
        assert (out / v / "run.json").is_file()
    for f in ("summary.csv", "summary.md", "throughput.png", "queue.png", "cr.png", "by_hotspot.png",
              "recovery_grid.png", "recovery.csv", "recovery.md"):
        assert (out / f).is_file(), f
    # the experiment's hook: recovery times of every variant, grouped by hotspot and scheme
    rec = (out / "recovery.csv").read_text().splitlines()
    assert rec[0] == "hotspot,scheme,gate,variant,recovery_10ms_s,recovery_1ms_s,study_s"
    assert sorted("/".join(line.split(",")[:3]) for line in rec[1:]) == sorted(
        f"{h}/{s}/{g}" for h in ("0.5G", "1G") for s in ("standard", "nic", "nic-hw")
        for g in ("both", "byte_counter", "either"))
    assert "recovery " in (out / "reproduce.log").read_text()  # the hook's log: in the file
    summary = (out / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("variant,metric,value,unit")
    assert any("recovery_time" in line for line in summary)
    assert any(",recovery_time_10ms," in line for line in summary)
    assert (out / "published.md").is_file()
    # the short report: what ran, where, the published values beside qcnsim's; not the summary
    lines = r.stdout.strip().splitlines()
    assert len(lines) <= 25, r.stdout
    assert lines[0].startswith("hw-hotspot-1src (--quick): 18 variants (18 run now); results in ")
    assert "| metric | variant | unit | published | qcnsim | ratio |" in r.stdout
    assert "| variant | metric |" not in r.stdout and "running" not in r.stderr
    mtime = (out / "hotspot-1G" / "run.json").stat().st_mtime_ns
    r2 = run_cli(*args, "--verbose", cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert "skipping" in r2.stderr
    assert "| variant | metric |" in r2.stdout  # --verbose: the whole summary
    assert "recovery " in r2.stderr
    assert (out / "hotspot-1G" / "run.json").stat().st_mtime_ns == mtime
    r3 = run_cli(*args, cwd=tmp_path)
    assert r3.returncode == 0, r3.stderr
    assert "18 variants (0 run now, 18 from an earlier run)" in r3.stdout


def test_bench_not_built(tmp_path):
    env = {"PATH": os.path.dirname(sys.executable), "QCNSIM_BENCH": ""}
    r = run_cli("bench", "--help", cwd=tmp_path, env=env)
    assert_user_error(r, "cargo build --release -p qcnsim-core --bin qcnsim-bench")


def test_ctrl_c_exits_130(tmp_path):
    """SIGINT during a long run: exit status 130, a short message, no traceback."""
    sc = scenario_path("hw-hotspot-1src")
    env = dict(os.environ, QCNSIM_PROGRESS="1")
    p = subprocess.Popen([sys.executable, "-m", "qcnsim", "run", str(sc), "--out", str(tmp_path / "o"),
                          "--set", "meta.duration=200s"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen = bytearray()
    started = threading.Event()

    def reader():
        while True:
            b = p.stderr.read(1)
            if not b:
                return
            seen.extend(b)
            if b"%" in seen:  # the progress bar is up: the simulation is running
                started.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    if not started.wait(120):
        p.kill()
        pytest.fail(f"no progress output: {bytes(seen)!r}")
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the run did not stop on SIGINT")
    t.join(5)
    err = bytes(seen).decode(errors="replace")
    assert rc == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert not (tmp_path / "o").exists()
