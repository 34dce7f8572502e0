"""The PEP 517 build backend of qcnsim: maturin's, after one check.

Building qcnsim from source compiles its Rust core, so it needs ``cargo``. Without it maturin
fails with a long traceback; this wrapper says so in one line, with the fix, and stops. Every
hook is maturin's own once cargo is found (``pyproject.toml``: ``build-backend = "qcnsim_build"``,
``backend-path = ["build_backend"]``).
"""

from __future__ import annotations

import os
import shutil
import sys

MESSAGE = (
    "error: building qcnsim from source needs a Rust toolchain (cargo >= 1.85) and none was found on PATH; "
    "install one with rustup (https://rustup.rs: `curl --proto '=https' -sSf https://sh.rustup.rs | sh`), "
    "open a new shell and retry, or install a prebuilt qcnsim wheel (built by scripts/build-wheel.sh)"
)


def _check_rust() -> None:
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if not cargo or not os.path.exists(cargo):
        sys.stderr.write(MESSAGE + "\n")
        sys.stderr.flush()
        raise SystemExit(1)


def _maturin():
    _check_rust()
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings=None):
    return _maturin().get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_wheel(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_editable(config_settings=None):
    return _maturin().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _maturin().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_editable(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_sdist(config_settings=None):
    import maturin

    return maturin.get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    _check_rust()  # maturin reads the Cargo workspace with `cargo metadata`
    import maturin

    return maturin.build_sdist(sdist_directory, config_settings)
