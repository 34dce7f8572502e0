"""qcnsim: packet-level simulator of Layer-2 congestion control (IEEE 802.1Qau QCN) with a Rust core.

Quick start::

    import qcnsim
    sc = qcnsim.Scenario.load("scenarios/hw-hotspot-1src.toml").with_overrides(["meta.duration=1s"])
    res = qcnsim.run(sc, seed=1)
    print(res.summary)
    res.write("results/demo")

    sw = qcnsim.sweep(sc, {"cc.qcn.cp.q_eq": ["16KB", "33KB"]}, replications=5, out="results/demo-sweep")
    print(sw.metric("dropped_frames"))
"""

from . import _core
from ._errors import ScenarioError
from .outputs import OutputError
from .results import Results
from .run import run
from .scenario import Scenario
from .sweeps import SweepResults, sweep

__version__: str = _core.version()

__all__ = ["Scenario", "run", "Results", "ScenarioError", "OutputError", "sweep", "SweepResults", "__version__"]
