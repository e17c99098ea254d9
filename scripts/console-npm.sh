#!/usr/bin/env bash
# Prepares the console's end-to-end test (crates/cli/tests/console.rs): `playwright-core` from
# npm (pinned; the library alone, no browser download) and a headless Chromium to drive. The
# package goes outside the clone and is reused while the pin is unchanged; Chromium is Debian's
# (`apt-get install chromium`), installed here when it is missing and this runs as root.
#
#   scripts/console-npm.sh               # into ~/.cache/mnemo/console-npm
#   MNEMO_CONSOLE_NPM=/opt/n scripts/console-npm.sh
#   MNEMO_CHROMIUM=/usr/bin/chromium     # the browser the test drives (this default)
set -euo pipefail

PLAYWRIGHT_VERSION="1.65.1"
DEST="${MNEMO_CONSOLE_NPM:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/console-npm}"
MARKER="$DEST/.mnemo-console-version"
CHROMIUM="${MNEMO_CHROMIUM:-/usr/bin/chromium}"

if [[ ! -x "$CHROMIUM" ]]; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "installing chromium (Debian package) for the console's end-to-end test"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null \
            || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
    else
        echo "error: no Chromium at $CHROMIUM; install it (Debian: apt-get install chromium) or set MNEMO_CHROMIUM" >&2
        exit 1
    fi
fi

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "playwright-core $PLAYWRIGHT_VERSION" ]]; then
    echo "playwright-core $PLAYWRIGHT_VERSION already installed in $DEST"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "error: npm not found; install Node.js 18 or newer" >&2
    exit 1
fi
# A half-finished install from an interrupted run has no marker: start it over.
rm -rf "$DEST"
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --ignore-scripts --silent "playwright-core@$PLAYWRIGHT_VERSION"
NODE_PATH="$DEST/node_modules" node -e 'require("playwright-core")'
echo "playwright-core $PLAYWRIGHT_VERSION" >"$MARKER"
echo "installed playwright-core $PLAYWRIGHT_VERSION into $DEST"
