"""The README's Python examples, run as written: the embedded one with the real local model,
the client one against a real `mnemo serve`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import need


def examples() -> List[str]:
    readme = Path(need(os.environ.get("MNEMO_README"), "MNEMO_README (the project's README.md)"))
    text = readme.read_text()
    section = re.search(r"^## Python\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Python' section"
    blocks = re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)
    assert len(blocks) >= 2, blocks
    return blocks


def run(code: str, cwd: Path, **env: str) -> "subprocess.CompletedProcess[str]":
    full = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=full, capture_output=True, text=True, timeout=300)


def test_the_embedded_example_runs_as_written(local_model: str, tmp_path: Path) -> None:
    out = run(examples()[0], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Lisbon" in out.stdout and "ex-husband" in out.stdout, out.stdout
    assert (tmp_path / "mem" / "mnemo.db").is_file()


def test_the_client_example_runs_as_written(server: Tuple[str, str], tmp_path: Path) -> None:
    url, key = server
    out = run(examples()[1], tmp_path, MNEMO_URL=url, MNEMO_API_KEY=key)
    assert out.returncode == 0, out.stderr
    found, block = out.stdout.split("\n", 1)
    assert "Lisbon" in found, out.stdout
    # A first example must show memory working: the block for the next chat carries the city.
    assert "=== USER MEMORY ===" in block and "Lisbon" in block, out.stdout
