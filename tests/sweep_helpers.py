"""Task functions for the sweep executor tests. Worker processes import them by name
(``sweep_helpers:...``), so they live in a plain module on the test path, not in a test file."""

from __future__ import annotations

import os
import time

from qcnsim.executors import run_task

TRIVIAL = """
[meta]
name = "trivial"
duration = "1ms"
seed = 7
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
[[links]]
between = ["s", "b"]
[[flows]]
name = "f"
src = "a"
dst = "b"
traffic = "poisson"
rate = "5Gbps"
frame = "1500B"
"""


def slow_run_task(text, overrides, seed):
    """A real run that takes at least 0.3 s of wall time (so a test can kill a busy worker)."""
    time.sleep(0.3)
    return run_task(text, overrides, seed)


def erroring_run_task(text, overrides, seed):
    """Reports an error (the way run_task reports a failed run) for flows.0.rate=2Gbps."""
    if "flows.0.rate=2Gbps" in overrides:
        return "error", "RuntimeError: injected failure"
    return run_task(text, overrides, seed)


def dying_run_task(text, overrides, seed):
    """The worker process dies (as if killed or out of memory) on flows.0.rate=2Gbps."""
    if "flows.0.rate=2Gbps" in overrides:
        os._exit(3)
    return run_task(text, overrides, seed)
