"""Installing from source without a Rust toolchain fails with one clear line naming the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("hook", ["get_requires_for_build_wheel", "prepare_metadata_for_build_wheel",
                                  "build_wheel", "build_editable", "build_sdist"])
def test_build_backend_without_cargo_says_one_line(tmp_path, hook):
    env = {k: v for k, v in os.environ.items() if k != "CARGO"}
    env["PATH"] = str(tmp_path)  # nothing on PATH: no cargo
    code = (f"import sys; sys.path.insert(0, {str(REPO / 'build_backend')!r}); import qcnsim_build; "
            f"qcnsim_build.{hook}({str(tmp_path)!r})")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a Rust toolchain" in lines[0] and "rustup" in lines[0], r.stderr
    assert r.stdout == ""


def test_pyproject_uses_the_wrapper():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'build-backend = "qcnsim_build"' in text and 'backend-path = ["build_backend"]' in text
