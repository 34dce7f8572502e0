"""Provenance recorded in run.json and sweep.json: what produced a result, where and when.

``provenance(scenario, started)`` returns a dict with

- ``qcnsim_version``; ``git_commit`` and ``git_dirty`` of the source checkout the extension was
  built from (empty / false when it was not built from a git checkout; ``git_dirty`` is whether
  tracked files differed from the commit at build time);
- ``rust_core`` (the core's version, the rustc that compiled it, the build profile);
- ``python``, ``polars``, ``numpy``, ``matplotlib`` versions, ``platform`` (OS, machine);
- ``command_line`` (``sys.argv``), ``started`` (UTC, ISO 8601), ``cwd``;
- ``scenario_path`` (absolute; ``builtin:NAME`` for a scenario compiled into qcnsim, empty for
  text), ``scenario_sha256`` (of the file's bytes as read, else of the UTF-8 text).
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import sys
from typing import Any, Dict, Optional


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@functools.lru_cache(maxsize=1)
def _static() -> Dict[str, Any]:
    from . import _core

    def version(mod: str) -> Optional[str]:
        m = sys.modules.get(mod)
        if m is None:
            try:
                m = __import__(mod)
            except Exception:  # an optional package that fails to import: say so, do not fail
                return None
        return getattr(m, "__version__", None)

    build = dict(_core.build_info())
    return {
        "qcnsim_version": _core.version(),
        "git_commit": build.get("git_commit") or "",
        "git_dirty": bool(build.get("git_dirty")),
        "rust_core": {"version": build.get("core_version"), "rustc": build.get("rustc"),
                      "profile": build.get("profile")},
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "polars": version("polars"),
        "numpy": version("numpy"),
        "matplotlib": version("matplotlib") if "matplotlib" in sys.modules else None,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def provenance(scenario: Any = None, started: Optional[str] = None) -> Dict[str, Any]:
    out = dict(_static())
    out["command_line"] = list(sys.argv)
    out["started"] = started or now_utc()
    try:
        out["cwd"] = os.getcwd()
    except OSError:
        out["cwd"] = None
    if scenario is not None:
        out["scenario_path"] = scenario.source
        out["scenario_sha256"] = scenario.sha256
    return out
