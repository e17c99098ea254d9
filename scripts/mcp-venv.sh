#!/usr/bin/env bash
# Prepares the Python environment of the MCP client tests: a virtualenv with the official MCP
# SDK (`mcp` from PyPI, pinned), which crates/cli/tests/mcp.rs drives against `mnemo serve`
# (streamable HTTP) and `mnemo mcp` (stdio). Idempotent: a finished environment is reused.
#
#   scripts/mcp-venv.sh                 # into ~/.cache/mnemo/mcp-venv
#   MNEMO_MCP_VENV=/opt/v scripts/mcp-venv.sh
#
# Keep MCP_VERSION in sync with the version the test names in its messages.
set -euo pipefail

MCP_VERSION="1.30.0"
DEST="${MNEMO_MCP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/mcp-venv}"
PYTHON="${MNEMO_PYTHON:-python3}"
MARKER="$DEST/.mnemo-mcp-version"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$MCP_VERSION" && -x "$DEST/bin/python" ]]; then
    echo "mcp $MCP_VERSION already installed in $DEST"
    exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; install Python 3.10 or newer (or set MNEMO_PYTHON)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
    echo "error: the mcp SDK needs Python 3.10 or newer; $PYTHON is $("$PYTHON" --version 2>&1) (set MNEMO_PYTHON)" >&2
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
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
"$DEST/bin/python" -c 'import mcp.client.stdio, mcp.client.streamable_http'
echo "$MCP_VERSION" >"$MARKER"
echo "installed mcp $MCP_VERSION into $DEST"
