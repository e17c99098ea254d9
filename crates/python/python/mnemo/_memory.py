"""``Memory``: the engine in this process, over the embedded SQLite store or PostgreSQL."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _mnemo, _shapes
from ._shapes import Context, Messages

PathLike = Union[str, "os.PathLike[str]"]

Scope = Tuple[str, Optional[str], Optional[str], Optional[str]]


def _path(name: str, value: Optional[PathLike]) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or a path, not {type(value).__name__}")
    return os.fspath(value)


class Memory:
    """Durable memory for an LLM application, with the engine running in this process.

    ``Memory(data_dir="./mem")`` opens (or creates) the embedded SQLite store in that directory,
    the same store the ``mnemo`` binary opens with ``--data-dir``; ``Memory(database_url=
    "postgres://...")`` uses PostgreSQL + pgvector; ``Memory(config="mnemo.toml")`` reads a
    configuration file. Without arguments the configuration is found as the binary finds it
    (``$MNEMO_CONFIG``, ``./mnemo.toml``, ``MNEMO_*`` variables, the default data directory).

    The local embedding model is read from the binary's cache (``mnemo.fetch_model()`` puts it
    there); ``embedder="hash"`` runs without a model, for tests. ``tenant`` is the default
    tenant of every call.

    Every method releases the GIL while the engine works, and one ``Memory`` may be shared by
    any number of threads. ``close()`` (or leaving a ``with`` block) lets go of the store.
    """

    def __init__(
        self,
        data_dir: Optional[PathLike] = None,
        *,
        database_url: Optional[str] = None,
        config: Optional[PathLike] = None,
        embedder: Optional[str] = None,
        model_dir: Optional[PathLike] = None,
        tenant: str = "default",
    ) -> None:
        self._tenant = _shapes.text("tenant", tenant)
        self._engine = _mnemo.Engine(
            _path("data_dir", data_dir),
            _shapes.opt_text("database_url", database_url),
            _path("config", config),
            _shapes.opt_text("embedder", embedder),
            _path("model_dir", model_dir),
        )

    def __repr__(self) -> str:
        return f"Memory({self._engine!r}, tenant={self._tenant!r})"

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Lets go of the store; later calls raise ``ClosedError``. Idempotent."""
        self._engine.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return bool(self._engine.closed)

    def _scope(
        self,
        tenant: Optional[str],
        agent_id: Optional[str],
        user_id: Optional[str],
        chat_id: Optional[str],
    ) -> Scope:
        return (
            self._tenant if tenant is None else _shapes.text("tenant", tenant),
            _shapes.opt_text("agent_id", agent_id),
            _shapes.opt_text("user_id", user_id),
            _shapes.opt_text("chat_id", chat_id),
        )

    def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        chat_id: str = "default",
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Appends messages to the user's chat and remembers what they say.

        ``messages`` is a string (one message of the user), a dict ``{"role", "content"}``
        (``id`` and ``at`` optional) or a list of either, oldest first. Every memory proposed
        goes through the same gate as always: corrections supersede, repeats reinforce,
        personal data is refused.

        Returns the report: ``results`` (one entry per proposed memory: ``id``, ``memory``,
        ``kind``, ``event``, ``verdict``, ``reason``), ``appended``, ``duplicates`` (message
        ids already stored), ``ops`` (the full verdicts) and ``turn_id``. Bad input raises
        ``InvalidRequestError`` and writes nothing.
        """
        checked = _shapes.messages(messages)
        scope = self._scope(tenant, agent_id, _shapes.text("user_id", user_id), _shapes.text("chat_id", chat_id))
        out = json.loads(self._engine.ingest(scope, _shapes.message_tuples(checked)))
        return _shapes.added(out)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """Memories of the user relevant to ``query``.

        Returns dicts with ``id``, ``memory`` (the statement), ``kind``, ``status``, ``score``,
        ``created_at``, ``source`` (where it came from) and more: first the ``limit`` best
        ranked ones, best first, then those that always apply (pinned, preferences, protocols,
        loops due soon) with ``score`` ``None`` and ``exact`` saying why. The call is traced.
        """
        scope = self._scope(tenant, agent_id, _shapes.text("user_id", user_id), chat_id)
        top_k = _shapes.count("limit", limit, minimum=1)
        out = json.loads(self._engine.recall(scope, _shapes.text("query", query), top_k))
        return _shapes.search(out)

    def context(
        self,
        message: str,
        *,
        user_id: str,
        chat_id: str = "default",
        budget_tokens: Optional[int] = None,
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Context:
        """The memory block for the chat's next turn, given the user's new ``message``.

        Returns a :class:`Context`: ``text`` for the prompt, within ``budget_tokens`` (the
        configured default when ``None``), its ``sections`` (boundaries land in ``avoid``),
        every line as ``items``, and the ``trace_id`` of the trace it left.
        """
        scope = self._scope(tenant, agent_id, _shapes.text("user_id", user_id), _shapes.text("chat_id", chat_id))
        budget = _shapes.opt_count("budget_tokens", budget_tokens, minimum=1)
        out = json.loads(self._engine.context(scope, _shapes.text("message", message), budget))
        return _shapes.context(out)

    def get(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One memory by id, any status (``NotFoundError`` when there is none).

        Without ``user_id``, ``agent_id`` or ``chat_id`` the memory is found by id alone in the
        tenant; with them it must be visible to that scope.
        """
        scope = self._scope(tenant, agent_id, user_id, chat_id)
        detail = json.loads(self._engine.show(scope, _shapes.text("memory_id", memory_id)))
        return _shapes.memory(detail["memory"])

    def get_all(
        self,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        kind: Union[str, List[str], None] = None,
        status: Union[str, List[str], None] = "active",
        text: Optional[str] = None,
        limit: Optional[int] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """The memories visible to the scope, newest first.

        ``kind`` and ``status`` filter (one name or a list; ``status=None`` is every status,
        superseded and archived ones too), ``text`` keeps memories containing it, ``limit``
        caps the count (all when ``None``).
        """
        scope = self._scope(tenant, agent_id, user_id, chat_id)
        rows = self._engine.list(
            scope,
            _shapes.names("kind", kind),
            _shapes.names("status", status),
            _shapes.opt_text("text", text),
            _shapes.opt_count("limit", limit, minimum=1) or 0,
            0,
        )
        return [_shapes.memory(m) for m in json.loads(rows)]

    def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Replaces a memory's statement with ``text``, through the gate.

        The new version supersedes the old one (whose history keeps what it said), so the
        result, the new memory, has a new ``id``; ``previous_id`` is the old one. A refused
        text raises ``RejectedError`` and changes nothing.
        """
        scope = self._scope(tenant, agent_id, user_id, chat_id)
        memory_id = _shapes.text("memory_id", memory_id)
        out = json.loads(self._engine.edit(scope, memory_id, _shapes.text("text", text)))
        return _shapes.updated(out, memory_id)

    def delete(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> None:
        """Deletes a memory at the user's request: archived, never recalled again, its history
        kept for audit (``erase_user`` is what removes content)."""
        scope = self._scope(tenant, agent_id, user_id, chat_id)
        self._engine.forget(scope, _shapes.text("memory_id", memory_id))

    def history(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """A memory's history, oldest first: each change with ``at``, ``event``
        (``created``, ``reinforced``, ``superseded``...), ``from_status``, ``to_status``,
        ``reason`` and ``sources``."""
        scope = self._scope(tenant, agent_id, user_id, chat_id)
        detail = json.loads(self._engine.show(scope, _shapes.text("memory_id", memory_id)))
        return list(detail["history"])

    def delete_all(
        self,
        *,
        user_id: str,
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Clears what memory holds about the user: every memory archived (history kept) and
        their messages out of recall. Returns ``{"archived": n}``."""
        scope = self._scope(tenant, agent_id, _shapes.text("user_id", user_id), None)
        return dict(json.loads(self._engine.clear_user(scope)))

    def erase_user(self, user_id: str, *, tenant: Optional[str] = None) -> Dict[str, Any]:
        """Erases everything of the user in the tenant (memories, vectors, history, messages,
        traces) in one transaction. Returns the receipt: ``subject``, ``at``, ``counts`` (rows
        removed per table) and ``digest``, with no content in it."""
        scope = self._scope(tenant, None, _shapes.text("user_id", user_id), None)
        return dict(json.loads(self._engine.erase_user(scope)))
