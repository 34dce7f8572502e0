"""qcnsim: packet-level simulator of Layer-2 congestion control (IEEE 802.1Qau QCN) with a Rust core.

Quick start::

    import qcnsim
    # A built-in reference scenario (also on disk as scenarios/hw-hotspot-1src.toml), shortened:
    # the hotspot ends at 1.5 s instead of 3 s and the run at 2 s.
    sc = qcnsim.Scenario.builtin("hw-hotspot-1src").with_overrides(["schedule.1.at=1.5s", "meta.duration=2s"])
    res = qcnsim.run(sc, seed=1)
    print(res.summary)
    res.write("results/demo")

    from qcnsim import plot
    fig = plot.queue(res)                    # a matplotlib Figure; out="queue.png" also saves it

    sw = qcnsim.sweep(sc, {"cc.qcn.cp.q_eq": ["16KB", "33KB"]}, replications=2, out="results/demo-sweep")
    print(sw.metric("dropped_frames"))

In a notebook, Scenario, Results and SweepResults render as HTML tables; the command line is
``qcnsim --help`` (``qcnsim params``, ``qcnsim reproduce --list``).
"""

from . import _core  # noqa: F401  (qcnsim._core stays an attribute of the package, as before)
from ._errors import ScenarioError
from ._version import __version__
from .outputs import OutputError
from .results import Results, with_seconds
from .run import fluid, run
from .scenario import Scenario
from .sweeps import SweepResults, sweep

__all__ = [
    "Scenario", "run", "fluid", "Results", "ScenarioError", "OutputError", "sweep", "SweepResults",
    "with_seconds", "__version__",
]
