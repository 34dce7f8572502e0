"""hpcc-fbhadoop: the HPCC paper's FB_Hadoop setting for DCQCN. The fabric as the authors' ns-3
topology file has it, the HPCC analysis script's per-bin statistic, and the scaled-down quick form
(docs/models/workload.md#reference-experiment-hpcc-fbhadoop)."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from conftest import scenario_path
from qcnsim.experiments import hpcc_fbhadoop as h
from qcnsim.reproduce import reproduce


def test_fabric_is_the_authors_fat_tree():
    r = qcnsim.Scenario.load(scenario_path("hpcc-fbhadoop")).with_overrides(
        ["meta.variant=scaled-fb30-incast"]).resolved()
    hosts = [x["name"] for x in r["hosts"]]
    switches = [x["name"] for x in r["switches"]]
    assert len(hosts) == 320 and len(switches) == 56 and len(r["links"]) == 480
    rates = {}
    for link in r["links"]:
        a, b = link["between"]
        kind = "host" if a in hosts or b in hosts else "switch"
        rates.setdefault(kind, set()).add(link["rate"])
        assert link["delay"] == "1us"
    assert rates == {"host": {"100Gbps"}, "switch": {"400Gbps"}}
    degree = {s: 0 for s in switches}
    for link in r["links"]:
        for n in link["between"]:
            if n in degree:
                degree[n] += 1
    # ToR: 16 hosts + 4 aggregation switches; aggregation: 4 ToRs + 4 cores; core: one per pod
    assert {degree[f"tor{t}"] for t in range(20)} == {20}
    assert {degree[f"pod{p}agg{j}"] for p in range(5) for j in range(4)} == {8}
    assert {degree[f"core{j}x{i}"] for j in range(4) for i in range(4)} == {5}
    assert r["shared_buffer"]["size"] in ("33554432B", 33554432)


def _fct(rows):
    return pl.DataFrame(rows, schema={"flow": pl.Utf8, "size_bytes": pl.Int64, "finished": pl.Boolean,
                                      "slowdown": pl.Float64}, orient="row")


def test_hpcc_bins_follow_the_authors_script():
    # 40 finished workload flows of sizes 1..40 with slowdown = size / 10, one unfinished, and an
    # incast flow: the incast and the unfinished flow are left out; bins of 2 flows (5 % of 40)
    rows = [(f"fb.{k}", k, True, k / 10) for k in range(1, 41)]
    rows += [("fb.99", 5, False, None), ("incast0.0", 7, True, 500.0)]
    t = h.hpcc_bins(_fct(rows))
    assert t.height == 20 and t["flows"].to_list() == [2] * 20
    assert t["size_hi"].to_list() == list(range(2, 41, 2))
    first = t.row(0, named=True)
    # slowdowns 0.1, 0.2 clip to 1; a[int(2 * p)] of [1, 1] is 1
    assert (first["p50"], first["p95"], first["p99"]) == (1.0, 1.0, 1.0)
    last = t.row(19, named=True)
    assert (last["p50"], last["p95"]) == (4.0, 4.0)  # [3.9, 4.0]: a[int(2 * 0.5)] = a[1]
    assert h.unfinished(_fct(rows)) == 1
    # uneven counts: 45 flows cut by index i*n//100 as in the script (2 or 3 per bin)
    t = h.hpcc_bins(_fct([(f"fb.{k}", k, True, 2.0) for k in range(45)]))
    assert t["flows"].sum() == 45 and set(t["flows"]) == {2, 3}


def test_every_unmatched_setting_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "models" / "workload.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Reference experiment `hpcc-fbhadoop`"):]
    for setting, _, _ in h.UNMATCHED:
        assert f"| {setting} |" in section, setting
    # the one number in the paper's text, with its place; nothing read off a plot
    from qcnsim.reproduce import check_published

    for e in check_published(h.PUBLISHED):
        assert "abstract (p. 1)" in e["source"] and "up to 95%" in e["source"]
        assert e["variant"] in section and e["metric"] in section


def test_schemes_and_settings_of_the_variants():
    from pathlib import Path

    import tomllib

    text = (Path(__file__).resolve().parents[1] / "scenarios" / "hpcc-fbhadoop.toml").read_text(encoding="utf-8")
    variants = {v["name"]: v.get("set", {}) for v in tomllib.loads(text)["variants"]}
    modes = {"HPCC": "hpcc", "DCTCP": "dctcp", "TIMELY": "timely"}
    for name, sets in variants.items():
        scheme = h.scheme_of(name)
        assert sets.get("cc.mode", "dcqcn") == modes.get(scheme, "dcqcn"), name
        assert h.setting_of(name) in variants and h.scheme_of(h.setting_of(name)) == "DCQCN", name
        # the ACK's queue as run.py sets ACK_HIGH_PRIO: 0 for hp and dctcp, 1 for timely
        if scheme in ("HPCC", "DCTCP"):
            assert sets["transport.ack_queue"] == "data", name
        elif scheme == "TIMELY":
            assert sets["transport.ack_queue"] == "control", name
    assert {h.scheme_of(n) for n in variants} == {"DCQCN", "HPCC", "DCTCP", "TIMELY"}


def test_reduction_rows_compare_hpcc_with_dcqcn_and_timely_in_its_setting():
    def bins(variant, p95):
        return [{"variant": variant, "bin": b + 1, "size_hi": b, "flows": 1, "p50": 1.0, "p95": v, "p99": v}
                for b, v in enumerate(p95)]

    t = pl.DataFrame(bins("fb50", [10.0, 4.0]) + bins("hpcc-fb50", [2.0, 4.0]) + bins("timely-fb50", [1.0, 8.0])
                     + bins("dctcp-fb50", [100.0, 100.0]) + bins("fb30-incast", [1000.0, 1000.0]))
    rows = {(r[0], r[1]): (r[2], r[4]) for r in h.reduction_rows(t)}
    assert set(rows) == {("hpcc-fb50", "hpcc_p95_reduction_max_vs_dcqcn"),
                         ("hpcc-fb50", "hpcc_p95_reduction_max_vs_timely")}
    assert rows[("hpcc-fb50", "hpcc_p95_reduction_max_vs_dcqcn")][0] == pytest.approx(80.0)  # bin 1: 1 - 2/10
    assert rows[("hpcc-fb50", "hpcc_p95_reduction_max_vs_timely")][0] == pytest.approx(50.0)  # bin 2: 1 - 4/8
    assert "bin 2" in rows[("hpcc-fb50", "hpcc_p95_reduction_max_vs_timely")][1]


def test_scaled_quick_reproduce(tmp_path):
    summary = reproduce("hpcc-fbhadoop", tmp_path, quick=True, log=lambda s: None, echo=lambda s: None)
    assert sorted(summary["variant"].drop_nulls().unique()) == ["scaled-fb30-incast"]
    for f in ("hpcc_bins.csv", "hpcc_bins.md", "unmatched.md", "hpcc_p95.png", "published.md"):
        assert (tmp_path / f).is_file(), f
    assert "SCALED-DOWN" in (tmp_path / "hpcc_bins.md").read_text(encoding="utf-8")

    def val(metric):
        row = summary.filter(pl.col("metric") == metric)
        assert row.height == 1, metric
        return row["value"][0]

    # lossless with PFC: nothing dropped, every flow (about 600 workload flows, one 60-to-1
    # incast of 500 KB) finished by 3 ms
    assert val("dropped_frames") == 0
    assert val("hpcc_unfinished") == 0
    assert val("hpcc_flows") > 400
    bins = pl.read_csv(tmp_path / "hpcc_bins.csv")
    assert bins.height == 20 and bins["flows"].sum() == val("hpcc_flows")
    assert (bins["p95"] >= bins["p50"]).all() and (bins["p50"] >= 1.0).all()
    assert bins["size_hi"].is_sorted()
    for k in (1, 20):
        assert val(f"hpcc_slowdown_p95_bin{k:02d}") == pytest.approx(bins["p95"][k - 1])
    # the incast's 60 flows are in the fct table but not in the bins
    fct = qcnsim.Results.read(tmp_path / "scaled-fb30-incast").tables["fct"]
    assert fct.filter(pl.col("flow").str.starts_with("incast")).height == 60
    assert fct.filter(pl.col("flow").str.starts_with("fb.")).height == val("hpcc_flows")
