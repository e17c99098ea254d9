#!/usr/bin/env bash
# The tools that build the Python package `mnemo` (crates/python): a virtualenv outside the clone
# with maturin (pinned, from PyPI). Idempotent: a finished environment is reused. Prints its
# path on the last line.
#
#   scripts/python-tools.sh                 # into ~/.cache/mnemo/py-tools
#   MNEMO_PY_TOOLS=/opt/t scripts/python-tools.sh
set -euo pipefail

MATURIN_VERSION="1.16.0"
DEST="${MNEMO_PY_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/py-tools}"
PYTHON="${MNEMO_PYTHON:-python3}"
MARKER="$DEST/.mnemo-maturin-version"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$MATURIN_VERSION" && -x "$DEST/bin/maturin" ]]; then
    echo "$DEST"
    exit 0
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; install Python 3.9 or newer with venv and pip (or set MNEMO_PYTHON)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)'; then
    echo "error: the package needs Python 3.9 or newer; $PYTHON is $("$PYTHON" --version 2>&1) (set MNEMO_PYTHON)" >&2
    exit 1
fi
# A half-built environment from an interrupted run has no marker: start it over.
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
if ! "$PYTHON" -m venv "$DEST" >&2; then
    echo "error: '$PYTHON -m venv' failed; install the venv module (e.g. apt-get install python3-venv)" >&2
    rm -rf "$DEST"
    exit 1
fi
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" >&2
"$DEST/bin/maturin" --version >&2
echo "$MATURIN_VERSION" >"$MARKER"
echo "$DEST"
