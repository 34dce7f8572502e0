"""Every code block in README.md and docs/ that is meant to run, runs here.

- ```python blocks are executed (each file's blocks in order, sharing one namespace, in a
  temporary directory that holds a link to scenarios/);
- ```sh blocks are run line by line with bash in that directory (a trailing backslash continues a
  line; ``qcnsim`` is the installed CLI);
- ```toml blocks must parse as TOML.

A block that is not meant to run (a synopsis with placeholders, an install step, a fragment of a
signature) carries the marker ``<!-- not-run: why -->`` on the line before its fence; the marker
is invisible when the Markdown is rendered. Blocks without a language (output, diagrams) are text.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
LANGS = ("python", "sh", "toml")


def blocks(path: Path) -> List[Tuple[int, str, str, str]]:
    """``(line, lang, code, not_run_reason)`` for each fenced block of ``path``."""
    out = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        reason = ""
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0:
            nm = NOT_RUN.match(lines[k].strip())
            if nm:
                reason = nm.group(1)
        out.append((start + 1, lang, "\n".join(lines[start + 1:j]), reason))
        i = j + 1
    return out


def _cases():
    for path in DOCS:
        runnable = [b for b in blocks(path) if b[1] in LANGS and not b[3]]
        if runnable:
            yield pytest.param(path, runnable, id=str(path.relative_to(REPO)))


def _sh_commands(code: str) -> List[str]:
    cmds, cur = [], ""
    for line in code.splitlines():
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip():
            cmds.append(cur.strip())
        cur = ""
    return cmds


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path,runnable", list(_cases()))
def test_doc_blocks_run(path, runnable, workdir):
    import matplotlib

    matplotlib.use("Agg")
    ns: dict = {"__name__": "__doc_example__"}
    env = dict(os.environ, QCNSIM_PROGRESS="0")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for line, lang, code, _ in runnable:
        where = f"{path.relative_to(REPO)}:{line}"
        if lang == "python":
            exec(compile(code, where, "exec"), ns)  # noqa: S102 - the documentation's own examples
        elif lang == "toml":
            import tomllib

            tomllib.loads(code)
        else:
            for cmd in _sh_commands(code):
                p = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=workdir, env=env,
                                   capture_output=True, text=True, timeout=600)
                assert p.returncode == 0, f"{where}: `{cmd}` failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"


def test_not_run_markers_give_a_reason_and_sit_on_code():
    """A marker must precede a block in a runnable language, so none is left dangling."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(text):
            if NOT_RUN.match(line.strip()):
                j = i + 1
                while j < len(text) and not text[j].strip():
                    j += 1
                assert j < len(text) and FENCE.match(text[j]) and FENCE.match(text[j]).group(1) in LANGS, \
                    f"{path.name}:{i + 1}: not-run marker without a python/sh/toml block after it"


def test_the_extractor_sees_blocks_and_markers(tmp_path):
    md = tmp_path / "x.md"
    md.write_text("a\n\n```python\nx = 1\n```\n\n<!-- not-run: synopsis -->\n```sh\nqcnsim [ARGS]\n```\n"
                  "```\nplain\n```\n", encoding="utf-8")
    got = blocks(md)
    assert [(b[1], b[2], b[3]) for b in got] == [("python", "x = 1", ""), ("sh", "qcnsim [ARGS]", "synopsis"),
                                                ("", "plain", "")]


def test_help_quick_start_runs(workdir):
    """The quick start in ``help(qcnsim)`` (the package docstring's ``Quick start::`` block)."""
    import textwrap

    import matplotlib
    import qcnsim

    matplotlib.use("Agg")
    doc = qcnsim.__doc__
    head, sep, rest = doc.partition("Quick start::\n")
    assert sep, "the package docstring has no 'Quick start::' block"
    lines = []
    for line in rest.splitlines():
        if line.strip() and not line.startswith("    "):
            break
        lines.append(line)
    code = textwrap.dedent("\n".join(lines))
    assert "qcnsim.run(" in code
    exec(compile(code, "qcnsim.__doc__", "exec"), {"__name__": "__doc_example__"})  # noqa: S102
    assert (workdir / "results" / "demo" / "run.json").is_file()
