"""Serving fixtures: the served corpus (see ``helpers.py``) in a real index, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.small_corpus import corpus_config
from serve.helpers import serve_corpus


@pytest.fixture(scope="session")
def serve_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The serving corpus in a real index folder, built with the real embedder (once)."""
    from thresher.index.backends import ingest

    path = tmp_path_factory.mktemp("serve-index")
    ingest(serve_corpus(), path, corpus_config(), progress=False)
    return path
