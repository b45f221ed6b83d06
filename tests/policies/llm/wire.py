"""Replies of a real small model, read from the recorded wire file (importable as ``wire``).

The file is third-party data and is not in the repository: it is read from
``../shared/data/llm`` relative to the checkout, and a test that needs it is
skipped when it is absent (as ``tests/devdata.py`` does for the dev data).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
WIRE = (
    REPO_ROOT / ".." / "shared" / "data" / "llm" / "qwen2.5-coder-0.5b-llamacpp-wire.jsonl"
).resolve()


@lru_cache(maxsize=1)
def _exchanges() -> tuple[dict[str, Any], ...]:
    with WIRE.open(encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def exchanges() -> tuple[dict[str, Any], ...]:
    """Every recorded exchange; skips the calling test when the file is absent."""
    if not WIRE.exists():
        pytest.skip(f"recorded model replies not present: {WIRE}")
    return _exchanges()


def completion(i: int) -> dict[str, Any]:
    """Exchange ``i``'s response body (a chat completion), to serve verbatim."""
    body = exchanges()[i]["response"]
    assert isinstance(body, dict) and body.get("choices"), f"exchange {i} is no completion"
    return body


def content(i: int) -> str:
    """What the model wrote in exchange ``i``."""
    return completion(i)["choices"][0]["message"].get("content") or ""


def served(i: int) -> dict[str, Any]:
    """Exchange ``i``'s completion as a replay-server script entry."""
    return {"completion": completion(i)}
