#!/usr/bin/env bash
# The project's test suite: build and install the package (non-editable, so the tests exercise the
# installed wheel with its compiled qcnsim._core), run the Rust core's tests, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install '.[test]'
# The `ci` profile (Cargo.toml): release optimisation without LTO, much cheaper to build.
cargo test -p qcnsim-core --profile ci
python -m ruff check python tests
# Run pytest from the repo root: python/ is not on sys.path (no `pythonpath` in pyproject), so
# `import qcnsim` resolves to the installed package.
python -m pytest -q tests
