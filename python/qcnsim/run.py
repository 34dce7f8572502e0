"""Run a scenario: ``qcnsim.run(scenario, seed=None, progress=None) -> Results``; solve its fluid
model instead: ``qcnsim.fluid(scenario) -> Results``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable, Optional, TextIO, Union

from . import _core
from ._errors import translate_errors
from .results import Results
from .scenario import Scenario

ProgressArg = Union[None, bool, Callable[[float], object]]


def _fmt_secs(s: float) -> str:
    s = max(0.0, s)
    if s < 60:
        return f"{s:4.0f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int((s % 3600) // 60):02d}m"


class ProgressBar:
    """A one-line progress bar on stderr: percent of simulated time and an ETA estimated from the
    simulated-time rate. It stays silent for the first ``delay`` seconds of wall time, so short
    runs print nothing. No third-party dependency."""

    def __init__(
        self,
        label: str = "",
        stream: Optional[TextIO] = None,
        delay: float = 2.0,
        width: int = 30,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.width = width
        self.clock = clock
        self.start = clock()
        self.shown = False

    def render(self, frac: float, elapsed: float) -> str:
        frac = min(max(frac, 0.0), 1.0)
        filled = int(round(frac * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        if frac > 0:
            eta = _fmt_secs(elapsed * (1.0 - frac) / frac)
        else:
            eta = "  ?"
        label = f"{self.label} " if self.label else ""
        return f"\r{label}[{bar}] {100 * frac:5.1f}%  elapsed {_fmt_secs(elapsed)}  ETA {eta}"

    def __call__(self, frac: float) -> None:
        elapsed = self.clock() - self.start
        if not self.shown and elapsed < self.delay:
            return
        self.shown = True
        self.stream.write(self.render(frac, elapsed))
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _want_bar(progress: ProgressArg) -> bool:
    if progress is True:
        return True
    if progress is None:
        env = os.environ.get("QCNSIM_PROGRESS", "")
        if env.lower() in ("1", "true", "yes", "always"):
            return True
        if env.lower() in ("0", "false", "no", "never"):
            return False
        if in_notebook():
            return True
        try:
            return sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return False


def in_notebook() -> bool:
    """True inside a Jupyter kernel (stderr is the kernel's stream, which the notebook shows live
    and where the bar's carriage returns redraw one line)."""
    return "ipykernel" in sys.modules and type(sys.stderr).__module__.startswith("ipykernel")


@translate_errors
def run(
    scenario: Union[Scenario, str, "os.PathLike[str]"],
    seed: Optional[int] = None,
    progress: ProgressArg = None,
) -> Results:
    """Run ``scenario`` (a :class:`Scenario` or a path to a TOML file) and return its Results.

    ``seed`` overrides ``meta.seed``. ``progress``: ``None`` shows a bar on stderr when it is a
    terminal or a Jupyter notebook and the run takes more than ~2 s; ``True`` forces the bar; ``False`` disables it; a
    callable is called with the fraction of simulated time done (0..1).

    The GIL is released while the simulation runs. Ctrl-C stops the run and raises
    KeyboardInterrupt. Raises :class:`qcnsim.ScenarioError` for an invalid scenario.
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(Path(scenario))
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 or seed >= 2**64):
        raise ValueError(f"seed must be an integer in [0, 2^64), got {seed!r}")
    bar: Optional[ProgressBar] = None
    cb: Optional[Callable[[float], object]]
    if callable(progress):
        cb = progress
    elif _want_bar(progress):
        bar = ProgressBar(label=scenario.name)
        cb = bar
    else:
        cb = None
    from ._provenance import now_utc

    started = now_utc()
    try:
        raw = _core.run(scenario.text, scenario.overrides, seed, cb)
    finally:
        if bar is not None:
            bar.close()
    return Results._from_core(raw, scenario_name=scenario.name, overrides=scenario.overrides, scenario=scenario,
                              started=started)


@translate_errors
def fluid(scenario: Union[Scenario, str, "os.PathLike[str]"]) -> Results:
    """Solve the fluid model of ``scenario`` (a :class:`Scenario` or a path to a TOML file) and
    return its Results (docs/models/fluid.md).

    ``fluid.model`` selects the QCN model (Alizadeh et al., SIGMETRICS 2011; parameters from
    ``cc.qcn``), the DCQCN model (Zhu et al., CoNEXT 2016; parameters from ``fluid.dcqcn``) or
    the TIMELY model (same paper; parameters from ``fluid.timely``).
    N, C and the feedback delay come from the network (``analysis.bottleneck``). The tables are
    those of a packet run where they apply: ``queue_samples`` (``qlen_bytes`` as a float),
    ``rp_rates`` (one row per instant, ``flow = "all"``: the N synchronised sources; TIMELY:
    one row per flow and instant, with its ``gradient``),
    ``summary``, plus ``fluid_inputs`` (the model's inputs as derived). ``run_info["solver"]`` is
    ``"fluid"``. Deterministic: the seed is not used.
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(Path(scenario))
    from ._provenance import now_utc

    started = now_utc()
    raw = _core.fluid(scenario.text, scenario.overrides)
    res = Results._from_core(raw, scenario_name=scenario.name, overrides=scenario.overrides, scenario=scenario,
                             started=started)
    res.run_info["solver"] = "fluid"
    return res
