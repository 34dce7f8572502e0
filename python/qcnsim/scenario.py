"""Scenario files: load, override, validate, list variants.

A scenario is TOML text plus a list of ``"dotted.path=value"`` overrides. Validation and
resolution (filling in every default) are done by the Rust core, so the Python side never
duplicates the schema.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _core
from ._errors import ScenarioError, translate_errors


def _loads_acyclic(text: str) -> Any:
    """``json.loads`` with the cycle collector paused: parsed JSON holds no cycles, and a generated
    fabric's resolved scenario (a k = 64 fat-tree: 267,000 objects) otherwise sets off collection
    after collection while it is built (a fifth of the time of validating it)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text)
    finally:
        if was:
            gc.enable()

PathLike = Union[str, "os.PathLike[str]"]

#: The largest scenario file read (a scenario is text written by a person or a generator).
MAX_SCENARIO_BYTES = 64 * 1024 * 1024


def read_scenario_text(p: Path) -> str:
    """The text of scenario file ``p`` (see :meth:`Scenario.load` for the errors). Only regular
    files are opened, so a device (``/dev/zero``) or a pipe never blocks or fills memory."""
    st = os.stat(p)
    if stat.S_ISDIR(st.st_mode):
        raise ScenarioError(f"{p} is a directory, expected a scenario .toml file", "", str(p),
                            "a scenario .toml file")
    if not stat.S_ISREG(st.st_mode):
        raise ScenarioError(f"{p} is not a regular file (a device, pipe or socket); a scenario is a TOML text "
                            "file", "", str(p), "a scenario .toml file")
    with open(p, "rb") as f:
        data = f.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{p} is larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB; a scenario is a TOML "
                            "text file", "", str(p), f"at most {MAX_SCENARIO_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{p} is not a UTF-8 text file (byte 0x{data[e.start]:02x} at offset {e.start}); "
                            "save the scenario as UTF-8", "", str(p), "UTF-8 text") from None


_TOML_LITERAL = re.compile(
    r"""^\s*(?:[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9_]+)?|[-+]?(?:inf|nan)|true|false|0[xob][0-9a-fA-F_]+)\s*$"""
    r"""|^\s*[\[{"']"""
)


def format_override_value(value: Any) -> str:
    """Render a JSON value from a variant's ``set`` table as the right side of ``path=value``.

    The core parses the right side as a TOML value when it is one and as a bare string otherwise,
    so a string is written bare (``10Gbps``) unless it would read as another TOML value (``"5"``,
    ``"true"``, ``""``), in which case it is quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if value == "" or value != value.strip() or _TOML_LITERAL.match(value) or "\n" in value:
            return json.dumps(value)
        return value
    return json.dumps(value)


def variant_override(name: str) -> str:
    """The override that selects variant ``name`` (``meta.variant=NAME``)."""
    return f"meta.variant={format_override_value(name)}"


def check_override(item: str) -> str:
    """Overrides are strings ``dotted.path=value``; their syntax, paths and values are checked by
    the core (a malformed item is a ScenarioError with path ``--set``)."""
    if not isinstance(item, str):
        raise TypeError(f"an override must be a string 'path=value', got {item!r}")
    return item


class Scenario:
    """An immutable scenario: TOML text, where it came from, and overrides."""

    def __init__(
        self,
        text: str,
        path: Optional[PathLike] = None,
        overrides: Sequence[str] = (),
        name: Optional[str] = None,
    ) -> None:
        self._text = text
        self._path = Path(path) if path is not None else None
        self._overrides: List[str] = [check_override(o) for o in overrides]
        self._name = name
        self._resolved: Optional[Dict[str, Any]] = None
        self._sha256: Optional[str] = None
        self._builtin = False

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        """Read a scenario file. Raises FileNotFoundError if it does not exist, PermissionError if
        it cannot be read, and :class:`ScenarioError` if it is not a regular file (a directory,
        device, pipe), is larger than :data:`MAX_SCENARIO_BYTES` or is not UTF-8 text."""
        import hashlib

        p = Path(path)
        sc = cls(read_scenario_text(p), path=p)
        # provenance: the hash of the file's bytes as read (checked to be a small regular file)
        sc._sha256 = hashlib.sha256(p.read_bytes()).hexdigest()
        return sc

    @classmethod
    def from_text(cls, text: str, name: Optional[str] = None) -> "Scenario":
        return cls(text, name=name)

    @classmethod
    def builtin(cls, name: str) -> "Scenario":
        """The reference scenario ``name`` compiled into qcnsim (e.g. ``"hw-hotspot-1src"``; the
        names are ``qcnsim reproduce --list``). Raises ScenarioError for an unknown name."""
        scenarios = dict(_core.builtin_scenarios())
        if name not in scenarios:
            from ._suggest import did_you_mean

            known = ", ".join(sorted(scenarios))
            raise ScenarioError(f"unknown built-in scenario {name!r}{did_you_mean(name, scenarios)}; "
                                f"built-in: {known}", "scenario", name, known)
        sc = cls(scenarios[name], name=name)
        sc._builtin = True
        return sc

    def _derive(self, overrides: Sequence[str]) -> "Scenario":
        sc = Scenario(self._text, self._path, overrides, self._name)
        sc._sha256, sc._builtin = self._sha256, self._builtin
        return sc

    def with_overrides(self, overrides: Iterable[str]) -> "Scenario":
        """A new Scenario with ``overrides`` appended (later overrides win)."""
        if isinstance(overrides, str):
            overrides = [overrides]
        return self._derive([*self._overrides, *overrides])

    # -- accessors ----------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self._text

    @property
    def path(self) -> Optional[Path]:
        return self._path

    @property
    def overrides(self) -> List[str]:
        return list(self._overrides)

    @property
    def source(self) -> str:
        """Where the text came from: the file's absolute path, ``builtin:NAME`` for a scenario
        compiled into qcnsim, or "" for text given directly."""
        if self._path is not None:
            return str(self._path.resolve())
        return f"builtin:{self._name}" if self._builtin else ""

    @property
    def sha256(self) -> str:
        """SHA-256 of the scenario file's bytes as read (of the UTF-8 text when not from a file)."""
        if self._sha256 is None:
            import hashlib

            self._sha256 = hashlib.sha256(self._text.encode("utf-8")).hexdigest()
        return self._sha256

    @property
    def name(self) -> str:
        """``meta.name`` if the scenario sets it, else the file stem, else "scenario"."""
        if self._name:
            return self._name
        try:
            meta = self.resolved().get("meta", {})
            if isinstance(meta, dict) and meta.get("name"):
                return str(meta["name"])
        except ScenarioError:
            pass
        if self._path is not None:
            return self._path.stem
        return "scenario"

    @translate_errors
    def resolved(self) -> Dict[str, Any]:
        """Validate and return the resolved scenario (every default filled in) as a dict."""
        if self._resolved is None:
            self._resolved = _loads_acyclic(_core.validate(self._text, list(self._overrides)))
        return self._resolved

    def validate(self) -> "Scenario":
        """Raise :class:`ScenarioError` if the scenario cannot be run; return self."""
        self.resolved()
        return self

    def variants(self) -> List[Dict[str, Any]]:
        """The scenario's ``[[variants]]``: a list of ``{"name": str, "set": {path: value},
        "description": str, "quick": bool}``. A variant is the base scenario plus its ``set``
        overrides; ``quick`` is false for a variant ``reproduce --quick`` leaves out."""
        out = []
        for v in self.resolved().get("variants", None) or []:
            out.append({
                "name": str(v.get("name", "")),
                "set": dict(v.get("set", None) or {}),
                "description": str(v.get("description", "") or ""),
                "quick": bool(v.get("quick", True)),
            })
        return out

    def variant(self, name: str) -> "Scenario":
        """Variant ``name``: the base scenario, then the variant's ``set``, then this scenario's
        own overrides (which win). It is selected with the override ``meta.variant=NAME``, so the
        core checks only this variant, not the others with this one's values applied."""
        for v in self.variants():
            if v["name"] == name:
                return self._derive([variant_override(name), *self._overrides])
        names = ", ".join(v["name"] for v in self.variants()) or "(none)"
        raise ScenarioError(
            f"unknown variant {name!r}: this scenario has {names}", "variants", name, names
        )

    def __repr__(self) -> str:
        src = str(self._path) if self._path else "<text>"
        return f"Scenario({src!r}, overrides={self._overrides!r})"

    def _repr_html_(self) -> str:
        """Notebook view: source, overrides, topology counts, run length, congestion control and
        its key parameters, variants (or the validation error)."""
        from . import _html as h

        rows: List[Any] = [("source", str(self._path) if self._path else "<text>")]
        if self._overrides:
            rows.append(("overrides", ", ".join(self._overrides)))
        try:
            r = self.resolved()
        except ScenarioError as e:
            rows.append(("invalid", str(e)))
            return h.box(f"Scenario {self.name}", h.kv_table(rows))
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if meta.get("description"):
            rows.append(("description", meta["description"]))
        counts = [f"{len(r[k])} {k}" for k in ("hosts", "switches", "links", "flows", "schedule")
                  if isinstance(r.get(k), list)]
        rows.append(("topology", ", ".join(counts)))
        rows.append(("duration", f"{meta.get('duration')} (quick: {meta.get('quick_duration')}), seed {meta.get('seed')}"))
        cc = r.get("cc") if isinstance(r.get("cc"), dict) else {}
        mode = cc.get("mode")
        rows.append(("congestion control", mode))
        section = cc.get(mode) if isinstance(mode, str) else None
        if isinstance(section, dict):
            flat = _flatten(section, f"cc.{mode}")
            shown = h.kv_table(flat[:16]) + (f"<div>… {len(flat) - 16} more (Scenario.resolved())</div>"
                                             if len(flat) > 16 else "")
            rows.append(("key parameters", h.Raw(shown)))
        variants = self.variants()
        if variants:
            rows.append(("variants", h.Raw(h.kv_table((v["name"], v["description"] or v["set"]) for v in variants))))
        return h.box(f"Scenario {self.name}", h.kv_table(rows))


def _flatten(d: Dict[str, Any], prefix: str) -> List[Any]:
    """``{"cp": {"q_eq": "33KB"}}`` -> ``[("cc.qcn.cp.q_eq", "33KB")]`` (lists kept whole)."""
    out: List[Any] = []
    for k, v in d.items():
        key = f"{prefix}.{k}"
        if isinstance(v, dict):
            out.extend(_flatten(v, key))
        else:
            out.append((key, v))
    return out
