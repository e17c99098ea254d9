#!/usr/bin/env bash
# Prepares the Python environment of the compatibility tests: a virtualenv with mem0's SDK
# (`mem0ai`) and OpenAI's (`openai`), both pinned from PyPI, which crates/cli/tests/compat.rs
# drives against `mnemo serve` (docs/mem0.md, docs/openai-proxy.md). Idempotent.
#
#   scripts/compat-venv.sh              # into ~/.cache/mnemo/compat-venv
#   MNEMO_COMPAT_VENV=/opt/v scripts/compat-venv.sh
set -euo pipefail

MEM0_VERSION="2.2.1"
OPENAI_VERSION="3.57.0"
DEST="${MNEMO_COMPAT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/compat-venv}"
exec "$(dirname "$0")/pyvenv.sh" "$DEST" .mnemo-compat-version "mem0ai $MEM0_VERSION, openai $OPENAI_VERSION" \
    'import mem0, openai, httpx' \
    "mem0ai==$MEM0_VERSION" "openai==$OPENAI_VERSION"
