"""Multicast groups from Python: bad input names the field, the shipped multicast scenarios run,
and ``qcnsim reproduce multicast-star`` runs its seeds, figures and metric table (short runs)."""

from __future__ import annotations

import polars as pl
import pytest
import qcnsim
from conftest import run_cli, scenario_path
from qcnsim.reproduce import reproduce

SHORT = ["meta.duration=80ms", "analysis.stats_from=30ms"]

# (id, overrides on multicast-star, expected path)
BAD = [
    ("flow-to-unknown-group", ["flows.0.group=nope"], "flows.0.group"),
    ("group-with-no-members", ["groups.0.members=[]"], "groups.0.members"),
    ("unknown-member", ['groups.0.members=["R1", "nobody"]'], "groups.0.members.1"),
    ("switch-as-member", ['groups.0.members=["R1", "sw"]'], "groups.0.members.1"),
    ("tree-misses-a-member", ['groups.0.tree=["sw->R1"]'], "groups.0.tree"),
    ("tree-to-a-non-member", ['groups.0.tree=["sw->R1", "sw->R2", "sw->S2"]'], "groups.0.tree.2"),
    ("dst-and-group", ["flows.0.dst=R1"], "flows.0.dst"),
    ("bad-mac", ["groups.0.mac=02:00:00:00:00:01"], "groups.0.mac"),
    ("unknown-feedback-scheme", ["cc.qcn.multicast_feedback=worst"], "cc.qcn.multicast_feedback"),
    ("window-after-the-run", ["analysis.stats_from=5s"], "analysis.stats_from"),
]


@pytest.fixture
def star():
    return qcnsim.Scenario.load(scenario_path("multicast-star"))


@pytest.mark.parametrize("overrides,path", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_multicast_input_names_the_field(star, overrides, path):
    with pytest.raises(qcnsim.ScenarioError) as ei:
        star.with_overrides(overrides).resolved()
    assert ei.value.path == path, str(ei.value)
    assert ei.value.allowed


def test_unreachable_member_is_an_error(star, tmp_path):
    text = star.text.replace('[[switches]]', '[[hosts]]\nname = "island"\n\n[[switches]]', 1)
    text = text.replace('members = ["R1", "R2"]', 'members = ["R1", "R2", "island"]')
    with pytest.raises(qcnsim.ScenarioError) as ei:
        qcnsim.Scenario(text).resolved()
    assert ei.value.path == "flows.0.group" and "island" in str(ei.value)
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("validate", p)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "flows.0.group" in r.stderr


@pytest.mark.parametrize("name", ["multicast-star", "multicast-multilink"])
def test_multicast_scenarios_run_and_account_for_every_copy(name):
    sc = qcnsim.Scenario.load(scenario_path(name)).with_overrides(SHORT)
    res = qcnsim.run(sc, seed=2)
    fl = res["flows"]
    assert (fl["dst"].str.starts_with("G")).all()
    lhs = fl["gen_frames"] + fl["replicated_frames"]
    rhs = (fl["rx_frames"] + fl["dropped_frames"] + fl["rl_dropped_frames"] + fl["nic_dropped_frames"]
           + fl["in_flight_frames"])
    assert (lhs == rhs).all()
    mm = res["multicast_members"]
    assert mm.height == 2 * fl.height  # two members per group
    metrics = set(res.summary["metric"].to_list())
    assert {"mc_feedback_rate", "mc_loss_rate", "mc_avg_cr", "mc_cr_std", "mc_queue_mean", "mc_queue_std",
            "mc_queue_dev_qeq", "mc_jain_throughput"} <= metrics


def test_reproduce_multicast_star_seeds_figures_and_table(tmp_path):
    logs = []
    summary = reproduce(str(scenario_path("multicast-star")), tmp_path, quick=True, overrides=SHORT,
                        log=logs.append, echo=lambda s: None)
    for f in ("cr_vs_time.png", "metrics_vs_qeq.png", "metrics.csv", "metrics.md", "metrics_per_seed.csv",
              "cr_vs_time_unitq.png", "metrics_vs_qeq_studycp.png", "feedback_bound.md"):
        assert (tmp_path / f).is_file(), f
    m = pl.read_csv(tmp_path / "metrics.csv")
    fb = m.filter(pl.col("metric") == "mc_feedback_rate")
    # the 802.1Q CP (reading "") at three set points and, in this --quick run, the study's CP
    # readings at Qeq 25 only (their other set points have quick = false); both schemes
    assert sorted(zip(fb["reading"].fill_null(""), fb["scheme"], fb["qeq_frames"])) == sorted(
        [("", s, q) for s in ("representative", "standard") for q in (25, 50, 75)]
        + [(r, s, 25) for r in ("studycp", "unitq") for s in ("representative", "standard")]
        # the multicast study's buffers read as one shared 100-frame switch memory (docs/models/buffer.md)
        + [("", s + "-shared100", 50) for s in ("representative", "standard")])
    assert any("leaving out the full-run-only variants" in x and "standard-qeq75-studycp" in x for x in logs)
    assert (fb["seeds"] == 2).all()  # --quick: two seeds per point
    assert "quick" in (tmp_path / "metrics.md").read_text()
    assert "Headline: the variants without a suffix: the 802.1Q CP" in (tmp_path / "summary.md").read_text()
    loss = summary.filter(pl.col("metric") == "mc_loss_rate (mean over seeds)")
    quick_variants = [v["name"] for v in qcnsim.Scenario.load(scenario_path("multicast-star")).variants()
                      if v["quick"]]
    assert len(quick_variants) == 12
    assert sorted(loss["variant"].to_list()) == sorted(quick_variants)
    assert sorted(p.name for p in tmp_path.iterdir() if (p / "run.json").is_file()) == sorted(quick_variants)
    # what the published feedback rates need, beside the 802.1Q table's bound (2 CP copies per frame)
    bound = summary.filter(pl.col("metric") == "mc_feedback_rate_table_bound")
    assert bound.height == 8  # 3 set points x 2 schemes, and the 2 shared-memory variants
    assert all(15.0 < v < 16.3 for v in bound["value"].to_list()), bound
    _assert_reading_grid(tmp_path, "star", published_loss=True)
    # resumable: a second call runs nothing
    logs.clear()
    reproduce(str(scenario_path("multicast-star")), tmp_path, quick=True, overrides=SHORT,
              log=logs.append, echo=lambda s: None)
    assert not [x for x in logs if "running" in x], logs


def _assert_reading_grid(out, topology, published_loss):
    """readings.csv has every cell: the standard scheme under every CP reading x metric reading x
    Qeq, the representative scheme under the 802.1Q CP and the CP readings of the control's best
    readings; each row names its reading, beside the published values where the study has them."""
    from qcnsim.experiments import _mc_readings as R

    g = pl.read_csv(out / "readings.csv")
    assert set(g["topology"].to_list()) == {topology}
    std = g.filter(pl.col("scheme") == "standard")
    want = {(cp, c, p, q) for cp in R.CP_READINGS for c, p in R.METRIC_READINGS for q in R.QEQS}
    assert len(R.CP_READINGS) == 20 and len(R.METRIC_READINGS) == 10
    assert set(zip(std["cp"], std["count"], std["per"], std["qeq"])) == want and std.height == len(want)
    assert (std["reading"] == std["cp"] + " / " + std["count"] + " / " + std["per"]).all()
    assert std["feedback_published"].null_count() == 0 and std["within_2x"].null_count() == 0
    assert (std["loss_published"].null_count() == 0) == published_loss
    rep = g.filter(pl.col("scheme") == "representative")
    cps = set(rep["cp"].to_list())
    assert "802.1Q" in cps
    assert set(zip(rep["cp"], rep["count"], rep["per"], rep["qeq"])) == {
        (cp, c, p, q) for cp in cps for c, p in R.METRIC_READINGS for q in R.QEQS}
    md = (out / "readings.md").read_text()
    assert "**Verdict (control):**" in md and "## Enhancement under `802.1Q / cnm / sent`" in md
    assert md.count("claims hold") >= 1 and "feedback reduction" in md
    assert (out / "fbhat_trace_802.1Q.png").is_file()
    best = pl.read_csv(out / "summary.csv").filter(pl.col("metric") == "mc_feedback_rate (control's best reading)")
    best_cp = best["detail"][0].removeprefix("reading ").split(" / ")[0]
    assert best_cp in R.CP_READINGS and (out / f"fbhat_trace_{best_cp}.png").is_file(), best_cp
    summary = pl.read_csv(out / "summary.csv")
    best = summary.filter(pl.col("metric") == "mc_feedback_rate (control's best reading)")
    assert sorted(best["variant"].to_list()) == sorted(f"{s}-qeq{q}" for s in ("standard", "representative")
                                                       for q in R.QEQS)
    # the enhancement ran under every CP reading: its claims are checked under every reading
    assert set(rep["cp"].to_list()) == set(R.CP_READINGS)
    every = pl.read_csv(out / "readings_claims.csv")
    assert sorted(every["reading"].to_list()) == sorted(set(std["reading"].to_list()))
    assert every["claims_held"].is_between(0, 5).all()
    assert summary.filter(pl.col("metric") == "mc_claims_held_max").height == 1
    claims = summary.filter(pl.col("metric") == "mc_claim_holds")
    assert claims.height >= 5 and set(claims["value"].to_list()) <= {0.0, 1.0}
    pub = pl.read_csv(out / "published.csv")
    assert pub.filter(pl.col("metric") == "mc_feedback_rate (control's best reading)").height == 6


def test_reproduce_multicast_multilink_reading_grid(tmp_path):
    reproduce(str(scenario_path("multicast-multilink")), tmp_path, quick=True, overrides=SHORT,
              log=lambda s: None, echo=lambda s: None)
    _assert_reading_grid(tmp_path, "multi-link", published_loss=False)


def test_reproduce_multicast_user_set_wins_in_every_seed_run(tmp_path):
    """A --set of a key the variants set applies to the seed runs too, as to the variant runs."""
    import json

    reproduce(str(scenario_path("multicast-star")), tmp_path, quick=True,
              overrides=["meta.duration=20ms", "analysis.stats_from=5ms", "cc.qcn.cp.q_eq=60000B"],
              log=lambda s: None, echo=lambda s: None)
    runs = [json.loads(f.read_text()) for f in sorted(tmp_path.rglob("run.json"))]
    seed_runs = [r for r in runs if "sweep" in r]
    assert len(seed_runs) >= 1 and len(runs) > len(seed_runs)
    qeq = {r["resolved"]["cc"]["qcn"]["cp"]["q_eq"] for r in runs}
    schemes = {r["resolved"]["cc"]["qcn"]["multicast_feedback"] for r in seed_runs}
    assert len(qeq) == 1 and schemes == {"standard", "representative"}, (qeq, schemes)


# Two variants x three seeds of multicast-star (80 ms runs), their per-seed table and aggregates
# written by the experiment's own functions (qcnsim.experiments._multicast), in a fresh process.
_AGGREGATES = r"""
import sys
from pathlib import Path
import qcnsim
from qcnsim.experiments import _multicast as m
sc = qcnsim.Scenario.load(sys.argv[1])
runs = []
for v in ("standard-qeq25", "representative-qeq25"):
    s = sc.variant(v).with_overrides(["meta.duration=80ms", "analysis.stats_from=30ms"])
    for seed in (1, 2, 3):
        runs.append((v, seed, qcnsim.run(s, seed=seed, progress=False)))
df = m.long_metrics(runs)
out = Path(sys.argv[2])
df.write_csv(out / "metrics_per_seed.csv")
m.aggregate(df).write_csv(out / "metrics.csv")
"""


def test_multicast_aggregates_are_bit_identical_across_processes(tmp_path):
    """The seed aggregates and the per-seed table of the multicast experiments do not depend on
    the process (polars seeds its hashes anew in each): two processes write the same bytes, and
    each table is sorted by its stated key."""
    import subprocess
    import sys

    outs = []
    for k, hashseed in enumerate(("1", "2")):
        d = tmp_path / f"p{k}"
        d.mkdir()
        env = {**__import__("os").environ, "PYTHONHASHSEED": hashseed}
        subprocess.run([sys.executable, "-c", _AGGREGATES, str(scenario_path("multicast-star")), str(d)],
                       check=True, env=env)
        outs.append(d)
    for name in ("metrics_per_seed.csv", "metrics.csv"):
        a, b = ((d / name).read_bytes() for d in outs)
        assert a == b, f"{name} differs between two processes"
    from qcnsim.experiments import _multicast as m

    per = pl.read_csv(outs[0] / "metrics_per_seed.csv")
    assert per.equals(per.sort(*m.PER_SEED_ORDER, maintain_order=True))
    assert per.filter(pl.col("entity") == "mean over RPs").height == 6  # one per run
    agg = pl.read_csv(outs[0] / "metrics.csv")
    assert agg.equals(agg.sort(*m.AGG_ORDER, maintain_order=True))
    assert (agg["seeds"] == 3).all()
