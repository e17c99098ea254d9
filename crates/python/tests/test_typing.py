"""The installed package's type hints reach a type checker (py.typed, the native module's .pyi)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need

GOOD = '''
import asyncio
from typing import Any, Dict, List, Optional
import mnemo

m = mnemo.Memory(data_dir="./mem", embedder="hash")
report: Dict[str, Any] = m.add([{"role": "user", "content": "hi"}], user_id="dana", chat_id="c1")
hits: List[Dict[str, Any]] = m.search("where?", user_id="dana", limit=3)
ctx: mnemo.Context = m.context("hi", user_id="dana", chat_id="c2", budget_tokens=500)
text: str = ctx.text
trace: str = ctx.trace_id
receipt: Dict[str, Any] = m.erase_user("dana")
c = mnemo.Client("http://127.0.0.1:8080", api_key="k")
more: List[Dict[str, Any]] = c.get_all(user_id="dana", kind=["fact"], status=None)

async def run() -> mnemo.Context:
    async with mnemo.AsyncClient("http://127.0.0.1:8080") as a:
        return await a.context("hi", user_id="dana")

try:
    asyncio.run(run())
except mnemo.UnavailableError as e:
    status: Optional[int] = e.status
engine = mnemo._mnemo.Engine(None, None, None, "hash", None)
'''

BAD = '''
import mnemo
m = mnemo.Memory(data_dir="./mem")
m.add("hi", user_id=42)
n: int = m.context("hi", user_id="dana").text
m.search("q", usr_id="dana")
'''


def mypy(tmp_path: Path, code: str) -> "subprocess.CompletedProcess[str]":
    need(__import__("importlib").util.find_spec("mypy"), "mypy in the test environment")
    path = tmp_path / "snippet.py"
    path.write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )


def test_typed_use_checks_clean(tmp_path: Path) -> None:
    out = mypy(tmp_path, GOOD)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mistakes_are_caught_by_the_type_checker(tmp_path: Path) -> None:
    out = mypy(tmp_path, BAD)
    assert out.returncode == 1, out.stdout
    assert 'Argument "user_id" to "add" of "Memory" has incompatible type "int"' in out.stdout, out.stdout
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in out.stdout
    assert 'Unexpected keyword argument "usr_id"' in out.stdout, out.stdout
