"""Index fixtures: the made-up corpus (``documents.py``), the real MiniLM embedder
(loaded once per session) and one index built from the corpus once."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document

from .documents import make_documents
from .helpers import CountingEmbedder


@pytest.fixture(scope="session")
def documents() -> list[Document]:
    """The shared made-up corpus (36 short documents)."""
    return make_documents()


@pytest.fixture(scope="session")
def minilm():
    """The real MiniLM int8 embedder (skips when its registry packages are missing)."""
    from thresher.errors import ModelMissingError
    from thresher.index.embed.embedder import get_embedder

    try:
        embedder = get_embedder("minilm-int8")
        embedder.embed(["warm up"])
    except ModelMissingError as exc:
        pytest.skip(str(exc))
    return embedder


@pytest.fixture
def counting(minilm) -> CountingEmbedder:
    return CountingEmbedder(minilm)


@pytest.fixture(scope="session")
def small_config() -> Config:
    """Small chunks, so that several documents have more than one chunk."""
    return Config().override({"chunking.max_tokens": 24})


@pytest.fixture(scope="session")
def built_index(tmp_path_factory, documents, minilm, small_config) -> Path:
    """One index of the shared corpus, built once per session (treat as read-only)."""
    from thresher.index.backends import ingest

    index_dir = tmp_path_factory.mktemp("index")
    ingest(documents, index_dir, small_config, embedder=minilm, progress=False)
    return index_dir


@pytest.fixture(scope="session")
def store(built_index, small_config, minilm):
    """An EmbeddedStore open on the shared index."""
    from thresher.index.embedded.store import EmbeddedStore

    s = EmbeddedStore(built_index, small_config, embedder=minilm)
    yield s
    s.close()
