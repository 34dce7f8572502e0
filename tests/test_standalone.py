"""The repository stands alone: no tracked file cites a document outside it.

The project's notes once lived beside the repository (``../shared/spec/*.md``, ``../shared/seeds``);
docs and code comments now cite the project's own pages (``docs/...``) and public sources
(``docs/sources.md``). These tests read every tracked file (``git ls-files``), so they skip
outside a git checkout (e.g. an unpacked sdist)."""

import re
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: Citations of files outside the repository. `seeds/` alone means a sweep's seeds and
#: `shared_buffer` a scenario section, so only `shared/seeds` and `shared/spec` count.
OUTSIDE = re.compile(
    r"\.\./shared\b"
    r"|\bshared/(?:spec|seeds)\b"
    r"|\b(?:mechanisms|reference|experiments|design)\.md\b"
    r"|\bspec/fluid\.md\b"
)

#: A link into docs/sources.md with a section anchor.
SOURCES_LINK = re.compile(r"\bsources\.md#([A-Za-z0-9_-]+)")


def _tracked() -> List[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if r.returncode != 0 or not r.stdout:
        pytest.skip("not a git checkout")
    return [p for p in r.stdout.decode("utf-8").split("\0")
            if p and not p.startswith(".ci/") and p != SELF]


def _lines(rel: str):
    path = ROOT / rel
    if not path.is_file():  # tracked but deleted in the working tree
        return
    data = path.read_bytes()
    if b"\0" in data:  # binary
        return
    yield from enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1)


def test_pattern_hits_the_old_citations_and_not_the_false_positives():
    for cited in ("see ../shared/spec/mechanisms.md", "shared/spec/experiments.md",
                  "mechanisms.md §4", "reference.md §8 pitfall 5", "experiments.md hw-4rp",
                  "/work/shared/design.md", "spec/fluid.md", "shared/seeds/001_x.txt"):
        assert OUTSIDE.search(cited), cited
    for fine in ("sweep.json lists the seeds/ directory", "[shared_buffer]", "shared_buffer.cell",
                 "docs/models/fluid.md", "docs/sources.md#qcn-standard", "docs/tables.md"):
        assert not OUTSIDE.search(fine), fine


def test_no_tracked_file_cites_files_outside_the_repository():
    hits = [f"{rel}:{n}: {line.strip()}"
            for rel in _tracked() for n, line in _lines(rel) if OUTSIDE.search(line)]
    assert not hits, ("these lines cite files outside the repository; cite docs/ pages and public "
                      "sources (docs/sources.md) instead:\n" + "\n".join(hits))


def _slug(heading: str) -> str:
    # GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def test_links_into_sources_md_name_existing_sections():
    sources = ROOT / "docs" / "sources.md"
    if not sources.is_file():
        pytest.fail("docs/sources.md is missing")
    anchors = {_slug(line.lstrip("#")) for line in sources.read_text(encoding="utf-8").splitlines()
               if line.startswith("#")}
    bad = [f"{rel}:{n}: #{m.group(1)}"
           for rel in _tracked() for n, line in _lines(rel)
           for m in SOURCES_LINK.finditer(line) if m.group(1) not in anchors]
    assert not bad, "links to sections docs/sources.md does not have:\n" + "\n".join(bad)
