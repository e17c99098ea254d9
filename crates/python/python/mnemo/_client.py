"""``Client`` and ``AsyncClient``: the methods of ``Memory`` over the HTTP API of ``mnemo serve``.

Each method is one request (``get_all`` one per page) to the server's ``/v1`` routes, with the
key as a bearer token; the tenant is the key's. Arguments are checked as ``Memory`` checks them,
before anything is sent, and answers become the same results through the same code.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union
from urllib.parse import quote

from . import _shapes
from ._errors import (
    AuthenticationError,
    ClosedError,
    InvalidRequestError,
    MnemoError,
    NotFoundError,
    RejectedError,
    ServerError,
    UnavailableError,
)
from ._shapes import Context, Messages

if TYPE_CHECKING:
    import httpx

DEFAULT_URL = "http://127.0.0.1:8080"

# The server's largest page of memories.
_PAGE = 500


class _Request:
    """One request to the API and what its answer becomes."""

    def __init__(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Dict[str, Any]] = None,
        body: Optional[Dict[str, Any]] = None,
        shape: Callable[[Any], Any] = lambda out: out,
        has_user: bool = True,
    ) -> None:
        self.method = method
        self.path = path
        self.params = {k: v for k, v in (params or {}).items() if v is not None}
        self.body = None if body is None else {k: v for k, v in body.items() if v is not None}
        self.shape = shape
        self.has_user = has_user


def _no_tenant(tenant: Optional[str]) -> None:
    if tenant is not None:
        raise InvalidRequestError(
            "over HTTP the tenant is the API key's: leave tenant out, or use a key of that tenant"
        )


def _scope(user_id: Optional[str], agent_id: Optional[str], chat_id: Optional[str]) -> Dict[str, Any]:
    return {
        "user_id": _shapes.opt_text("user_id", user_id),
        "agent_id": _shapes.opt_text("agent_id", agent_id),
        "chat_id": _shapes.opt_text("chat_id", chat_id),
    }


def _id(memory_id: str) -> str:
    return quote(_shapes.text("memory_id", memory_id), safe="")


def _error(status: int, payload: Any, text: str, request: _Request) -> MnemoError:
    """The exception for an error answer of the API (``{message, code}``)."""
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        message, code = payload["message"], payload.get("code")
    else:
        message, code = (text.strip() or f"HTTP {status}"), None
    kw: Dict[str, Any] = {"status": status, "code": code}
    if status in (401, 403):
        return AuthenticationError(message, **kw)
    if status == 404:
        if not request.has_user:
            message += "; over HTTP a user's memory is only visible with its user_id="
        return NotFoundError(message, **kw)
    if status == 422 and _shapes.is_rejection(message):
        return RejectedError(message, **kw)
    if status in (400, 413, 415, 422):
        return InvalidRequestError(message, **kw)
    if status in (429, 503):
        return UnavailableError(message, **kw)
    return ServerError(f"HTTP {status}: {message}", **kw)


class _Api:
    """The requests behind each method, shared by both clients."""

    @staticmethod
    def add(
        messages: Messages, user_id: str, chat_id: str, agent_id: Optional[str], tenant: Optional[str]
    ) -> _Request:
        _no_tenant(tenant)
        body = _scope(_shapes.text("user_id", user_id), agent_id, _shapes.text("chat_id", chat_id))
        body["messages"] = _shapes.messages(messages)
        return _Request("POST", "/v1/messages", body=body, shape=_shapes.added)

    @staticmethod
    def search(
        query: str,
        user_id: str,
        limit: int,
        agent_id: Optional[str],
        chat_id: Optional[str],
        tenant: Optional[str],
    ) -> _Request:
        _no_tenant(tenant)
        body = _scope(_shapes.text("user_id", user_id), agent_id, chat_id)
        body.update(query=_shapes.text("query", query), top_k=_shapes.count("limit", limit, minimum=1))
        return _Request("POST", "/v1/recall", body=body, shape=_shapes.search)

    @staticmethod
    def context(
        message: str,
        user_id: str,
        chat_id: str,
        budget_tokens: Optional[int],
        agent_id: Optional[str],
        tenant: Optional[str],
    ) -> _Request:
        _no_tenant(tenant)
        body = _scope(_shapes.text("user_id", user_id), agent_id, _shapes.text("chat_id", chat_id))
        body.update(
            message=_shapes.text("message", message),
            budget_tokens=_shapes.opt_count("budget_tokens", budget_tokens, minimum=1),
        )
        return _Request("POST", "/v1/context", body=body, shape=_shapes.context)

    @staticmethod
    def show(
        memory_id: str,
        user_id: Optional[str],
        agent_id: Optional[str],
        chat_id: Optional[str],
        tenant: Optional[str],
        shape: Callable[[Any], Any],
    ) -> _Request:
        _no_tenant(tenant)
        return _Request(
            "GET",
            f"/v1/memories/{_id(memory_id)}",
            params=_scope(user_id, agent_id, chat_id),
            shape=shape,
            has_user=user_id is not None,
        )

    @staticmethod
    def page(
        user_id: Optional[str],
        agent_id: Optional[str],
        chat_id: Optional[str],
        kind: Union[str, List[str], None],
        status: Union[str, List[str], None],
        text: Optional[str],
        limit: Optional[int],
        tenant: Optional[str],
        offset: int,
    ) -> _Request:
        _no_tenant(tenant)
        params = _scope(user_id, agent_id, chat_id)
        kinds, statuses = _shapes.names("kind", kind), _shapes.names("status", status)
        want = _shapes.opt_count("limit", limit, minimum=1)
        params.update(
            kind=",".join(kinds) or None,
            status=",".join(statuses) or None,
            text=_shapes.opt_text("text", text) or None,
            limit=min(_PAGE, want) if want is not None else _PAGE,
            offset=offset,
        )
        return _Request("GET", "/v1/memories", params=params)

    @staticmethod
    def update(
        memory_id: str,
        text: str,
        user_id: Optional[str],
        agent_id: Optional[str],
        chat_id: Optional[str],
        tenant: Optional[str],
    ) -> _Request:
        _no_tenant(tenant)
        previous = _shapes.text("memory_id", memory_id)
        body = _scope(user_id, agent_id, chat_id)
        body["content"] = _shapes.text("text", text)
        return _Request(
            "PATCH",
            f"/v1/memories/{_id(previous)}",
            body=body,
            shape=lambda out: _shapes.updated(out, previous),
            has_user=user_id is not None,
        )

    @staticmethod
    def delete(
        memory_id: str, user_id: Optional[str], agent_id: Optional[str], chat_id: Optional[str], tenant: Optional[str]
    ) -> _Request:
        _no_tenant(tenant)
        return _Request(
            "DELETE",
            f"/v1/memories/{_id(memory_id)}",
            params=_scope(user_id, agent_id, chat_id),
            shape=lambda out: None,
            has_user=user_id is not None,
        )

    @staticmethod
    def delete_all(user_id: str, agent_id: Optional[str], tenant: Optional[str]) -> _Request:
        _no_tenant(tenant)
        user = quote(_shapes.text("user_id", user_id), safe="")
        params = {"agent_id": _shapes.opt_text("agent_id", agent_id)}
        return _Request("POST", f"/v1/users/{user}/clear", params=params, shape=dict)

    @staticmethod
    def erase_user(user_id: str, tenant: Optional[str]) -> _Request:
        _no_tenant(tenant)
        user = quote(_shapes.text("user_id", user_id), safe="")
        return _Request("POST", f"/v1/users/{user}/erase", shape=dict)


def _headers(api_key: Optional[str]) -> Dict[str, str]:
    key = api_key if api_key is not None else os.environ.get("MNEMO_API_KEY")
    headers = {"Accept": "application/json", "User-Agent": "mnemo-python"}
    if key:
        headers["Authorization"] = f"Bearer {_shapes.text('api_key', key)}"
    return headers


def _httpx() -> Any:
    try:
        import httpx
    except ImportError as e:  # pragma: no cover - httpx is a dependency of the package
        raise ImportError("mnemo.Client needs httpx: pip install httpx") from e
    return httpx


def _answer(response: "httpx.Response", request: _Request) -> Any:
    if response.status_code == 204:
        return request.shape(None)
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.status_code >= 400:
        raise _error(response.status_code, payload, response.text, request)
    if payload is None:
        raise ServerError(f"HTTP {response.status_code}: the answer is not JSON: {response.text[:200]!r}")
    return request.shape(payload)


def _unreachable(base_url: str, e: Exception) -> UnavailableError:
    return UnavailableError(f"cannot reach the mnemo server at {base_url}: {e}")


class Client:
    """The methods of :class:`mnemo.Memory` over the HTTP API of ``mnemo serve``.

    ``Client("http://127.0.0.1:8080", api_key="mnemo_...")``; the key defaults to
    ``$MNEMO_API_KEY`` and decides the tenant, so the methods take no ``tenant``. Over HTTP a
    user's memory is only visible with its ``user_id``, so pass it to ``get``, ``update``,
    ``delete`` and ``history``. Safe to share between threads; ``close()`` (or a ``with``
    block) closes its connections.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: Optional[str] = None,
        timeout: float = 30.0,
        transport: "Optional[httpx.BaseTransport]" = None,
    ) -> None:
        httpx = _httpx()
        self.base_url = _shapes.text("base_url", base_url).rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )
        self._closed = False

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}{', closed' if self._closed else ''})"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections; later calls raise ``ClosedError``. Idempotent."""
        self._closed = True
        self._http.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def _send(self, request: _Request) -> Any:
        if self._closed:
            raise ClosedError("this Client is closed; open a new one")
        httpx = _httpx()
        try:
            response = self._http.request(request.method, request.path, params=request.params, json=request.body)
        except httpx.TransportError as e:
            raise _unreachable(self.base_url, e) from e
        return _answer(response, request)

    def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        chat_id: str = "default",
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Appends messages to the user's chat and remembers what they say
        (``POST /v1/messages``); see :meth:`mnemo.Memory.add`."""
        return self._send(_Api.add(messages, user_id, chat_id, agent_id, tenant))  # type: ignore[no-any-return]

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
        """Memories of the user relevant to ``query`` (``POST /v1/recall``); see
        :meth:`mnemo.Memory.search`."""
        return self._send(_Api.search(query, user_id, limit, agent_id, chat_id, tenant))  # type: ignore[no-any-return]

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
        """The memory block for the chat's next turn (``POST /v1/context``); see
        :meth:`mnemo.Memory.context`."""
        request = _Api.context(message, user_id, chat_id, budget_tokens, agent_id, tenant)
        return self._send(request)  # type: ignore[no-any-return]

    def get(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One memory by id (``GET /v1/memories/{id}``); see :meth:`mnemo.Memory.get`."""
        shape = lambda out: _shapes.memory(out["memory"])  # noqa: E731
        return self._send(_Api.show(memory_id, user_id, agent_id, chat_id, tenant, shape))  # type: ignore[no-any-return]

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
        """The memories visible to the scope, newest first (``GET /v1/memories``, page by
        page); see :meth:`mnemo.Memory.get_all`."""
        out: List[Dict[str, Any]] = []
        offset = 0
        while True:
            left = None if limit is None else limit - len(out)
            page = self._send(_Api.page(user_id, agent_id, chat_id, kind, status, text, left, tenant, offset))
            out.extend(_shapes.memory(m) for m in page["items"])
            offset = page.get("next_offset")
            if offset is None or (limit is not None and len(out) >= limit):
                return out

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
        """Replaces a memory's statement through the gate (``PATCH /v1/memories/{id}``); see
        :meth:`mnemo.Memory.update`."""
        return self._send(_Api.update(memory_id, text, user_id, agent_id, chat_id, tenant))  # type: ignore[no-any-return]

    def delete(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> None:
        """Deletes (archives) a memory (``DELETE /v1/memories/{id}``); see
        :meth:`mnemo.Memory.delete`."""
        self._send(_Api.delete(memory_id, user_id, agent_id, chat_id, tenant))

    def history(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """A memory's history, oldest first (``GET /v1/memories/{id}``); see
        :meth:`mnemo.Memory.history`."""
        shape = lambda out: list(out["history"])  # noqa: E731
        return self._send(_Api.show(memory_id, user_id, agent_id, chat_id, tenant, shape))  # type: ignore[no-any-return]

    def delete_all(
        self, *, user_id: str, agent_id: Optional[str] = None, tenant: Optional[str] = None
    ) -> Dict[str, Any]:
        """Clears what memory holds about the user (``POST /v1/users/{user_id}/clear``); see
        :meth:`mnemo.Memory.delete_all`."""
        return self._send(_Api.delete_all(user_id, agent_id, tenant))  # type: ignore[no-any-return]

    def erase_user(self, user_id: str, *, tenant: Optional[str] = None) -> Dict[str, Any]:
        """Erases everything of the user (``POST /v1/users/{user_id}/erase``); see
        :meth:`mnemo.Memory.erase_user`."""
        return self._send(_Api.erase_user(user_id, tenant))  # type: ignore[no-any-return]


class AsyncClient:
    """:class:`Client` for ``asyncio``: the same methods, awaited, on ``httpx.AsyncClient``.

    ``async with AsyncClient(url, api_key=...) as c: await c.search(...)``; ``aclose()``
    closes its connections.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: Optional[str] = None,
        timeout: float = 30.0,
        transport: "Optional[httpx.AsyncBaseTransport]" = None,
    ) -> None:
        httpx = _httpx()
        self.base_url = _shapes.text("base_url", base_url).rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )
        self._closed = False

    def __repr__(self) -> str:
        return f"AsyncClient({self.base_url!r}{', closed' if self._closed else ''})"

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connections; later calls raise ``ClosedError``. Idempotent."""
        self._closed = True
        await self._http.aclose()

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    async def _send(self, request: _Request) -> Any:
        if self._closed:
            raise ClosedError("this AsyncClient is closed; open a new one")
        httpx = _httpx()
        try:
            response = await self._http.request(
                request.method, request.path, params=request.params, json=request.body
            )
        except httpx.TransportError as e:
            raise _unreachable(self.base_url, e) from e
        return _answer(response, request)

    async def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        chat_id: str = "default",
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Appends messages to the user's chat and remembers what they say; see
        :meth:`mnemo.Memory.add`."""
        return await self._send(_Api.add(messages, user_id, chat_id, agent_id, tenant))  # type: ignore[no-any-return]

    async def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """Memories of the user relevant to ``query``; see :meth:`mnemo.Memory.search`."""
        request = _Api.search(query, user_id, limit, agent_id, chat_id, tenant)
        return await self._send(request)  # type: ignore[no-any-return]

    async def context(
        self,
        message: str,
        *,
        user_id: str,
        chat_id: str = "default",
        budget_tokens: Optional[int] = None,
        agent_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Context:
        """The memory block for the chat's next turn; see :meth:`mnemo.Memory.context`."""
        request = _Api.context(message, user_id, chat_id, budget_tokens, agent_id, tenant)
        return await self._send(request)  # type: ignore[no-any-return]

    async def get(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One memory by id; see :meth:`mnemo.Memory.get`."""
        shape = lambda out: _shapes.memory(out["memory"])  # noqa: E731
        request = _Api.show(memory_id, user_id, agent_id, chat_id, tenant, shape)
        return await self._send(request)  # type: ignore[no-any-return]

    async def get_all(
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
        """The memories visible to the scope, newest first; see :meth:`mnemo.Memory.get_all`."""
        out: List[Dict[str, Any]] = []
        offset = 0
        while True:
            left = None if limit is None else limit - len(out)
            page = await self._send(_Api.page(user_id, agent_id, chat_id, kind, status, text, left, tenant, offset))
            out.extend(_shapes.memory(m) for m in page["items"])
            offset = page.get("next_offset")
            if offset is None or (limit is not None and len(out) >= limit):
                return out

    async def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Replaces a memory's statement through the gate; see :meth:`mnemo.Memory.update`."""
        request = _Api.update(memory_id, text, user_id, agent_id, chat_id, tenant)
        return await self._send(request)  # type: ignore[no-any-return]

    async def delete(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> None:
        """Deletes (archives) a memory; see :meth:`mnemo.Memory.delete`."""
        await self._send(_Api.delete(memory_id, user_id, agent_id, chat_id, tenant))

    async def history(
        self,
        memory_id: str,
        *,
        user_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_id: Optional[str] = None,
        tenant: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """A memory's history, oldest first; see :meth:`mnemo.Memory.history`."""
        shape = lambda out: list(out["history"])  # noqa: E731
        request = _Api.show(memory_id, user_id, agent_id, chat_id, tenant, shape)
        return await self._send(request)  # type: ignore[no-any-return]

    async def delete_all(
        self, *, user_id: str, agent_id: Optional[str] = None, tenant: Optional[str] = None
    ) -> Dict[str, Any]:
        """Clears what memory holds about the user; see :meth:`mnemo.Memory.delete_all`."""
        return await self._send(_Api.delete_all(user_id, agent_id, tenant))  # type: ignore[no-any-return]

    async def erase_user(self, user_id: str, *, tenant: Optional[str] = None) -> Dict[str, Any]:
        """Erases everything of the user; see :meth:`mnemo.Memory.erase_user`."""
        return await self._send(_Api.erase_user(user_id, tenant))  # type: ignore[no-any-return]
