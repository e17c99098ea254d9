"""The embedded engine: opening it, threads, closing it, errors, the local model, and the store
it shares with the `mnemo` binary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, List

import pytest

import mnemo
from mnemo import _mnemo

from conftest import server_env


def test_the_installed_wheel_is_what_runs() -> None:
    # Imported from the virtualenv's site-packages, not from the source tree.
    assert "site-packages" in mnemo.__file__, mnemo.__file__
    package = Path(mnemo.__file__).parent
    assert (package / "py.typed").is_file() and (package / "_mnemo.pyi").is_file()
    assert mnemo.__version__ and mnemo.__version__ == _mnemo.__version__
    for name in mnemo.__all__:
        assert getattr(mnemo, name) is not None


def test_every_public_method_has_a_docstring() -> None:
    for cls in (mnemo.Memory, mnemo.Client, mnemo.AsyncClient, mnemo.Context):
        assert cls.__doc__, cls
        for name, member in vars(cls).items():
            if callable(member) and not name.startswith("_"):
                assert member.__doc__, f"{cls.__name__}.{name}"
    for fn in (mnemo.fetch_model, mnemo.model_dir):
        assert fn.__doc__


def test_errors_form_one_hierarchy() -> None:
    for name in ["InvalidRequestError", "NotFoundError", "UnavailableError", "ConfigError", "ModelError",
                 "StoreError", "ClosedError", "AuthenticationError", "ServerError"]:
        assert issubclass(getattr(mnemo, name), mnemo.MnemoError)
    assert issubclass(mnemo.RejectedError, mnemo.InvalidRequestError)
    assert issubclass(mnemo.InvalidRequestError, ValueError)
    assert issubclass(mnemo.NotFoundError, LookupError)
    assert issubclass(mnemo.ModelNotFoundError, mnemo.ModelError)


def test_a_closed_store_raises_and_writes_nothing(tmp_path: Path, user: str) -> None:
    data = tmp_path / "data"
    with mnemo.Memory(data_dir=data, embedder="hash") as m:
        assert not m.closed and "sqlite" in repr(m)
    assert m.closed and "closed" in repr(m)
    for call in (
        lambda: m.add("I live in Lisbon.", user_id=user),
        lambda: m.search("Lisbon", user_id=user),
        lambda: m.context("hi", user_id=user),
        lambda: m.get_all(user_id=user),
        lambda: m.erase_user(user),
    ):
        with pytest.raises(mnemo.ClosedError, match="closed"):
            call()
    m.close()  # idempotent
    with mnemo.Memory(data_dir=data, embedder="hash") as again:
        assert again.get_all(user_id=user, status=None) == []


def test_an_id_alone_finds_its_memory_in_process(tmp_path: Path, user: str) -> None:
    with mnemo.Memory(data_dir=tmp_path / "data", embedder="hash", tenant="acme") as m:
        memory_id = m.add("I live in Lisbon.", user_id=user, chat_id="c1")["results"][0]["id"]
        got = m.get(memory_id)
        assert got["memory"] == "User lives in Lisbon" and got["user_id"] == user
        assert [h["event"] for h in m.history(memory_id)] == ["created"]
        new = m.update(memory_id, "User lives in Porto")
        m.delete(new["id"])
        assert m.get(new["id"])["status"] == "archived"
        # Another tenant never sees it.
        with pytest.raises(mnemo.NotFoundError):
            m.get(memory_id, tenant="other")


def test_eight_threads_add_and_search_at_once(embedded: mnemo.Memory, user: str) -> None:
    errors: List[BaseException] = []
    barrier = threading.Barrier(8)
    facts = ["I live in Lisbon.", "I have a dog named Biscuit.", "I work as a nurse.", "I love hiking."]

    def work(n: int) -> None:
        try:
            barrier.wait()
            who = f"{user}-{n}"
            for i, fact in enumerate(facts):
                embedded.add(fact, user_id=who, chat_id=f"c{i}")
                embedded.search("where do I live?", user_id=who)
                embedded.context("any weekend ideas?", user_id=who, chat_id=f"c{i}")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    for n in range(8):
        mine = embedded.get_all(user_id=f"{user}-{n}")
        assert len(mine) == len(facts), mine
        assert "Lisbon" in embedded.search("where do I live?", user_id=f"{user}-{n}")[0]["memory"]


def test_the_gil_is_released_during_engine_calls(tmp_path: Path, user: str) -> None:
    import sqlite3

    data = tmp_path / "data"
    with mnemo.Memory(data_dir=data, embedder="hash") as m:
        m.add("I live in Lisbon.", user_id=user, chat_id="c1")
        # Another connection holds the write lock; the engine's next write waits for it. Only
        # Python code on another thread lets it go: were the GIL held through the engine's
        # call, that thread could not run, and the call would fail after the store's busy
        # timeout (10 s) instead.
        lock = sqlite3.connect(str(data / "mnemo.db"), isolation_level=None, check_same_thread=False)
        lock.execute("BEGIN IMMEDIATE")
        released: List[float] = []

        def release() -> None:
            released.append(time.perf_counter())
            lock.execute("COMMIT")

        timer = threading.Timer(0.5, release)
        started = time.perf_counter()
        timer.start()
        report = m.add("I have a dog named Biscuit.", user_id=user, chat_id="c1")
        took = time.perf_counter() - started
        timer.join()
        lock.close()
        assert released and released[0] - started >= 0.4
        assert report["appended"] == 1 and took < 5.0, took


def test_configuration_file_and_its_errors(tmp_path: Path, user: str) -> None:
    config = tmp_path / "mnemo.toml"
    config.write_text(f'data_dir = "{tmp_path / "from-config"}"\n[embedder]\nkind = "hash"\n')
    with mnemo.Memory(config=config) as m:
        m.add("I live in Lisbon.", user_id=user)
    assert (tmp_path / "from-config" / "mnemo.db").is_file()
    bad = tmp_path / "bad.toml"
    bad.write_text("no_such_setting = 1\n")
    with pytest.raises(mnemo.ConfigError, match="no_such_setting"):
        mnemo.Memory(config=bad)
    with pytest.raises(mnemo.ConfigError, match="unknown embedder kind"):
        mnemo.Memory(data_dir=tmp_path / "d", embedder="nope")
    with pytest.raises(mnemo.ConfigError, match="postgres"):
        mnemo.Memory(database_url="mysql://somewhere/db", embedder="hash")
    with pytest.raises(TypeError, match="data_dir"):
        mnemo.Memory(data_dir=42, embedder="hash")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mnemo.Memory(data_dir=tmp_path / "d", embeder="hash")  # type: ignore[call-arg]


def test_a_missing_model_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(mnemo.ModelNotFoundError) as e:
        mnemo.Memory(data_dir=tmp_path / "data", model_dir=tmp_path / "no-model")
    message = str(e.value)
    assert "mnemo.fetch_model()" in message and str(tmp_path / "no-model") in message, message
    assert 'embedder="hash"' in message


def test_fetch_model_leaves_a_present_model_alone(local_model: str) -> None:
    report = mnemo.fetch_model(local_model)
    assert report["already_present"] is True and report["dir"] == local_model
    assert "model.safetensors" in report["files"] and report["bytes"] > 10_000_000
    assert mnemo.fetch_model()["dir"] == local_model


def test_the_local_model_finds_by_meaning(local_model: str, tmp_path: Path, user: str) -> None:
    with mnemo.Memory(data_dir=tmp_path / "data") as m:
        assert "embedder local" in repr(m)
        m.add(
            ["I have a dog named Biscuit.", "I work as a nurse at the city hospital.", "I live in Lisbon."],
            user_id=user,
            chat_id="c1",
        )
        hits = m.search("what is my pet called?", user_id=user, limit=3)
        assert "Biscuit" in hits[0]["memory"], hits
        assert hits[0]["score"] and hits[0]["score"] > 0
        ctx = m.context("any ideas for my pet's birthday?", user_id=user, chat_id="c2", budget_tokens=300)
        assert "Biscuit" in ctx.text and ctx.tokens <= 300


def test_the_binary_reads_the_same_store(mnemo_bin: str, tmp_path: Path, user: str) -> None:
    data = tmp_path / "data"
    with mnemo.Memory(data_dir=data, embedder="hash", tenant="acme") as m:
        memory_id = m.add("I have a dog named Biscuit.", user_id=user, chat_id="c1")["results"][0]["id"]
    out = subprocess.run(
        [mnemo_bin, "--data-dir", str(data), "list", "--tenant", "acme", "--user", user, "--json"],
        env=server_env(data),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["id"] for r in rows] == [memory_id], rows


def test_message_times_and_ids(tmp_path: Path, user: str) -> None:
    import datetime as dt

    with mnemo.Memory(data_dir=tmp_path / "data", embedder="hash") as m:
        at = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
        first = m.add({"role": "user", "content": "I live in Lisbon.", "id": "m1", "at": at}, user_id=user)
        again = m.add({"role": "user", "content": "I live in Lisbon.", "id": "m1", "at": at}, user_id=user)
        assert (first["appended"], again["appended"], again["duplicates"]) == (1, 0, 1)
        assert m.get_all(user_id=user)[0]["source"]["sources"] == ["m1"]
        with pytest.raises(mnemo.InvalidRequestError, match="RFC 3339"):
            m.add({"content": "I have a cat.", "at": "yesterday"}, user_id=user)


def run_python(code: str, **env: str) -> Any:
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_import_is_quick() -> None:
    out = run_python("import time; t = time.perf_counter(); import mnemo; print(time.perf_counter() - t)")
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 2.0, out.stdout
    # httpx is only imported when a client is made.
    out = run_python("import sys, mnemo; print('httpx' in sys.modules)")
    assert out.stdout.strip() == "False", out.stdout
