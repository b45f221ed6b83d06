"""Shared test helpers: where the development data lives, and skipping without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from devdata import DEV_DATA, REPO_ROOT, dev_file  # noqa: F401  (re-exported)


@pytest.fixture
def dev_data() -> Path:
    """The development data folder; skips when absent."""
    if not DEV_DATA.is_dir():
        pytest.skip(f"development data not present: {DEV_DATA}")
    return DEV_DATA
