"""Shared hardening fixtures: the real embedder, loaded once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedder():
    """The default MiniLM embedder, the one an ingest process run with the default
    settings uses (skips when its model package is not installed)."""
    from thresher.config import RetrievalConfig
    from thresher.errors import ModelMissingError
    from thresher.index.embed.embedder import get_embedder

    try:
        return get_embedder(RetrievalConfig().embedder)
    except ModelMissingError as exc:
        pytest.skip(str(exc))
