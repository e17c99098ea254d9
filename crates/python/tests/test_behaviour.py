"""The engine's memory behaviours, through every backend of the package: the embedded engine on
SQLite and PostgreSQL, `Client` and `AsyncClient` over HTTP. Each test runs four times."""

from __future__ import annotations

from typing import Any

import pytest

import mnemo

SEARCH_KEYS = {"id", "memory", "kind", "status", "score", "created_at", "source"}


def test_add_search_and_context(mem: Any, user: str) -> None:
    report = mem.add(
        [
            {"role": "user", "content": "Hi! My name is Dana."},
            {"role": "assistant", "content": "Nice to meet you, Dana."},
            {"role": "user", "content": "I'm a backend engineer at a fintech startup."},
            "I have a dog named Biscuit.",
        ],
        user_id=user,
        chat_id="c1",
    )
    assert report["appended"] == 4 and report["duplicates"] == 0
    assert report["results"] and all(r["verdict"] == "written" for r in report["results"]), report
    assert all(r["id"] and r["memory"] and r["kind"] for r in report["results"])

    hits = mem.search("what happens at the startup", user_id=user, limit=3)
    assert SEARCH_KEYS <= set(hits[0]), hits[0]
    assert "backend engineer" in hits[0]["memory"], hits
    assert hits[0]["score"] > 0 and hits[0]["status"] == "active"
    assert hits[0]["source"]["extractor"] == "heuristic"
    assert isinstance(hits[0]["created_at"], str) and hits[0]["created_at"][:2] == "20"

    ctx = mem.context("What should I name my dog's birthday party?", user_id=user, chat_id="c2", budget_tokens=500)
    assert isinstance(ctx, mnemo.Context)
    assert "Biscuit" in ctx.text and str(ctx) == ctx.text
    assert ctx.tokens <= 500 and ctx.budget == 500
    assert ctx.trace_id.startswith("turn-")
    assert ctx.sections and all({"name", "title", "cacheable", "items"} <= set(s) for s in ctx.sections)
    assert any("Biscuit" in i["text"] for i in ctx.items)
    assert all(i["section"] in {s["name"] for s in ctx.sections} for i in ctx.items)

    # Saying it again reinforces instead of duplicating.
    again = mem.add("i have a dog named biscuit!", user_id=user, chat_id="c3")
    assert [r["verdict"] for r in again["results"]] == ["deduplicated"], again


def test_a_correction_supersedes(mem: Any, user: str) -> None:
    first = mem.add("I'm a backend engineer at a fintech startup.", user_id=user, chat_id="c1")
    old = first["results"][0]["id"]
    second = mem.add("Actually I work in product design now, not engineering.", user_id=user, chat_id="c2")
    assert second["results"][0]["verdict"] == "superseded", second
    new = second["results"][0]["id"]
    assert [m["memory"] for m in mem.get_all(user_id=user)] == ["User works in product design"]

    before = mem.get(old, user_id=user)
    assert before["status"] == "superseded" and before["superseded_by"] == new
    events = [h["event"] for h in mem.history(old, user_id=user)]
    assert events == ["created", "superseded"], events
    every = mem.get_all(user_id=user, status=None)
    assert {m["status"] for m in every} == {"active", "superseded"}

    ctx = mem.context("How is work going?", user_id=user, chat_id="c3")
    assert "product design" in ctx.text and "backend engineer" not in ctx.text, ctx.text


def test_a_boundary_lands_in_avoid(mem: Any, user: str) -> None:
    mem.add(["Please keep your answers short.", "Never mention my ex-husband."], user_id=user, chat_id="c1")
    mem.add("I prefer detailed answers.", user_id=user, chat_id="c1")
    ctx = mem.context("tell me about rome", user_id=user, chat_id="c2")
    avoid = ctx.section("avoid")
    assert avoid is not None, ctx.sections
    assert "ex-husband" in avoid["items"][0]["text"], avoid
    speak = ctx.section("speak")
    assert speak is None or all("ex-husband" not in i["text"] for i in speak["items"])
    preference = ctx.section("preference")
    assert preference is not None and len(preference["items"]) == 1
    assert "detailed" in preference["items"][0]["text"] and preference["cacheable"]


def test_erasure_leaves_nothing(mem: Any, user: str) -> None:
    report = mem.add(["I live in Lisbon.", "I have a dog named Biscuit."], user_id=user, chat_id="c1")
    ids = [r["id"] for r in report["results"]]
    assert len(ids) == 2
    receipt = mem.erase_user(user)
    assert {"subject", "at", "counts", "digest"} <= set(receipt)
    assert receipt["counts"].get("memories", 0) == 2 and receipt["counts"].get("messages", 0) == 2, receipt
    assert user not in str(receipt) and "Lisbon" not in str(receipt)
    assert mem.get_all(user_id=user, status=None) == []
    assert mem.search("where do I live? dog Biscuit Lisbon", user_id=user) == []
    assert "Lisbon" not in mem.context("where do I live?", user_id=user, chat_id="c1").text
    for memory_id in ids:
        with pytest.raises(mnemo.NotFoundError):
            mem.get(memory_id, user_id=user)


def test_update_delete_and_clear(mem: Any, user: str) -> None:
    added = mem.add(["I live in Lisbon.", "I have a dog named Biscuit."], user_id=user, chat_id="c1")
    lisbon = next(r["id"] for r in added["results"] if "Lisbon" in r["memory"])
    new = mem.update(lisbon, "User lives in Porto", user_id=user)
    assert new["memory"] == "User lives in Porto" and new["previous_id"] == lisbon and new["id"] != lisbon
    assert new["status"] == "active" and new["verdict"] == "superseded"
    assert mem.get(lisbon, user_id=user)["status"] == "superseded"
    assert "Porto" in mem.search("where do I live?", user_id=user)[0]["memory"]

    mem.delete(new["id"], user_id=user)
    assert mem.get(new["id"], user_id=user)["status"] == "archived"
    assert [m["memory"] for m in mem.get_all(user_id=user)] == ["User has a dog named Biscuit"]
    assert [m["memory"] for m in mem.get_all(user_id=user, kind="profile")] == ["User has a dog named Biscuit"]
    assert mem.get_all(user_id=user, kind=["preference", "event"]) == []

    cleared = mem.delete_all(user_id=user)
    assert cleared == {"archived": 1}
    assert mem.get_all(user_id=user) == []
    assert {m["status"] for m in mem.get_all(user_id=user, status=None)} == {"archived", "superseded"}


def test_scopes_never_leak(mem: Any, user: str) -> None:
    mem.add("My dog is called Biscuit.", user_id=user, chat_id="c1")
    other = user + "x"
    assert mem.search("dog Biscuit", user_id=other) == []
    assert "Biscuit" not in mem.context("my dog Biscuit", user_id=other, chat_id="c1").text
    assert mem.get_all(user_id=other) == []


def test_bad_input_raises_and_writes_nothing(mem: Any, user: str) -> None:
    with pytest.raises(mnemo.InvalidRequestError, match="message 1 has no 'content'"):
        mem.add(["My name is Dana.", {"role": "user"}], user_id=user, chat_id="c1")
    with pytest.raises(mnemo.InvalidRequestError, match="unknown key"):
        mem.add({"role": "user", "content": "My name is Dana.", "contnet": "x"}, user_id=user)
    with pytest.raises(mnemo.InvalidRequestError, match="empty"):
        mem.add(["My name is Dana.", {"role": "user", "content": "", "id": "bad"}], user_id=user, chat_id="c1")
    with pytest.raises(mnemo.InvalidRequestError, match="robot"):
        mem.add({"role": "robot", "content": "I live in Lisbon."}, user_id=user, chat_id="c1")
    with pytest.raises(mnemo.InvalidRequestError):
        mem.add([], user_id=user)
    with pytest.raises(TypeError, match="usr_id"):
        mem.add("My name is Dana.", usr_id=user)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="user_id"):
        mem.add("My name is Dana.", user_id=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mem.search("dog", user_id=user, top_k=3)  # type: ignore[call-arg]
    with pytest.raises(mnemo.InvalidRequestError):
        mem.search("dog", user_id=user, limit=0)
    with pytest.raises(mnemo.InvalidRequestError):
        mem.get("not-an-id", user_id=user)
    with pytest.raises(mnemo.NotFoundError):
        mem.get("01k0000000000000000000000a", user_id=user)
    with pytest.raises(mnemo.InvalidRequestError):
        mem.get_all(user_id=user, kind="no-such-kind")
    assert mem.get_all(user_id=user, status=None) == []
    assert mem.search("Dana Lisbon", user_id=user) == []
    ctx = mem.context("what is my name?", user_id=user, chat_id="c1")
    assert "Dana" not in ctx.text and "Lisbon" not in ctx.text, ctx.text


def test_an_update_the_gate_refuses_changes_nothing(mem: Any, user: str) -> None:
    memory_id = mem.add("I live in Lisbon.", user_id=user, chat_id="c1")["results"][0]["id"]
    with pytest.raises(mnemo.InvalidRequestError):
        mem.update(memory_id, "My card is 4111 1111 1111 1111", user_id=user)
    assert [m["memory"] for m in mem.get_all(user_id=user)] == ["User lives in Lisbon"]
    assert mem.get(memory_id, user_id=user)["status"] == "active"
