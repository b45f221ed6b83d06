"""A pinned embedded store (``PinsGeneration``) reads the generation live when it was
pinned, whatever an ingest or a delete commits after; the store it came from moves on,
owns it (closing the store closes it; closing it does nothing) and shares its caches.
Vectors come from a deterministic hashing embedder: no model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.errors import BackendUnavailableError, UnknownIdError
from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.store import PinsGeneration

from .hash_embedder import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


def _docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(f"d{i:03d}", f"Town {i}", f"Town {i} keeps a mill built in {1700 + i}.", "test")
        for i in range(start, start + n)
    ]


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    where = tmp_path / "index"
    ingest(_docs(30), where, Config(), embedder=HashEmbedder(), progress=False)
    return where


@pytest.fixture
def store(index_dir: Path):
    s = EmbeddedStore(index_dir, Config(), embedder=CountingEmbedder())
    yield s
    s.close()


def _docs_found(found: list) -> set[str]:
    return {h.chunk.doc_id for h in found}


def test_a_pinned_store_reads_its_generation_after_an_ingest_commits(index_dir, store) -> None:
    assert isinstance(store, PinsGeneration)
    pinned = store.pinned()
    before = pinned.stats()
    ingest(_docs(30) + _docs(5, start=500), index_dir, Config(), embedder=HashEmbedder(),
           progress=False)  # fmt: skip
    assert store.stats().chunks == 35  # the store moved on
    assert pinned.stats() == before and before.chunks == 30
    assert pinned.stats().extra["generation"] != store.stats().extra["generation"]
    assert "d503" in _docs_found(store.bm25_search("Town 503 mill 2203", k=5))
    assert "d503" not in _docs_found(pinned.bm25_search("Town 503 mill 2203", k=5))
    with pytest.raises(UnknownIdError):
        pinned.read_document("d503")
    assert pinned.read_document("d007")[0].doc_id == "d007"
    assert pinned.pinned() is pinned  # already fixed


def test_a_pinned_store_still_reads_a_document_deleted_after(store) -> None:
    pinned = store.pinned()
    store.delete_documents(["d004"])
    with pytest.raises(UnknownIdError):
        store.read_document("d004")
    chunks = pinned.read_document("d004")
    assert chunks and chunks[0].doc_id == "d004"
    assert pinned.get([chunks[0].chunk_id])[0].text == chunks[0].text
    assert "d004" in pinned.doc_ids() and "d004" not in store.doc_ids()
    assert pinned.similarity("Town 4 mill", [chunks[0].chunk_id])


def test_the_store_owns_its_pinned_views(store) -> None:
    pinned = store.pinned()
    pinned.close()  # does nothing: the store owns the generation
    assert pinned.hybrid_search("mill", k=3)
    assert store.hybrid_search("mill", k=3)
    store.close()
    with pytest.raises(BackendUnavailableError, match="closed"):
        pinned.hybrid_search("mill", k=3)
    with pytest.raises(BackendUnavailableError, match="closed"):
        store.pinned()


def test_a_pinned_store_shares_the_stores_query_vectors(store) -> None:
    embedder = store.embedder
    assert isinstance(embedder, CountingEmbedder)
    first = store.dense_search("a mill built in 1712", k=3)
    embedded = embedder.texts
    assert store.pinned().dense_search("a mill built in 1712", k=3) == first
    assert embedder.texts == embedded  # the vector the store embedded, not embedded again
