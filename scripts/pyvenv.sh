#!/usr/bin/env bash
# A pinned Python virtualenv outside the clone, for tests that drive mnemo with a client
# application's own SDK from PyPI. Idempotent: an environment whose marker names the same
# pins is reused, so CI pays for the install once per cache.
#
#   scripts/pyvenv.sh DEST MARKER VERSION IMPORT_CHECK PACKAGE==VERSION...
#
# DEST is the virtualenv's directory; MARKER the file in it that holds VERSION once the install
# finished (what the tests look for); IMPORT_CHECK a Python statement that must then succeed. MNEMO_PYTHON picks the interpreter (default python3, 3.10 or newer).
set -euo pipefail

DEST="$1"
MARKER="$DEST/$2"
VERSION="$3"
CHECK="$4"
shift 4
PYTHON="${MNEMO_PYTHON:-python3}"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$VERSION" && -x "$DEST/bin/python" ]]; then
    echo "$* already installed in $DEST"
    exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; install Python 3.10 or newer (or set MNEMO_PYTHON)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
    echo "error: these SDKs need Python 3.10 or newer; $PYTHON is $("$PYTHON" --version 2>&1) (set MNEMO_PYTHON)" >&2
    exit 1
fi

# A half-built environment from an interrupted run has no marker: start it over.
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
if ! "$PYTHON" -m venv "$DEST"; then
    echo "error: '$PYTHON -m venv' failed; install the venv module (e.g. apt-get install python3-venv)" >&2
    rm -rf "$DEST"
    exit 1
fi
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
"$DEST/bin/python" -c "$CHECK"
echo "$VERSION" >"$MARKER"
echo "installed $* into $DEST"
