"""The package version, in a module of its own: the modules that ``qcnsim/__init__.py`` imports
read it from here, not from the package itself (that would be an import cycle). It imports
nothing from qcnsim but the compiled core."""

from __future__ import annotations

from . import _core

__version__: str = _core.version()
