"""Batch tests' helpers: reading the JSON lines a run writes, without its wall-clock fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def without_timing(value: Any) -> Any:
    """``value`` (parsed JSON) with wall-clock fields removed: they differ between any two runs."""
    if isinstance(value, dict):
        return {
            k: without_timing(v)
            for k, v in value.items()
            if k not in ("wall_s", "elapsed_s", "t", "started_at", "seconds", "read_seconds")
        }
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
