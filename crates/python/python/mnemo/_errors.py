"""The exceptions of mnemo: one base class, one subclass per way a call can fail.

The embedded engine raises them with the engine's own message; the HTTP clients raise the same
classes for the server's answers (``status`` and ``code`` then say what the server said), so one
``except`` clause serves both.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "MnemoError",
    "InvalidRequestError",
    "RejectedError",
    "NotFoundError",
    "UnavailableError",
    "ConfigError",
    "ModelError",
    "ModelNotFoundError",
    "StoreError",
    "ClosedError",
    "AuthenticationError",
    "ServerError",
]


class MnemoError(Exception):
    """Base class of every error mnemo raises.

    ``str(error)`` is the engine's (or the server's) message. Over HTTP, ``status`` is the HTTP
    status and ``code`` the API's stable error code (``invalid_request``, ``not_found``...);
    both are ``None`` for the embedded engine.
    """

    def __init__(self, message: str = "", *, status: Optional[int] = None, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class InvalidRequestError(MnemoError, ValueError):
    """The request was invalid (a message without content, a bad id, a missing user); nothing
    was written."""


class RejectedError(InvalidRequestError):
    """The rules every memory passes refused the input (too short or long, personal data);
    nothing was written."""


class NotFoundError(MnemoError, LookupError):
    """No memory by that id is visible to the scope (over HTTP: to the key and the user)."""


class UnavailableError(MnemoError):
    """Something the call needs is busy or down (a chat being extracted, the embedding model
    over HTTP, the server unreachable); retrying shortly may work."""


class ConfigError(MnemoError):
    """The configuration (file, ``MNEMO_*`` variables or arguments) is invalid."""


class ModelError(MnemoError):
    """The embedding model failed to load or run."""


class ModelNotFoundError(ModelError):
    """The local model is not in its directory: ``mnemo.fetch_model()`` installs it, and
    ``embedder="hash"`` runs without one (tests)."""


class StoreError(MnemoError):
    """The store (SQLite file or PostgreSQL) failed."""


class ClosedError(MnemoError):
    """The ``Memory`` (or client) was closed; open a new one."""


class AuthenticationError(MnemoError):
    """The server refused the API key (missing, unknown, revoked, or not allowed this route)."""


class ServerError(MnemoError):
    """The server failed (HTTP 5xx) or answered something that is not the mnemo API."""
