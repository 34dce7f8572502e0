"""Suggestions for mistyped names ("did you mean ...?")."""

from __future__ import annotations

import difflib
from typing import Iterable


def nearest(name: str, candidates: Iterable[str]) -> str:
    """The candidate closest to ``name`` (difflib ratio >= 0.6), or "" when none is close."""
    got = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return got[0] if got else ""


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the nearest candidate, else ""."""
    best = nearest(name, candidates)
    return f" (did you mean {best!r}?)" if best else ""
