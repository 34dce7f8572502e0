"""qcnsim: packet-level simulator of Layer-2 congestion control (IEEE 802.1Qau QCN) with a Rust core.

Quick start::

    import qcnsim
    sc = qcnsim.Scenario.load("scenarios/hw-hotspot-1src.toml").with_overrides(["meta.duration=1s"])
    res = qcnsim.run(sc, seed=1)
    print(res.summary)
    res.write("results/demo")
"""

from . import _core
from ._errors import ScenarioError
from .results import Results
from .run import run
from .scenario import Scenario

__version__: str = _core.version()

__all__ = ["Scenario", "run", "Results", "ScenarioError", "__version__"]
