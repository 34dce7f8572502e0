"""Compare the tables of two qcnsim builds: run every variant of every scenario in `scenarios/`
(and the benchmarks) with both `qcnsim-bench` binaries and compare a hash of every column of every
table (`qcnsim-bench --hash`). A change that is meant to leave results alone must print no
difference. See docs/performance.md.

    python benches/compare_tables.py OLD_BENCH NEW_BENCH [--full] [--jobs 2] [--extra]

Durations: each scenario's `meta.quick_duration` (as `qcnsim reproduce --quick`), or with
`--full` its whole `meta.duration`. `--extra` adds stress cases (Bernoulli and Poisson sources
at line rate behind QCN rate limiters with short queues, sized flows) that drive the rate
limiter's queue full most of the time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cases(full: bool, extra: bool) -> list[tuple[str, list[str]]]:
    out = []
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        meta = doc.get("meta", {})
        dur = meta["duration"] if full else meta.get("quick_duration", meta["duration"])
        names = [None] + [v["name"] for v in doc.get("variants", [])]
        for v in names:
            args = ["--scenario", str(path), "--set", f"meta.duration={dur}"]
            if v is not None:
                args += ["--set", f"meta.variant={v}"]
            out.append((f"{path.stem}:{v or 'base'}@{dur}", args))
    bench = ROOT / "benches" / "dumbbell-10g.toml"
    d = "5s" if full else "1s"
    for label, sets in [
        ("dumbbell-10g", []),
        ("dumbbell-10g-qcn", ["cc.mode=qcn"]),
        ("dumbbell-10g-qcn-10G-cbr", ["cc.mode=qcn"] + [f"flows.{i}.rate=10Gbps" for i in range(10)]),
    ]:
        args = ["--scenario", str(bench), "--set", f"meta.duration={d}"]
        for s in sets:
            args += ["--set", s]
        out.append((f"{label}@{d}", args))
    if extra:
        for traffic in ("bernoulli", "poisson", "cbr"):
            for cap in ("3000B", "15000B"):
                for seed in (1, 2):
                    args = ["--scenario", str(bench), "--set", "meta.duration=300ms", "--set", "cc.mode=qcn",
                            "--set", f"cc.qcn.rp.rl_queue={cap}", "--seed", str(seed)]
                    for i in range(10):
                        args += ["--set", f"flows.{i}.traffic={traffic}", "--set", f"flows.{i}.rate=9.5Gbps"]
                    # sized flows: the last frame is shorter and may fit where a full one does not
                    # (traffic generators, which drop at a full rate-limiter queue: a sized flow
                    # is a NIC's message by default, which waits instead)
                    for i in range(0, 10, 3):
                        args += ["--set", f"flows.{i}.size=1234567B", "--set", f"flows.{i}.frame=1000B",
                                 "--set", f"flows.{i}.sender=generator"]
                    out.append((f"stress-{traffic}-rlq{cap}-seed{seed}", args))
    return out


def run(exe: str, args: list[str]) -> str:
    p = subprocess.run([exe, *args, "--hash"], capture_output=True, text=True)
    if p.returncode != 0:
        return "ERROR " + p.stderr.strip()
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    todo = cases(a.full, a.extra)
    with ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(lambda c: (c[0], run(a.old, c[1]), run(a.new, c[1])), todo))
    bad = 0
    for label, old, new in res:
        # the same refusal by both builds (e.g. a variant whose events fall after a shortened
        # duration) is the same behaviour: said as such, not counted as a difference
        old_refused, new_refused = old.startswith("ERROR"), new.startswith("ERROR")
        same = old == new
        bad += not same
        if old_refused and new_refused:
            what = "refused by both" if same else "refused by both, with different messages"
        elif old_refused:
            what = "refused by the old build only (e.g. a scenario it cannot read)"
        elif new_refused:
            what = "refused by the new build only"
        else:
            what = f"{len(old.splitlines())} tables"
        print(f"{'identical' if same else 'DIFFERENT'}  {label}  ({what})")
        if not same:
            print("  old:", old.replace("\n", "\n       "))
            print("  new:", new.replace("\n", "\n       "))
    print(f"{len(res) - bad} of {len(res)} runs identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
