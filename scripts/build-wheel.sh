#!/usr/bin/env bash
# Build a portable qcnsim wheel into DIR (default dist/): abi3 (one wheel for CPython >= 3.9) and
# manylinux2014 (glibc >= 2.17, so older clusters can install it), linked with zig from the
# `ziglang` package so that the host's newer glibc does not leak into the binary. Needs a Rust
# toolchain; the wheel it makes does not. Check it with scripts/test-wheel.sh.
#
#   bash scripts/build-wheel.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
if ! command -v cargo >/dev/null 2>&1; then
    echo "error: building the wheel needs a Rust toolchain (cargo >= 1.85): install it with rustup (https://rustup.rs)" >&2
    exit 1
fi
python -m pip install -q "maturin>=1.5,<2" "ziglang>=0.11"
python -m maturin build --release --zig --compatibility manylinux2014 --out "$out"
ls -1 "$out"/qcnsim-*abi3*manylinux*2014*.whl 2>/dev/null || ls -1 "$out"/qcnsim-*abi3*manylinux_2_17*.whl
