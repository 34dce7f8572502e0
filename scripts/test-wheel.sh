#!/usr/bin/env bash
# Install a built wheel into a fresh virtual environment for each given Python, with no Rust
# toolchain on PATH, and run a short reproduction and the CLI there.
#
#   bash scripts/test-wheel.sh dist/qcnsim-*.whl python3.9 python3.12
set -euo pipefail
wheel="$(realpath "$1")"; shift
[ $# -gt 0 ] || set -- python3
for py in "$@"; do
    dir="$(mktemp -d -t qcnsim-wheel-XXXXXX)"
    "$py" -m venv "$dir/venv"
    # Only the venv and the basic system tools on PATH: no cargo, no rustc.
    env -i HOME="$HOME" PATH="$dir/venv/bin:/usr/bin:/bin" bash -euo pipefail -c "
        cd '$dir'
        ! command -v cargo >/dev/null
        python -m pip install -q '$wheel'
        python -c 'import sys, qcnsim; print(sys.version.split()[0], \"qcnsim\", qcnsim.__version__)'
        qcnsim validate hw-hotspot-1src
        qcnsim reproduce hw-hotspot-1src --quick --out out >/dev/null
        test -f out/summary.csv
        qcnsim params cc.qcn.cp | head -2
    "
    echo "ok: $py ($("$py" --version 2>&1))"
    rm -rf "$dir"
done
