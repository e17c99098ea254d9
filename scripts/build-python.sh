#!/usr/bin/env bash
# Builds the Python package `mnemo` for distribution into dist/: the wheel (abi3, CPython >= 3.9,
# this platform; the engine compiled with the `dist` profile: optimised, thin LTO, stripped) and
# the sdist (the crates it needs, Cargo.lock and the Python sources; building it needs Rust).
# From nothing it needs only crates.io and PyPI (maturin, pinned, in a virtualenv outside the
# clone: scripts/python-tools.sh).
#
#   scripts/build-python.sh
#   pip install dist/mnemo-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${MNEMO_PYTHON:-python3}"
tools="$(scripts/python-tools.sh | tail -n 1)"
mkdir -p dist
rm -f dist/mnemo-*.whl dist/mnemo-*.tar.gz
"$tools/bin/maturin" build -m crates/python/Cargo.toml --profile dist --locked -i "$PYTHON" -o dist
"$tools/bin/maturin" sdist -m crates/python/Cargo.toml -o dist
ls -l dist/mnemo-*
