"""Type stubs for the private Rust extension module ``qcnsim._core``."""

from typing import Callable, Dict, List, Literal, Optional, Tuple, Union

ColumnKind = Literal["i64", "f64", "bool", "str", "cat"]
# (column name, kind, payload): payload is little-endian raw bytes for numeric/bool kinds
# (8 bytes per i64/f64 element, 1 byte per bool), a list of str for "str", and for "cat"
# (strings from a small set, e.g. rp_rates.flow) a tuple (little-endian u32 codes, list of str):
# row i is values[codes[i]].
ColumnPayload = Tuple[str, ColumnKind, Union[bytes, List[str], Tuple[bytes, List[str]]]]

class ScenarioError(ValueError):
    """args == (message, path, value, allowed)."""

    message: str
    path: str
    value: str
    allowed: str

def version() -> str: ...
def validate(text: str, overrides: List[str] = ...) -> str:
    """Return the resolved scenario as JSON text; raise ScenarioError."""

def run(
    text: str,
    overrides: List[str] = ...,
    seed: Optional[int] = None,
    progress: Optional[Callable[[float], object]] = None,
) -> Dict[str, object]:
    """Run with the GIL released. Returns {"tables": {name: [ColumnPayload]}, "resolved": str,
    "seed": int, "events": int, "sim_time_ps": int, "wall_s": float, "frames_forwarded": int}."""
def fluid(text: str, overrides: List[str] = ...) -> Dict[str, object]:
    """Solve the scenario's fluid model (GIL released); the same dict as :func:`run`."""
def builtin_scenarios() -> Dict[str, str]:
    """The reference scenarios compiled into the module: {name: TOML text}."""
def params() -> List[Tuple[str, str, str, str, str]]:
    """Every protocol parameter: (path, kind with unit and range, default, source, help)."""
def build_info() -> Dict[str, Union[str, bool]]:
    """{"core_version", "rustc", "git_commit", "git_dirty", "profile"} of this build."""
def si_value(s: str) -> Optional[Tuple[float, str]]:
    """A quantity in SI base units: "16KB" -> (16000.0, "B"), "10us" -> (1e-05, "s"), "5Gbps" -> (5e9, "bps")."""
