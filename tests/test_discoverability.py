"""The CLI tells a new user what exists: parameters, experiments, built-in scenarios; accepts
experiment names everywhere; wildcard overrides; did-you-mean for mistyped names."""

from __future__ import annotations

import pytest
import qcnsim
import tomllib
from qcnsim import _core
from qcnsim.cli import main
from qcnsim.reproduce import describe_experiment, list_experiments


def test_params_lists_every_parameter_from_the_one_definition(capsys):
    assert main(["params"]) == 0
    out = capsys.readouterr().out
    defs = _core.params()
    assert len(defs) > 40
    for path, kind, default, _source, _help in defs:
        assert f"{path} = {default}    ({kind})" in out
    q = next(d for d in defs if d[0] == "cc.qcn.cp.q_eq")
    assert q[1] == "size (bytes), 100B to 4294967295B" and q[2] == "26000B" and "Qeq" in q[4]


def test_params_prefix_source_and_unknown_prefix(capsys):
    assert main(["params", "cc.qcn.rp", "--source"]) == 0
    out = capsys.readouterr().out
    paths = [line.split(" = ")[0] for line in out.splitlines() if not line.startswith(" ")]
    assert paths and all(p.startswith("cc.qcn.rp.") for p in paths)
    assert "cc.qcn.rp.timer = 15ms" in out and "    source: " in out
    assert main(["params", "cc.qcn.pr"]) == 2
    err = capsys.readouterr().err
    assert "no parameter path starts with 'cc.qcn.pr'" in err and "did you mean 'cc.qcn.rp'" in err


def test_reproduce_list_has_descriptions(capsys):
    assert main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = list_experiments()
    assert [line.split()[0] for line in lines] == names
    hw = next(line for line in lines if line.startswith("hw-hotspot-1src "))
    assert hw.rstrip().endswith("One 10 Gb/s CBR source (312 B frames) through two switches.")
    assert all(describe_experiment(n) for n in names)


def test_scenario_export_roundtrip(capsys, tmp_path):
    assert main(["scenario", "hw-4rp"]) == 0
    text = capsys.readouterr().out
    assert tomllib.loads(text)["meta"]["name"] == "hw-4rp"
    mine = tmp_path / "my.toml"
    mine.write_text(text, encoding="utf-8")
    assert qcnsim.Scenario.load(mine).resolved() == qcnsim.Scenario.builtin("hw-4rp").resolved()
    assert main(["scenario", "hw-4pr"]) == 2
    assert "did you mean 'hw-4rp'" in capsys.readouterr().err


def test_validate_and_run_accept_experiment_names(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./scenarios here: the built-in copy is used
    assert main(["validate", "hw-hotspot-1src"]) == 0
    assert capsys.readouterr().out.startswith("ok: hw-hotspot-1src:")
    short = ["--set", "schedule.0.at=10ms", "--set", "schedule.1.at=30ms", "--set", "meta.duration=50ms"]
    assert main(["run", "hw-hotspot-1src", "--no-progress", "--out", str(tmp_path / "r"), *short]) == 0
    info = qcnsim.Results.read(tmp_path / "r").run_info
    assert info["provenance"]["scenario_path"] == "builtin:hw-hotspot-1src"


def test_wildcard_override_sets_every_element(hotspot):
    r = hotspot.with_overrides(["links.*.delay=2us", "flows.*.rate=5Gbps"]).resolved()
    assert {link["delay"] for link in r["links"]} == {"2us"}
    assert {f["rate"] for f in r["flows"]} == {"5Gbps"}


@pytest.mark.parametrize("override,suggestion", [
    ("cc.qcn.cp.qeq=26KB", "did you mean `cc.qcn.cp.q_eq`?"),
    ("links.*.dealy=1us", "did you mean `links.0.delay`?"),
    ("meta.duratoin=1s", "did you mean `meta.duration`?"),
])
def test_unknown_key_suggests_the_nearest(capsys, hotspot_path, override, suggestion):
    assert main(["validate", str(hotspot_path), "--set", override]) == 2
    assert suggestion in capsys.readouterr().err


def test_unknown_experiment_suggests(capsys, tmp_path):
    assert main(["reproduce", "hw-hotspot-1scr", "--out", str(tmp_path / "x")]) == 2
    assert "did you mean 'hw-hotspot-1src'" in capsys.readouterr().err
