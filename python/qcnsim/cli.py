"""Command line interface: ``qcnsim run|validate|plot|reproduce|sweep|params|scenario|bench``.

Errors in the user's input (an invalid scenario, a missing file, a bad ``--set``, an unknown
experiment, an output path qcnsim will not write to) print ``error: <message>`` on stderr and exit
with status 2, without a traceback. Errors of the environment (a file that cannot be read or
written, a lost Dask scheduler) and unexpected errors print a message and exit with status 1.
``--debug`` (or ``QCNSIM_DEBUG=1``) shows the traceback instead. Ctrl-C exits with status 130,
SIGTERM with 143 (after removing temporary files).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import _core
from .outputs import OutputError, check_result_dir

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
DEBUG_ENV = "QCNSIM_DEBUG"
BENCH_BUILD = "cargo build --release -p qcnsim-core --bin qcnsim-bench"


class CliError(Exception):
    """An error in the user's input: printed without a traceback, exit status 2."""


def _seed(s: str) -> int:
    try:
        v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2^64): {s}")
    return v


def _positive(s: str) -> int:
    try:
        v = int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _set_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="override a scenario field, e.g. --set cc.qcn.cp.q_eq=26KB (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    from ._version import __version__

    ap = argparse.ArgumentParser(
        prog="qcnsim",
        description=("Packet-level simulator of Layer-2 and data-center congestion control: IEEE 802.1Qau "
                     "QCN and its variants, BCN, DCQCN, 802.3x PAUSE and 802.1Qbb PFC, shared-buffer "
                     "switches, leaf-spine and fat-tree fabrics with ECMP, workloads and flow "
                     "completion times, go-back-N; fluid models; sweeps and the published "
                     "experiments."),
    )
    ap.add_argument("--version", action="version", version=f"qcnsim {__version__}")
    ap.add_argument("--debug", action="store_true",
                    help=f"show Python tracebacks of errors (for bug reports; also {DEBUG_ENV}=1)")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("run", help="run a scenario file and write its result tables")
    p.add_argument("scenario", metavar="SCENARIO",
                   help="scenario TOML file, or a reference experiment's name (qcnsim reproduce --list)")
    p.add_argument("--out", metavar="DIR", help="result directory (default: results/<scenario>[/<variant>])")
    _set_arg(p)
    p.add_argument("--seed", type=_seed, help="master seed (overrides meta.seed)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="table format")
    p.add_argument("--variant", metavar="NAME", help="apply one of the scenario's [[variants]]")
    p.add_argument("--solver", choices=("packet", "fluid"), default="packet",
                   help="packet: the packet-level simulator (default); fluid: the QCN, DCQCN or TIMELY fluid "
                        "model of the scenario (fluid.model; docs/models/fluid.md)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")

    p = sub.add_parser("validate", help="check a scenario file and print a one-line summary")
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file or experiment name")
    _set_arg(p)
    p.add_argument("--variant", metavar="NAME", help="validate with one of the scenario's [[variants]]")
    p.add_argument("--resolved", action="store_true", help="print the resolved scenario as JSON")

    p = sub.add_parser("plot", help="draw figures from a result directory")
    p.add_argument("results", metavar="RESULTS_DIR",
                   help="a result directory, or a directory of them (e.g. reproduce output)")
    p.add_argument("--out", metavar="DIR", help="where to write the PNGs (default: RESULTS_DIR)")
    p.add_argument("--metric", dest="metrics", action="append", metavar="NAME",
                   help="a sweep directory: draw this metric against an axis (repeatable; default: every "
                        "metric that varies)")
    p.add_argument("--axis", metavar="PATH", help="a sweep directory: the axis on the x axis (default: the first)")

    p = sub.add_parser("reproduce", help="run a reference experiment (every variant) and draw its figures")
    p.add_argument("name", metavar="NAME", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the known experiments")
    p.add_argument("--all", action="store_true",
                   help="run every experiment and write one HTML report (OUT/report.html)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/<NAME>, or results/all)")
    p.add_argument("--quick", action="store_true", help="shortened run (meta.quick_duration)")
    _set_arg(p)
    p.add_argument("--seed", type=_seed, help="master seed (overrides meta.seed)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="table format")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the log as it runs and the whole summary (default: a short report; the "
                        "detail is in OUT/summary.md, OUT/published.md and OUT/reproduce.log)")

    p = sub.add_parser("sweep", help="run a scenario over parameter axes and replications (see docs/sweeps.md)")
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file or experiment name")
    p.add_argument("--out", metavar="DIR", required=True, help="sweep directory (rerun to resume)")
    p.add_argument("--sweep", dest="axes", action="append", default=None, metavar="PATH=V1,V2,...",
                   help="an axis, e.g. --sweep cc.qcn.cp.q_eq=16KB,33KB (repeatable; replaces the "
                        "scenario's [sweep] axes)")
    p.add_argument("--replications", type=_positive, metavar="N", help="runs per point (default: sweep.replications, else 1)")
    p.add_argument("--zip", action="store_true", help="pair the i-th values of the axes instead of the full grid")
    p.add_argument("--executor", choices=("local", "dask"), default=None, help="where to run (default: local)")
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler address tcp://HOST:PORT (implies --executor dask)")
    p.add_argument("--jobs", type=_positive, metavar="N", help="local worker processes (default: all cores)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to try to reach (or reach again) the Dask scheduler (default: 10)")
    _set_arg(p)
    p.add_argument("--variant", metavar="NAME", help="apply one of the scenario's [[variants]] first")
    p.add_argument("--seed", type=_seed, help="base seed (overrides meta.seed)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="table format")
    p.add_argument("--tables", metavar="T1,T2", help="tables kept per run (summary and fct_stats are always kept; default: all)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")

    p = sub.add_parser("params", help="list the protocol parameters: unit, range, default, help")
    p.add_argument("prefix", metavar="PREFIX", nargs="?", default="",
                   help="only the parameters whose path starts with this, e.g. cc.qcn.rp")
    p.add_argument("--source", action="store_true", help="also show where each default comes from")

    p = sub.add_parser("scenario", help="print a reference experiment's scenario file (qcnsim scenario NAME > my.toml)")
    p.add_argument("name", metavar="NAME", help="experiment name (see qcnsim reproduce --list)")

    p = sub.add_parser("bench", help="run the Rust benchmark binary qcnsim-bench (arguments passed through)",
                       add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    return ap


def _print_summary(res) -> None:
    from ._tables import to_markdown

    if res.summary.height:
        print(to_markdown(res.summary).rstrip("\n"))
        # what a reader must not miss (summary rows `warning_*`, docs/tables.md) also on stderr
        s = res.summary
        if "metric" in s.columns:
            for row in s.filter(s["metric"].str.starts_with("warning_")).iter_rows(named=True):
                print(f"warning: {row['metric'][len('warning_'):].replace('_', ' ')}: "
                      f"{row['value']:g} {row['unit']} ({row['detail']})", file=sys.stderr)


def _load(path: str):
    from .scenario import Scenario

    p = Path(path)
    if not p.exists():
        raise CliError(f"scenario file not found: {path}")
    return Scenario.load(p)


def cmd_run(a) -> int:
    from .run import fluid, run

    if a.solver == "fluid" and a.seed is not None:
        raise CliError("--seed has no effect with --solver fluid: the fluid model is deterministic "
                       "and draws no random numbers")
    sc = _load_or_builtin(a.scenario).with_overrides(a.overrides)
    if a.variant:
        sc = sc.variant(a.variant)
    sc.validate()
    out = Path(a.out) if a.out else Path("results") / Path(a.scenario).stem / (a.variant or "")
    check_result_dir(out)  # before simulating: never lose the run, never overwrite the user's files
    if a.solver == "fluid":
        res = fluid(sc)
    else:
        res = run(sc, seed=a.seed, progress=False if a.no_progress else None)
    res.write(out, fmt=a.format)
    _print_summary(res)
    info = res.run_info
    if a.solver == "fluid":
        print(f"wrote {out} (fluid solver, {info['sim_time_s']:g} s solved in {info['wall_s']:.2f} s "
              f"wall, {info.get('events', 0)} steps)", file=sys.stderr)
        return 0
    eps = info.get("events_per_s") or 0.0
    print(f"wrote {out} (seed {info['seed']}, {info['sim_time_s']:g} s simulated in "
          f"{info['wall_s']:.2f} s wall, {eps / 1e6:.2f} M events/s)", file=sys.stderr)
    return 0


def _one_line(resolved: dict) -> str:
    """e.g. "hw-hotspot-1src: 2 hosts, 2 switches, 3 links, 1 flow, ..., duration 4s, seed 1"."""
    meta = resolved.get("meta") if isinstance(resolved.get("meta"), dict) else {}
    parts = []
    for key, (one, many) in {"hosts": ("host", "hosts"), "switches": ("switch", "switches"),
                             "links": ("link", "links"), "flows": ("flow", "flows"),
                             "schedule": ("schedule entry", "schedule entries")}.items():
        val = resolved.get(key)
        if isinstance(val, list):
            parts.append(f"{len(val)} {one if len(val) == 1 else many}")
    cc = resolved.get("cc")
    if isinstance(cc, dict) and cc.get("mode"):
        parts.append(f"cc {cc['mode']}")
    if meta.get("duration") is not None:
        parts.append(f"duration {meta['duration']}")
    if meta.get("seed") is not None:
        parts.append(f"seed {meta['seed']}")
    variants = resolved.get("variants")
    if isinstance(variants, list) and variants:
        parts.append("variants: " + ", ".join(str(v.get("name")) for v in variants if isinstance(v, dict)))
    head = str(meta.get("name") or "scenario")
    return f"{head}: " + ", ".join(parts)


def cmd_validate(a) -> int:
    import json

    sc = _load_or_builtin(a.scenario).with_overrides(a.overrides)
    if a.variant:
        sc = sc.variant(a.variant)
    resolved = sc.resolved()
    if a.resolved:
        print(json.dumps(resolved, indent=2))
    else:
        print(f"ok: {_one_line(resolved)}")
    return 0


def cmd_plot(a) -> int:
    from . import plot

    d = Path(a.results)
    if not d.is_dir():
        raise CliError(f"result directory not found: {a.results}")
    if (d / "sweep.json").is_file():
        try:
            figs = plot.plot_sweep(d, Path(a.out) if a.out else d, metrics=a.metrics, axis=a.axis)
        except KeyError as e:
            raise CliError(str(e.args[0]) if e.args else str(e)) from None
        for f in figs:
            print(f)
        if not figs:
            print("nothing to plot (no metric varies across the sweep's points)", file=sys.stderr)
        return 0
    if a.metrics or a.axis:
        raise CliError("--metric and --axis apply to a sweep directory (one with sweep.json)")
    try:
        runs = plot.load_runs(d)
    except FileNotFoundError as e:
        raise CliError(str(e)) from None
    figs = draw_figures(lambda tmp: plot.plot_all(runs, tmp), Path(a.out) if a.out else d)
    for f in figs:
        print(f)
    if not figs:
        print("nothing to plot (no port_throughput, queue_samples or rp_rates rows)", file=sys.stderr)
    return 0


def draw_figures(draw, out: Path) -> list:
    """Draw figures with ``draw(tmp_dir)`` into a temporary directory, then move them into ``out``
    when none would overwrite a file qcnsim did not draw (else nothing is written)."""
    import tempfile

    from .outputs import check_figures, record_figures

    check_figures(out, [])
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".figures.tmp-{os.getpid()}-", dir=out))
    try:
        drawn = [Path(f) for f in draw(tmp)]
        names = [f.name for f in drawn]
        check_figures(out, names)
        moved = []
        for f in drawn:
            os.replace(f, out / f.name)
            moved.append(out / f.name)
        if moved:
            record_figures(out, names)
        return moved
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_reproduce(a) -> int:
    from .reproduce import UnknownExperiment, list_experiments, reproduce

    if a.list:
        from .reproduce import describe_experiment

        names = list_experiments()
        width = max((len(n) for n in names), default=0)
        for n in names:
            print(f"{n:<{width}}  {describe_experiment(n)}")
        return 0
    if a.all:
        if a.name:
            raise CliError("reproduce: give an experiment NAME or --all, not both")
        if a.overrides:
            raise CliError("reproduce --all: --set is not allowed (field paths differ between experiments)")
        from .report import reproduce_all

        _, reports = reproduce_all(Path(a.out) if a.out else Path("results") / "all", quick=a.quick, seed=a.seed,
                                   fmt=a.format, verbose=a.verbose)
        failed = [r.name for r in reports if r.error]
        if failed:
            print(f"failed: {', '.join(failed)} (see the report)", file=sys.stderr)
            return EXIT_FAILED
        return 0
    if not a.name:
        raise CliError("reproduce: give an experiment NAME, --all or --list")
    out = Path(a.out) if a.out else Path("results") / Path(a.name).stem
    try:
        reproduce(a.name, out, quick=a.quick, overrides=a.overrides, seed=a.seed, fmt=a.format,
                  verbose=a.verbose)
    except UnknownExperiment as e:
        raise CliError(str(e)) from None
    return 0


EXIT_FAILED = 1
#: Every table a run can write (docs/tables.md), the choices of ``sweep --tables``.
RUN_TABLES = ("summary", "flows", "ports", "port_throughput", "queue_samples", "rp_rates", "events",
              "switch_memory", "pause_events", "pause_bins", "pause_priorities", "host_queues",
              "switch_buffer", "fct", "fct_stats", "link_events", "multicast_members", "multicast_cp_fb")


def _load_or_builtin(name: str):
    """A scenario file, else a reference experiment by name (as ``reproduce`` finds it)."""
    from .reproduce import UnknownExperiment, find_scenario

    p = Path(name)
    if p.suffix == ".toml" or p.exists():
        return _load(name)
    try:
        return find_scenario(name)
    except UnknownExperiment as e:
        raise CliError(str(e)) from None


def cmd_sweep(a) -> int:
    from .executors import DaskExecutor, LocalExecutor
    from .sweeps import SweepStopped, format_aggregate, plan_sweep, run_sweep

    sc = _load_or_builtin(a.scenario).with_overrides(a.overrides)
    if a.variant:
        sc = sc.variant(a.variant)
    executor = a.executor or ("dask" if a.scheduler else "local")
    if executor == "local" and a.scheduler:
        raise CliError("--scheduler needs --executor dask")
    tables = None
    if a.tables is not None:
        tables = [t.strip() for t in a.tables.split(",") if t.strip()]
        bad = [t for t in tables if t not in RUN_TABLES]
        if bad or not tables:
            raise CliError(f"--tables: unknown table {(bad or [a.tables])[0]!r}; tables: {', '.join(RUN_TABLES)}")
    plan = plan_sweep(sc, a.axes, a.replications, "zip" if a.zip else None, a.seed)
    if executor == "dask":
        try:
            ex = DaskExecutor(scheduler=a.scheduler, jobs=a.jobs, connect_timeout=a.connect_timeout)
        except ImportError as e:
            raise CliError(str(e)) from None
    else:
        ex = LocalExecutor(jobs=a.jobs)
    print(f"sweep {sc.name}: {len(plan.points)} point(s) x {plan.replications} replication(s) "
          f"= {plan.n_runs} run(s), {plan.mode}, base seed {plan.base_seed}, executor {ex!r} -> {a.out}",
          file=sys.stderr)
    try:
        res = run_sweep(plan, a.out, executor=ex, fmt=a.format, tables=tables,
                        progress=False if a.no_progress else None)
    except SweepStopped as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILED
    text = format_aggregate(res)
    if text:
        print(text.rstrip("\n"))
    failed = res.failed
    for row in failed.iter_rows(named=True):
        print(f"failed: point {row['point']}: {row['error']}", file=sys.stderr)
    print(f"wrote {a.out} ({res.points.height - failed.height} of {res.points.height} point(s) done"
          + (f", {failed.height} failed" if failed.height else "") + ")", file=sys.stderr)
    return EXIT_FAILED if failed.height else 0


def cmd_params(a) -> int:
    import textwrap

    from ._suggest import did_you_mean

    rows = [r for r in _core.params() if r[0].startswith(a.prefix)]
    if not rows:
        paths = [r[0] for r in _core.params()]
        sections = sorted({p.rsplit(".", 1)[0] for p in paths})
        raise CliError(f"no parameter path starts with {a.prefix!r}{did_you_mean(a.prefix, paths + sections)}; "
                       f"sections: {', '.join(sections)}")
    width = shutil.get_terminal_size((100, 20)).columns
    for path, kind, default, source, help_text in rows:
        print(f"{path} = {default}    ({kind})")
        print(textwrap.fill(help_text, width=max(60, width - 1), initial_indent="    ", subsequent_indent="    "))
        if a.source:
            print(f"    source: {source}")
    return 0


def cmd_scenario(a) -> int:
    sc = _load_or_builtin(a.name)
    text = sc.text
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def find_bench() -> Optional[str]:
    """$QCNSIM_BENCH, then PATH, then target/release/qcnsim-bench in the current directory or a
    parent (a source checkout)."""
    env = os.environ.get("QCNSIM_BENCH")
    if env:
        return env if os.path.isfile(env) else None
    exe = "qcnsim-bench.exe" if os.name == "nt" else "qcnsim-bench"
    found = shutil.which(exe)
    if found:
        return found
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        cand = d / "target" / "release" / exe
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def cmd_bench(a) -> int:
    exe = find_bench()
    if exe is None:
        raise CliError(f"qcnsim-bench not found (looked at $QCNSIM_BENCH, PATH and target/release/); "
                       f"build it with `{BENCH_BUILD}` in the source tree")
    args = list(a.args)
    if args[:1] == ["--"]:
        args = args[1:]
    return subprocess.call([exe, *args])


COMMANDS = {"run": cmd_run, "validate": cmd_validate, "plot": cmd_plot,
            "reproduce": cmd_reproduce, "sweep": cmd_sweep, "params": cmd_params,
            "scenario": cmd_scenario, "bench": cmd_bench}


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get(DEBUG_ENV, "").lower() not in ("", "0", "false", "no")
    if argv[:1] == ["--debug"]:
        debug = True
    restore = _on_sigterm_exit()
    try:
        if argv[:1] == ["bench"]:
            # Everything after `bench` goes to qcnsim-bench untouched (including --help).
            return cmd_bench(argparse.Namespace(command="bench", args=argv[1:]))
        parser = build_parser()
        a = parser.parse_args(argv)
        return COMMANDS[a.command](a)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _Terminated:
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except Exception as e:  # noqa: BLE001 - every error becomes a message (--debug: the traceback)
        if debug:
            raise
        code, msg = describe_error(e)
        print(f"error: {msg}", file=sys.stderr)
        return code
    finally:
        restore()


class _Terminated(BaseException):
    """SIGTERM: unwinds like Ctrl-C, so temporary files are removed on the way out."""


def _on_sigterm_exit():
    """While the CLI runs, SIGTERM raises :class:`_Terminated` (main thread only)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_term(signum, frame):
        raise _Terminated()

    try:
        old = signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):
        return lambda: None
    return lambda: signal.signal(signal.SIGTERM, old)


def _quiet_stdout() -> None:
    """After a broken pipe on stdout: point it at /dev/null so the interpreter's final flush does
    not print another error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def describe_error(e: BaseException):
    """``(exit status, message)`` for an error reaching the command line."""
    from .sweeps import SweepStopped

    if isinstance(e, (CliError, _core.ScenarioError, OutputError)):
        return EXIT_USAGE, str(e)
    if isinstance(e, SweepStopped):
        return EXIT_FAILED, str(e)
    if isinstance(e, FileNotFoundError):
        return EXIT_USAGE, f"{e.filename}: file not found" if e.filename else str(e)
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        why = e.strerror or str(e) or type(e).__name__
        return EXIT_FAILED, f"{where}{why}"
    if isinstance(e, MemoryError):
        return EXIT_FAILED, "out of memory (see docs/performance.md, \"Memory\")"
    return EXIT_FAILED, (f"unexpected error: {type(e).__name__}: {e} (rerun with --debug or {DEBUG_ENV}=1 for the "
                         "traceback, and please report it)")


if __name__ == "__main__":
    raise SystemExit(main())
