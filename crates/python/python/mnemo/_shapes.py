"""What the embedded ``Memory`` and the HTTP clients share: checking arguments, turning messages
into the API's form, and turning the API's answers into the package's results.

Both sides receive the HTTP API's JSON shapes (the native module serialises the server's own
types), so each result is built here once, whichever side asked.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import InvalidRequestError, RejectedError

Message = Union[str, Mapping[str, Any]]
"""A message: a string (said by the user), or a mapping with ``content`` and optionally
``role`` (``user``, the default, ``assistant``, ``system`` or ``tool``), ``id`` and ``at``."""

Messages = Union[str, Mapping[str, Any], Sequence[Message]]

MESSAGE_KEYS = ("role", "content", "id", "at")


def text(name: str, value: Any) -> str:
    """``value`` if it is a string, else a ``TypeError`` naming it."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def opt_text(name: str, value: Any) -> Optional[str]:
    """``value`` if it is a string or ``None``, else a ``TypeError`` naming it."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    return value


def count(name: str, value: Any, *, minimum: int = 0) -> int:
    """``value`` if it is an int of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise InvalidRequestError(f"{name} must be at least {minimum}, not {value}")
    return int(value)


def opt_count(name: str, value: Any, *, minimum: int = 0) -> Optional[int]:
    """``value`` if it is ``None`` or an int of at least ``minimum``."""
    return None if value is None else count(name, value, minimum=minimum)


def names(name: str, value: Any) -> List[str]:
    """A kind or status filter: ``None`` (all), one string, or an iterable of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name} must be a str, a list of str or None, not {type(value).__name__}") from None
    for item in items:
        text(name, item)
    return items


def _time(index: int, value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise TypeError(f"message {index}: 'at' must be a datetime or an RFC 3339 string, not {type(value).__name__}")


def messages(value: Messages) -> List[Dict[str, Any]]:
    """The messages of ``add`` in the API's form, every one checked before anything is sent.

    A string is one message of the user; a mapping is one message; a list holds either. A
    message without ``content``, with an unknown key or of the wrong type is an
    ``InvalidRequestError`` (or ``TypeError``) naming its index, and nothing is written.
    """
    if isinstance(value, (str, Mapping)):
        items: List[Any] = [value]
    elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        items = list(value)
    else:
        raise TypeError(f"messages must be a str, a dict or a list of them, not {type(value).__name__}")
    if not items:
        raise InvalidRequestError("messages is empty: pass at least one message")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append({"role": "user", "content": item})
            continue
        if not isinstance(item, Mapping):
            raise TypeError(f"message {i} must be a str or a dict, not {type(item).__name__}")
        unknown = sorted(str(k) for k in item if k not in MESSAGE_KEYS)
        if unknown:
            raise InvalidRequestError(
                f"message {i} has unknown key(s) {', '.join(unknown)}; a message has {', '.join(MESSAGE_KEYS)}"
            )
        if item.get("content") is None:
            raise InvalidRequestError(f"message {i} has no 'content': every message needs the text that was said")
        message: Dict[str, Any] = {
            "role": text(f"message {i}: role", item.get("role", "user")),
            "content": text(f"message {i}: content", item["content"]),
        }
        if item.get("id") is not None:
            message["id"] = text(f"message {i}: id", item["id"])
        at = _time(i, item.get("at"))
        if at is not None:
            message["at"] = at
        out.append(message)
    return out


def message_tuples(items: Iterable[Mapping[str, Any]]) -> List[Tuple[Optional[str], str, str, Optional[str]]]:
    """The checked messages as the native module takes them."""
    return [(m.get("id"), m["role"], m["content"], m.get("at")) for m in items]


def memory(m: Mapping[str, Any]) -> Dict[str, Any]:
    """One memory (the API's ``MemoryOut``) as the package returns it."""
    owner = m.get("owner") or {}
    return {
        "id": m["id"],
        "memory": m["content"],
        "kind": m["kind"],
        "status": m["status"],
        "score": None,
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "source": m["provenance"],
        "user_id": owner.get("user_id"),
        "agent_id": owner.get("agent_id"),
        "chat_id": owner.get("chat_id"),
        "surface": m["surface"],
        "pinned": m["pinned"],
        "key": m.get("key"),
        "value": m.get("value"),
        "confidence": m["confidence"],
        "salience": m["salience"],
        "superseded_by": m.get("superseded_by"),
        "due_at": m.get("due_at"),
        "expires_at": m.get("expires_at"),
    }


def _recalled(i: Mapping[str, Any]) -> Dict[str, Any]:
    return {
        "id": i["id"],
        "memory": i["content"],
        "kind": i["kind"],
        "status": i["status"],
        "score": i.get("score"),
        "created_at": i["created_at"],
        "source": i["provenance"],
        "surface": i["surface"],
        "pinned": i["pinned"],
        "key": i.get("key"),
        "value": i.get("value"),
        "tier": i.get("tier"),
        "exact": i.get("exact"),
    }


def search(out: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The answer of recall as ``search`` returns it: the ranked memories, best first, then
    the memories that always apply (pinned, preferences, protocols, loops due soon), whose
    ``score`` is ``None`` and whose ``exact`` says why they are there."""
    return [_recalled(i) for i in out["items"]] + [_recalled(i) for i in out["exact"]]


def added(out: Dict[str, Any]) -> Dict[str, Any]:
    """The ingest report with ``results``: one entry per proposed memory and its verdict."""
    results = [
        {
            "id": op["verdict"].get("memory_id"),
            "memory": op["content"],
            "kind": op["kind"],
            "event": op["op"],
            "verdict": op["verdict"]["verdict"],
            "reason": op["verdict"]["reason"],
        }
        for op in out["ops"]
    ]
    return {"results": results, **out}


def updated(out: Mapping[str, Any], previous: str) -> Dict[str, Any]:
    """The answer of an edit: the new version, or ``RejectedError`` when the gate refused it."""
    verdict = out["verdict"]
    if verdict["verdict"] == "rejected" or out.get("memory") is None:
        raise RejectedError(f"update rejected: {verdict['reason']}")
    result = memory(out["memory"])
    result.update({"previous_id": previous, "verdict": verdict["verdict"], "reason": verdict["reason"]})
    return result


@dataclass(frozen=True)
class Context:
    """The memory block for the next turn of a chat, within its token budget.

    ``text`` goes into the prompt as it is (``str(ctx)`` is the same); ``sections`` are its
    parts in rendering order (``name``, ``title``, ``cacheable``, ``items``); ``items`` are
    every line of every section, each with its ``section``; ``trace_id`` names the trace this
    call left (empty for a disabled user).
    """

    text: str
    sections: List[Dict[str, Any]]
    items: List[Dict[str, Any]]
    trace_id: str
    tokens: int
    budget: int
    mode: str
    held_back: List[Dict[str, Any]] = field(default_factory=list)
    user_state: Optional[str] = None

    def __str__(self) -> str:
        return self.text

    def section(self, name: str) -> Optional[Dict[str, Any]]:
        """The section called ``name`` (``pinned``, ``preference``, ``avoid``, ``speak``...),
        or ``None`` when the block has none."""
        return next((s for s in self.sections if s["name"] == name), None)


def context(out: Mapping[str, Any]) -> Context:
    """The API's ``ContextOut`` as a :class:`Context`."""
    items = [dict(item, section=s["name"]) for s in out["sections"] for item in s["items"]]
    return Context(
        text=out["text"],
        sections=list(out["sections"]),
        items=items,
        trace_id=out["turn_id"],
        tokens=out["tokens"],
        budget=out["budget"],
        mode=out["mode"],
        held_back=list(out.get("held_back", [])),
        user_state=out.get("user_state"),
    )


_REJECTED = re.compile(r"^[\w -]+ rejected: ")


def is_rejection(message: str) -> bool:
    """Whether a server's 422 message is the engine's ``... rejected: why``."""
    return bool(_REJECTED.match(message))
