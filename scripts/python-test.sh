#!/usr/bin/env bash
# The Python package's tests (part of scripts/test): builds the wheel of `mnemo` (crates/python)
# with maturin, installs it into a fresh virtualenv with pytest, and runs crates/python/tests
# against it: the embedded engine on SQLite and on PostgreSQL, and Client/AsyncClient against a
# real `mnemo serve` (the workspace's own test build of the binary).
#
#   scripts/python-test.sh              # everything
#   scripts/python-test.sh -k thread    # extra arguments go to pytest
#
# The wheel is built with the dev profile into the same target directory as the workspace's
# tests, so it reuses the dependencies that build compiled (tokenizers, SQLite) rather
# than compiling them again; scripts/build-python.sh builds the optimised wheel for
# distribution. PostgreSQL: MNEMO_TEST_DATABASE_URL, else the server scripts/pg.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
PYTHON="${MNEMO_PYTHON:-python3}"
# Pinned test dependencies (httpx is the package's own dependency; this pins its version here).
PYTEST_VERSION="8.4.2"
HTTPX_VERSION="0.28.1"
MYPY_VERSION="1.13.0"

scripts/fetch-model.sh >/dev/null
tools="$(scripts/python-tools.sh | tail -n 1)"
if [[ -z "${MNEMO_TEST_DATABASE_URL:-}" ]]; then
    scripts/pg.sh start >/dev/null
    MNEMO_TEST_DATABASE_URL="$(scripts/pg.sh url)"
    export MNEMO_TEST_DATABASE_URL
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/mnemo-python-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== python: the mnemo binary (the workspace's test build)"
cargo test --workspace --no-run --locked --quiet
target="$(cargo metadata --format-version 1 --no-deps --locked \
    | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/debug/mnemo"
if [[ ! -x "$bin" ]]; then
    echo "error: $bin was not built" >&2
    exit 1
fi

echo "== python: wheel"
started=$SECONDS
if ! "$tools/bin/maturin" build -m crates/python/Cargo.toml --profile dev --locked -i "$PYTHON" \
    -o "$work/wheels" >"$work/maturin.log" 2>&1; then
    cat "$work/maturin.log" >&2
    exit 1
fi
compiled="$(grep -c '^ *Compiling ' "$work/maturin.log" || true)"
wheel="$(ls "$work"/wheels/mnemo-*.whl 2>/dev/null | head -n 1)"
if [[ -z "$wheel" ]]; then
    echo "error: maturin built no wheel" >&2
    exit 1
fi
echo "built $(basename "$wheel") in $((SECONDS - started)) s ($compiled crates compiled)"

echo "== python: fresh virtualenv"
"$PYTHON" -m venv "$work/venv"
printf "pytest==%s\nhttpx==%s\nmypy==%s\n" "$PYTEST_VERSION" "$HTTPX_VERSION" "$MYPY_VERSION" >"$work/constraints.txt"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$work/constraints.txt" \
    "$wheel" pytest mypy

echo "== python: pytest"
cd "$work"
MNEMO_BIN="$bin" MNEMO_README="$root/README.md" \
    "$work/venv/bin/python" -m pytest "$root/crates/python/tests" -p no:cacheprovider -q "$@"
