"""Shared hardening fixtures: the real embedder, loaded once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedder():
    """The default MiniLM embedder (skips when its model package is not installed)."""
    from thresher.errors import ModelMissingError
    from thresher.index.embed.embedder import get_embedder

    try:
        return get_embedder("minilm-int8")
    except ModelMissingError as exc:
        pytest.skip(str(exc))
