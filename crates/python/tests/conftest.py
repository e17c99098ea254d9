"""Fixtures of the Python package's tests, run by scripts/python-test.sh against the installed
wheel: embedded stores (SQLite, PostgreSQL), a real `mnemo serve`, and the clients.

Environment: MNEMO_BIN (the `mnemo` binary, for the server and the shared-store check),
MNEMO_TEST_DATABASE_URL (PostgreSQL; its tests skip without it, except under CI), MNEMO_README
(README.md, whose Python example is run as written).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import queue
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest

import mnemo

IN_CI = bool(os.environ.get("CI"))

# Variables the engine reads that must not leak in from the caller's environment.
ENGINE_VARS = [
    "MNEMO_CONFIG",
    "MNEMO_DATA_DIR",
    "MNEMO_DATABASE_URL",
    "MNEMO_EMBEDDER",
    "MNEMO_EXTRACTOR",
    "MNEMO_MEMORY_SCOPE",
    "MNEMO_API_KEY",
]


def need(value: Any, what: str) -> Any:
    """`value`, or skip (outside CI) / fail (in CI) saying what is missing."""
    if value:
        return value
    if IN_CI:
        pytest.fail(f"{what} is missing, and in CI these tests must run")
    pytest.skip(f"{what} is missing")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test in its own working directory (no stray ./mnemo.toml), without MNEMO_* of
    the caller's, and with no chat model configured."""
    for name in list(os.environ):
        if name in ENGINE_VARS or name.startswith("MNEMO_LLM_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def user() -> str:
    """A user id no other test uses (servers and PostgreSQL databases are shared)."""
    return f"u{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def mnemo_bin() -> str:
    return str(need(os.environ.get("MNEMO_BIN"), "MNEMO_BIN (the mnemo binary)"))


@pytest.fixture(scope="session")
def database_url() -> str:
    return str(need(os.environ.get("MNEMO_TEST_DATABASE_URL"), "MNEMO_TEST_DATABASE_URL (scripts/pg.sh url)"))


def server_env(data: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS and not k.startswith("MNEMO_LLM_")}
    env.update(MNEMO_EMBEDDER="hash", MNEMO_DATA_DIR=str(data), MNEMO_LOG="info")
    env.pop("FAILPOINTS", None)
    return env


@pytest.fixture(scope="session")
def server(mnemo_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[str, str]]:
    """A real `mnemo serve` on a free loopback port over a temporary data directory (hash
    embedder), with a tenant key: yields (url, key)."""
    data = tmp_path_factory.mktemp("serve")
    env = server_env(data)
    created = subprocess.run(
        [mnemo_bin, "keys", "create", "--tenant", "py"], env=env, capture_output=True, text=True, timeout=60
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    env["MNEMO_ADMIN_KEY"] = "a" * 40
    proc = subprocess.Popen(
        [mnemo_bin, "serve", "--addr", "127.0.0.1:0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: "queue.Queue[str]" = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    url = None
    seen = []
    try:
        while url is None:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                pytest.fail(f"mnemo serve did not listen within 60 s: {''.join(seen)}")
            seen.append(line)
            if "listening on http://" in line:
                url = "http://" + line.split("listening on http://", 1)[1].split()[0]
        yield url, key
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Synced:
    """An AsyncClient driven from synchronous test code, one event loop for its life."""

    def __init__(self, client: mnemo.AsyncClient) -> None:
        self._client = client
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if inspect.iscoroutinefunction(attr):
            return lambda *a, **kw: self._loop.run_until_complete(attr(*a, **kw))
        return attr

    def close(self) -> None:
        self._loop.run_until_complete(self._client.aclose())
        self._loop.close()


BACKENDS = ["sqlite", "postgres", "http", "http-async"]


@pytest.fixture(params=BACKENDS)
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The same methods on every backend: the embedded engine on SQLite and on PostgreSQL (a
    tenant of its own), `Client` and `AsyncClient` against `mnemo serve`."""
    kind = request.param
    if kind == "sqlite":
        m: Any = mnemo.Memory(data_dir=tmp_path / "data", embedder="hash")
    elif kind == "postgres":
        url = request.getfixturevalue("database_url")
        m = mnemo.Memory(database_url=url, embedder="hash", tenant=f"t{uuid.uuid4().hex[:12]}")
    elif kind == "http":
        url, key = request.getfixturevalue("server")
        m = mnemo.Client(url, api_key=key)
    else:
        url, key = request.getfixturevalue("server")
        m = Synced(mnemo.AsyncClient(url, api_key=key))
    try:
        yield m
    finally:
        m.close()


@pytest.fixture(params=["sqlite", "postgres"])
def embedded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[mnemo.Memory]:
    """The embedded engine on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        m = mnemo.Memory(data_dir=tmp_path / "data", embedder="hash")
    else:
        url = request.getfixturevalue("database_url")
        m = mnemo.Memory(database_url=url, embedder="hash", tenant=f"t{uuid.uuid4().hex[:12]}")
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def local_model() -> str:
    """The local model's directory, which scripts/fetch-model.sh fills (skip without it)."""
    path = mnemo.model_dir()
    present = all((Path(path) / f).is_file() for f in ("config.json", "model.safetensors", "tokenizer.json"))
    return str(need(path if present else None, f"the local model in {path} (scripts/fetch-model.sh)"))
