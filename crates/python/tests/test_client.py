"""`Client` and `AsyncClient` against a real `mnemo serve`: keys, errors, concurrency."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import List, Tuple

import pytest

import mnemo


def test_a_bad_key_is_refused(server: Tuple[str, str], user: str) -> None:
    url, _ = server
    with mnemo.Client(url, api_key="mnemo_not-a-key") as c:
        with pytest.raises(mnemo.AuthenticationError) as e:
            c.search("anything", user_id=user)
    assert e.value.status == 401 and e.value.code == "unauthorized"


def test_the_key_comes_from_the_environment(
    server: Tuple[str, str], user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, key = server
    monkeypatch.setenv("MNEMO_API_KEY", key)
    with mnemo.Client(url) as c:
        assert c.add("I live in Lisbon.", user_id=user)["appended"] == 1


def test_the_tenant_is_the_keys(server: Tuple[str, str], user: str) -> None:
    url, key = server
    with mnemo.Client(url, api_key=key) as c:
        with pytest.raises(mnemo.InvalidRequestError, match="tenant is the API key's"):
            c.add("I live in Lisbon.", user_id=user, tenant="other")
        assert c.get_all(user_id=user, status=None) == []


def test_a_users_memory_needs_its_user_id_over_http(server: Tuple[str, str], user: str) -> None:
    url, key = server
    with mnemo.Client(url, api_key=key) as c:
        memory_id = c.add("I live in Lisbon.", user_id=user)["results"][0]["id"]
        with pytest.raises(mnemo.NotFoundError, match="user_id=") as e:
            c.get(memory_id)
        assert e.value.status == 404
        assert c.get(memory_id, user_id=user)["memory"] == "User lives in Lisbon"


def test_errors_carry_the_servers_message(server: Tuple[str, str], user: str) -> None:
    url, key = server
    with mnemo.Client(url, api_key=key) as c:
        with pytest.raises(mnemo.InvalidRequestError, match="empty") as e:
            c.add(["fine", {"role": "user", "content": "   "}], user_id=user)
        assert e.value.status == 400 and e.value.code == "invalid_request"
        memory_id = c.add("I live in Lisbon.", user_id=user)["results"][0]["id"]
        with pytest.raises(mnemo.RejectedError):
            c.update(memory_id, "My card is 4111 1111 1111 1111", user_id=user)


def test_a_closed_client_raises(server: Tuple[str, str], user: str) -> None:
    url, key = server
    c = mnemo.Client(url, api_key=key)
    c.close()
    with pytest.raises(mnemo.ClosedError):
        c.search("x", user_id=user)

    async def run() -> None:
        a = mnemo.AsyncClient(url, api_key=key)
        await a.aclose()
        with pytest.raises(mnemo.ClosedError):
            await a.search("x", user_id=user)

    asyncio.run(run())


def test_an_unreachable_server_is_unavailable(user: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with mnemo.Client(f"http://127.0.0.1:{port}", api_key="k", timeout=5) as c:
        with pytest.raises(mnemo.UnavailableError, match="cannot reach"):
            c.search("x", user_id=user)


def test_get_all_pages_through_everything(server: Tuple[str, str], user: str) -> None:
    url, key = server
    with mnemo.Client(url, api_key=key) as c:
        for city in ["Lisbon", "Porto", "Braga"]:
            c.add(f"I visited {city} last summer.", user_id=user, chat_id=city)
        every = c.get_all(user_id=user)
        assert len(every) >= 3
        assert len(c.get_all(user_id=user, limit=2)) == 2


def test_async_client_calls_run_concurrently(server: Tuple[str, str], user: str) -> None:
    url, key = server

    async def run() -> List[int]:
        async with mnemo.AsyncClient(url, api_key=key) as c:
            adds = [c.add(f"I have a dog named Rex{n}.", user_id=f"{user}-{n}", chat_id="c1") for n in range(8)]
            await asyncio.gather(*adds)
            found = await asyncio.gather(*[c.search("dog", user_id=f"{user}-{n}") for n in range(8)])
            return [len(f) for f in found]

    assert asyncio.run(run()) == [1] * 8


def test_one_client_shared_by_eight_threads(server: Tuple[str, str], user: str) -> None:
    url, key = server
    errors: List[BaseException] = []
    with mnemo.Client(url, api_key=key) as c:

        def work(n: int) -> None:
            try:
                c.add("I live in Lisbon.", user_id=f"{user}-{n}", chat_id="c1")
                assert "Lisbon" in c.search("where do I live?", user_id=f"{user}-{n}")[0]["memory"]
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert not errors, errors
