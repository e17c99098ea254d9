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
exec "$(dirname "$0")/pyvenv.sh" "$DEST" .mnemo-mcp-version "$MCP_VERSION" 'import mcp.client.stdio, mcp.client.streamable_http' "mcp==$MCP_VERSION"
