"""Where the development data lives, and skipping a test without it (importable as ``devdata``)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: ../shared/data/dev relative to the repository (a sibling checkout of shared/).
DEV_DATA = (REPO_ROOT / ".." / "shared" / "data" / "dev").resolve()


def dev_file(name: str) -> Path:
    """Path of a development data file; skips the calling test when it is absent."""
    path = DEV_DATA / name
    if not path.exists():
        pytest.skip(f"development data not present: {path}")
    return path
