"""Where qcnsim may write: it never deletes or overwrites a file it did not write.

Every command that writes (``run --out``, :meth:`qcnsim.Results.write`, ``sweep``, ``reproduce``,
``plot``) checks its output path before it simulates anything (docs/tables.md, "Where results
go"):

- a result directory (``run``, ``Results.write``, each variant of ``reproduce``) must be new, an
  empty directory, or a previous qcnsim result (recognised by its ``run.json``) holding nothing but
  what qcnsim wrote there: its tables, ``run.json`` and the figures ``qcnsim plot`` recorded in
  ``.qcnsim-figures``. That previous result is replaced as a whole.
- a sweep directory must be new, empty, or a previous sweep (``sweep.json``), which is resumed.
- a ``reproduce`` directory must be new, empty, or a previous ``reproduce`` output (marker
  ``.qcnsim-reproduce``); qcnsim overwrites only the files it writes there, by name.
- ``plot`` writes a figure over an existing file only if qcnsim drew that file
  (``.qcnsim-figures``) or the directory is a ``reproduce`` output.

In every case the nearest existing parent must be a writable directory (tested by creating and
removing a file there, which also catches read-only file systems). A refusal raises
:class:`OutputError` with the path, the reason and what to do.

Temporary directories (``.<name>.tmp-<pid>-*``, ``.<name>.old-<pid>-*``) carry the id of the
process that made them; the next write to the same place removes those of processes that are no
longer running (a killed run), and names the ones it cannot attribute.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, List, Optional, Set, Union

PathLike = Union[str, "os.PathLike[str]"]

RUN_JSON = "run.json"
SWEEP_JSON = "sweep.json"
REPRODUCE_MARKER = ".qcnsim-reproduce"
FIGURES_MARKER = ".qcnsim-figures"
_SHOW = 5  # unknown files named in a refusal
#: Temporary files and directories qcnsim itself makes inside an output directory (a write probe,
#: figures being drawn): left by a killed process, they are qcnsim's, never the user's.
_OWN_TEMPORARIES = (".qcnsim-probe-", ".figures.tmp-")


class OutputError(Exception):
    """An output path qcnsim will not write to (it would delete or overwrite a file qcnsim did not
    write, or it cannot be written at all). Raised before anything is simulated or written."""


def _listing(names: Iterable[str]) -> str:
    names = sorted(names)
    shown = ", ".join(names[:_SHOW])
    return shown + (f" and {len(names) - _SHOW} more" if len(names) > _SHOW else "")


def _nearest_existing(p: Path) -> Path:
    q = p
    while not os.path.lexists(q):
        if q.parent == q:
            break
        q = q.parent
    return q


def check_writable(path: PathLike, flag: str = "--out") -> None:
    """``path`` (a directory to be created or written into) can be written: its nearest existing
    ancestor is a directory in which a file can be created."""
    p = Path(path)
    base = _nearest_existing(p.absolute())
    if not base.is_dir():
        what = "a file" if base.exists() else "not a directory"
        if base == p.absolute():
            raise OutputError(f"{flag} {path}: {path} is {what}, not a directory; choose another {flag}")
        raise OutputError(f"{flag} {path}: cannot create it, {base} is {what}; choose another {flag}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".qcnsim-probe-", dir=base)
    except OSError as e:
        why = e.strerror or str(e)
        raise OutputError(f"{flag} {path}: cannot write in {base} ({why}); choose a writable {flag}") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass


def read_run_json(d: Path) -> Optional[dict]:
    """The run.json of a qcnsim result in ``d`` (a dict with ``qcnsim_version``), else None."""
    try:
        info = json.loads((d / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(info, dict) and "qcnsim_version" in info and isinstance(info.get("tables", []), list):
        return info
    return None


def recorded_figures(d: Path) -> Set[str]:
    """The figure files qcnsim recorded as drawn in ``d``."""
    try:
        names = json.loads((d / FIGURES_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {n for n in names if isinstance(n, str) and "/" not in n} if isinstance(names, list) else set()


def record_figures(d: Path, names: Iterable[str]) -> None:
    """Add ``names`` (files in ``d``) to the figures qcnsim drew there."""
    names = sorted(recorded_figures(d) | {Path(n).name for n in names})
    write_text_atomic(d / FIGURES_MARKER, json.dumps(names) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file (named with this process id, so stale
    ones can be attributed) in the same directory, then rename; never a half-written file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _is_temp_of(name: str, target: str) -> bool:
    return name.startswith(f".{target}.tmp-") or name.startswith(f".{target}.old-")


def qcnsim_files(d: Path) -> Optional[Set[str]]:
    """What qcnsim wrote in result directory ``d`` (None if ``d`` holds no qcnsim result)."""
    info = read_run_json(d)
    if info is None:
        return None
    fmt = str(info.get("format", "parquet"))
    known = {RUN_JSON, FIGURES_MARKER, *recorded_figures(d)}
    known.update(f"{t}.{fmt}" for t in info.get("tables", []) if isinstance(t, str))
    return known


def check_result_dir(path: PathLike, flag: str = "--out") -> str:
    """Check that a run's result may be written to ``path``; return ``"new"``, ``"empty"`` or
    ``"previous"`` (a previous qcnsim result, replaced as a whole). Raises :class:`OutputError`."""
    p = Path(path)
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise OutputError(f"{flag} {path}: {path} exists and is not a directory; qcnsim writes a result "
                          f"directory there and never replaces a file it did not write: choose another {flag}")
    check_writable(p, flag)
    if not p.exists():
        return "new"
    try:
        entries = {e.name for e in os.scandir(p)}
    except OSError as e:
        raise OutputError(f"{flag} {path}: cannot read the directory ({e.strerror or e})") from None
    entries = {n for n in entries if not n.startswith(_OWN_TEMPORARIES)}
    if not entries:
        return "empty"
    known = qcnsim_files(p)
    if known is None:
        raise OutputError(f"{flag} {path}: the directory is not empty ({_listing(entries)}) and holds no qcnsim "
                          f"result ({RUN_JSON}); qcnsim writes a result only into a new or empty directory or over "
                          f"a previous result: choose another {flag} or empty the directory")
    unknown = entries - known
    if unknown:
        raise OutputError(f"{flag} {path}: a rerun replaces the previous result there, but the directory also "
                          f"holds files qcnsim did not write ({_listing(unknown)}); move them away or choose "
                          f"another {flag}")
    return "previous"


def check_sweep_dir(path: PathLike, flag: str = "--out") -> str:
    """A sweep directory: ``"new"``, ``"empty"`` or ``"previous"`` (a sweep to resume)."""
    p = Path(path)
    if p.is_symlink() and not p.is_dir() or (p.exists() and not p.is_dir()):
        raise OutputError(f"{flag} {path}: {path} exists and is not a directory; choose another {flag}")
    check_writable(p, flag)
    if not p.exists():
        return "new"
    entries = [e for e in os.listdir(p) if not e.startswith(".qcnsim-probe-") and e != ".sweep.lock"]
    if not entries:
        return "empty"
    if (p / SWEEP_JSON).is_file():
        return "previous"
    raise OutputError(f"{flag} {path}: the directory is not empty ({_listing(entries)}) and holds no qcnsim "
                      f"sweep ({SWEEP_JSON}); a sweep writes into a new or empty directory or resumes a previous "
                      f"sweep: choose another {flag}")


def check_reproduce_dir(path: PathLike, flag: str = "--out") -> str:
    """A ``reproduce`` output directory: ``"new"``, ``"empty"`` or ``"previous"``."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{flag} {path}: {path} exists and is not a directory; choose another {flag}")
    check_writable(p, flag)
    if not p.exists():
        return "new"
    entries = [e for e in os.listdir(p) if not e.startswith(".qcnsim-probe-")]
    if not entries:
        return "empty"
    if (p / REPRODUCE_MARKER).is_file():
        return "previous"
    raise OutputError(f"{flag} {path}: the directory is not empty ({_listing(entries)}) and is not the output "
                      f"of a previous `qcnsim reproduce` ({REPRODUCE_MARKER}); choose another {flag} or empty "
                      "the directory")


def mark_reproduce_dir(path: PathLike, name: str) -> None:
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    if not (p / REPRODUCE_MARKER).is_file():
        write_text_atomic(p / REPRODUCE_MARKER, json.dumps({"reproduce": name}) + "\n")


def check_figures(out_dir: PathLike, names: Iterable[str], flag: str = "--out") -> None:
    """Figures ``names`` may be written into ``out_dir``: each is new or one qcnsim drew."""
    d = Path(out_dir)
    check_writable(d, flag)
    if not d.is_dir():
        return
    if (d / REPRODUCE_MARKER).is_file():
        return
    ours = recorded_figures(d)
    clash = [n for n in names if os.path.lexists(d / n) and n not in ours]
    if clash:
        raise OutputError(f"{flag} {out_dir}: {_listing(clash)} already exist(s) there and qcnsim did not draw "
                          f"them; choose another {flag} or move them away")


# -- temporary directories -------------------------------------------------------------------------
_TMP = re.compile(r"^\.(?P<target>.+)\.(?:tmp|old)-(?P<pid>\d+)-[^/]*$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def clean_stale_temporaries(target: PathLike) -> List[str]:
    """Remove the temporary directories a killed write to ``target`` left beside it (those of
    processes no longer running); return the ones left alone because their process cannot be
    told (older qcnsim versions did not put it in the name)."""
    t = Path(target)
    parent = t.parent if str(t.parent) else Path(".")
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    unknown = []
    for n in names:
        if not _is_temp_of(n, t.name):
            continue
        m = _TMP.match(n)
        if m is None or m.group("target") != t.name:
            unknown.append(str(parent / n))
            continue
        if _alive(int(m.group("pid"))):
            continue
        q = parent / n
        if q.is_dir() and not q.is_symlink():
            shutil.rmtree(q, ignore_errors=True)
        else:
            try:
                q.unlink()
            except OSError:
                pass
    return unknown


def temp_dir_for(target: Path) -> Path:
    """A new temporary directory beside ``target`` named after it and this process."""
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
