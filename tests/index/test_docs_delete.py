"""Deleting documents keeps every part of the index consistent, on both backends: the
result is the index a fresh ingest of the remaining documents builds (same BM25 scores,
same grep counts, same listing), committed as one state."""

from __future__ import annotations

import pytest

from thresher.errors import InputError, UnknownIdError
from thresher.index.backends import ingest, open_store
from thresher.index.store import ManagesDocuments

from .test_store_contract import chroma_server  # noqa: F401 (fixture)

BACKENDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]
GONE = ["astro-2", "bake-1", "chess-3"]


def _location(kind, name, tmp_path, request) -> str:
    if kind == "embedded":
        return str(tmp_path / name)
    return f"{request.getfixturevalue('chroma_server')}/{name}-{tmp_path.name[-12:]}"


def _open(location, small_config, minilm, tmp_path):
    if location.startswith("http"):
        from thresher.index.server.store import ServerStore

        cache = tmp_path / f"cache-{location.rsplit('/', 1)[-1]}"
        return ServerStore(location, config=small_config, embedder=minilm, cache_dir=cache,
                           refresh_s=0)  # fmt: skip
    return open_store(location, small_config, embedder=minilm)


def _fingerprint(store):
    """What a reader sees: the listing, BM25 and dense rankings with scores, grep counts."""
    queries = ["station orbit", "sourdough bread starter", "chess opening", "river"]
    return (
        [(d.doc_id, d.chunk_ids, d.title) for d in store.list_documents()],
        [[(h.chunk.chunk_id, round(h.score, 5)) for h in store.bm25_search(q, k=10)]
         for q in queries],
        [[h.chunk.chunk_id for h in store.dense_search(q, k=10)] for q in queries],
        [store.grep(p, limit=50).total for p in ("[Tt]he", "Orion", "bread")],
        store.stats().documents,
        store.stats().chunks,
    )  # fmt: skip


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.slow
def test_delete_leaves_the_index_a_fresh_ingest_of_the_rest_builds(
    kind, documents, minilm, small_config, tmp_path, request
):
    where = _location(kind, "del", tmp_path, request)
    ingest(documents, where, small_config, embedder=minilm, progress=False)
    rest = [d for d in documents if d.doc_id not in GONE]
    fresh = _location(kind, "fresh", tmp_path, request)
    ingest(rest, fresh, small_config, embedder=minilm, progress=False)

    store = _open(where, small_config, minilm, tmp_path)
    try:
        assert isinstance(store, ManagesDocuments)
        report = store.delete_documents(GONE)
        assert report.documents_deleted == 3 and report.documents_kept == len(rest)
        for doc_id in GONE:
            with pytest.raises(UnknownIdError):
                store.read_document(doc_id)
        assert not any(h.chunk.doc_id in GONE for h in store.hybrid_search("Orion bread", k=50))
        with _open(fresh, small_config, minilm, tmp_path) as reference:
            assert _fingerprint(store) == _fingerprint(reference)
    finally:
        store.close()
    # the index is still one an ingest continues from: the deleted documents come back
    again = ingest(documents, where, small_config, embedder=minilm, progress=False)
    assert again.documents_added == 3 and again.documents_unchanged == len(rest)


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_unknown_id_deletes_nothing(kind, documents, minilm, small_config, tmp_path, request):
    where = _location(kind, "unknown", tmp_path, request)
    ingest(documents[:4], where, small_config, embedder=minilm, progress=False)
    with _open(where, small_config, minilm, tmp_path) as store:
        before = _fingerprint(store)
        with pytest.raises(UnknownIdError, match="nothing was deleted"):
            store.delete_documents(["astro-1", "no-such-doc"])
        with pytest.raises(InputError, match="empty"):
            store.delete_documents([d.doc_id for d in documents[:4]])
        assert _fingerprint(store) == before


def test_a_store_opened_before_the_delete_sees_the_new_state(
    documents, minilm, small_config, tmp_path
):
    where = str(tmp_path / "shared")
    ingest(documents, where, small_config, embedder=minilm, progress=False)
    with _open(where, small_config, minilm, tmp_path) as reader:
        assert reader.read_document("geo-1")
        with _open(where, small_config, minilm, tmp_path) as writer:
            writer.delete_documents(["geo-1"])
        with pytest.raises(UnknownIdError):
            reader.read_document("geo-1")
        assert "geo-1" not in {d.doc_id for d in reader.list_documents()}
