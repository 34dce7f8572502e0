"""Exceptions raised by qcnsim."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from . import _core

F = TypeVar("F", bound=Callable[..., Any])


class ScenarioError(_core.ScenarioError):
    """A scenario that cannot be run.

    ``path`` is the dotted field path (e.g. ``cc.qcn.cp.q_eq``; empty when the error is not tied
    to a field), ``value`` the offending value as written and ``allowed`` what would be accepted.
    ``str(err)`` is the full human-readable message.
    """

    def __init__(self, message: str, path: str = "", value: str = "", allowed: str = "") -> None:
        super().__init__(message, path, value, allowed)
        self.message = message
        self.path = path
        self.value = value
        self.allowed = allowed

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # picklable (e.g. across multiprocessing)
        return (type(self), (self.message, self.path, self.value, self.allowed))

    @classmethod
    def _from_core(cls, err: BaseException) -> "ScenarioError":
        args = tuple(getattr(err, "args", ()))
        args = tuple(str(a) for a in args) + ("",) * (4 - len(args))
        return cls(*args[:4])


def translate_errors(fn: F) -> F:
    """Re-raise ``_core.ScenarioError`` as :class:`qcnsim.ScenarioError` (nicer ``str``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ScenarioError:
            raise
        except _core.ScenarioError as e:
            raise ScenarioError._from_core(e) from None

    return wrapper  # type: ignore[return-value]
