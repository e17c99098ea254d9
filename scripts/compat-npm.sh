#!/usr/bin/env bash
# Prepares the Node packages of the compatibility tests: mem0's TypeScript SDK (`mem0ai` from
# npm, pinned), which crates/cli/tests/compat.rs drives against `mnemo serve` (docs/mem0.md).
# Installed outside the clone and reused while the pin is unchanged. Install scripts are
# skipped: they only build the native SQLite module of mem0's local mode, which the client
# does not load.
#
#   scripts/compat-npm.sh               # into ~/.cache/mnemo/compat-npm
#   MNEMO_COMPAT_NPM=/opt/n scripts/compat-npm.sh
set -euo pipefail

MEM0_TS_VERSION="3.3.1"
DEST="${MNEMO_COMPAT_NPM:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/compat-npm}"
MARKER="$DEST/.mnemo-compat-version"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "mem0ai $MEM0_TS_VERSION" ]]; then
    echo "mem0ai $MEM0_TS_VERSION already installed in $DEST"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "error: npm not found; install Node.js 18 or newer" >&2
    exit 1
fi
# A half-finished install from an interrupted run has no marker: start it over.
rm -rf "$DEST"
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --ignore-scripts --silent "mem0ai@$MEM0_TS_VERSION"
NODE_PATH="$DEST/node_modules" node -e 'require("mem0ai")'
echo "mem0ai $MEM0_TS_VERSION" >"$MARKER"
echo "installed mem0ai $MEM0_TS_VERSION into $DEST"
