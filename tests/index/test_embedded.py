"""EmbeddedStore over a real on-disk index of the shared corpus, with the real MiniLM."""

from __future__ import annotations

import re

import pytest

from thresher.corpus.document import Chunk
from thresher.errors import (
    BackendUnavailableError,
    InputError,
    PatternRejectedError,
    UnknownIdError,
)
from thresher.index.backends import open_store
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.store import Store


def corpus_chunks(store, documents):
    """Every chunk in corpus order (documents in ingest order, then position)."""
    return [c for d in documents for c in store.read_document(d.doc_id)]


def top_docs(hits, n=3):
    return [h.chunk.doc_id for h in hits[:n]]


def test_it_is_a_store_with_the_expected_contents(store, documents) -> None:
    assert isinstance(store, Store)
    stats = store.stats()
    assert stats.backend == "embedded"
    assert stats.documents == len(documents) == 36
    assert stats.chunks == len(corpus_chunks(store, documents))
    assert stats.chunks > stats.documents  # small chunks: some documents have several
    assert (stats.embedder, stats.dimension, stats.format_version) == ("minilm-int8", 384, 2)
    assert stats.extra["chunking"] == {"max_tokens": 24, "tokenizer": "o200k_base"}


def test_bm25_finds_the_lexical_match(store) -> None:
    hits = store.bm25_search("sourdough starter yeast", k=5)
    assert top_docs(hits, 1) == ["bake-1"]
    assert all(h.method == "bm25" and h.bm25_score > 0 for h in hits)
    assert [h.bm25_rank for h in hits] == list(range(1, len(hits) + 1))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_dense_finds_the_paraphrase(store) -> None:
    hits = store.dense_search("amphibian that can regenerate its legs", k=5)
    assert top_docs(hits, 1) == ["zoo-2"]
    assert all(h.method == "dense" and -1.0 <= h.dense_score <= 1.0 for h in hits)
    keys = [(-h.score, h.chunk.chunk_id) for h in hits]
    assert keys == sorted(keys)


def test_hybrid_fuses_both_and_carries_ranks_and_scores(store) -> None:
    hits = store.hybrid_search("Who approved the mission of the station orbiting Io?", k=10)
    assert "astro-2" in top_docs(hits, 3)
    assert len(hits) == 10
    assert all(h.method == "hybrid" for h in hits)
    keys = [(-h.score, h.chunk.chunk_id) for h in hits]
    assert keys == sorted(keys)
    for h in hits:  # the RRF score is rebuilt from the ranks it carries
        expected = sum(1 / (60 + r) for r in (h.bm25_rank, h.dense_rank) if r is not None)
        assert h.score == pytest.approx(expected)
        assert (h.bm25_rank is None) == (h.bm25_score is None)
        assert (h.dense_rank is None) == (h.dense_score is None)
    both = [h for h in hits if h.bm25_rank and h.dense_rank]
    assert both, "the top hits should be found by both retrievers"


@pytest.mark.parametrize("method", ["bm25_search", "dense_search", "hybrid_search"])
def test_exclusion_happens_before_the_cut(store, method) -> None:
    search = getattr(store, method)
    query = "Port Amsel lighthouse on the River Vell"
    full = search(query, k=12)
    seen = {h.chunk.chunk_id for h in full[:4]}
    again = search(query, k=5, exclude=seen)
    assert len(again) == 5
    assert not seen & {h.chunk.chunk_id for h in again}
    if method != "hybrid_search":  # single retrievers: exactly the next ones
        assert [h.chunk.chunk_id for h in again] == [h.chunk.chunk_id for h in full[4:9]]


def test_excluding_almost_everything_still_returns_what_is_left(store, documents) -> None:
    every = [c.chunk_id for c in corpus_chunks(store, documents)]
    left = every[:3]
    exclude = set(every[3:])
    dense = store.dense_search("anything at all", k=10, exclude=exclude)
    assert sorted(h.chunk.chunk_id for h in dense) == sorted(left)
    hybrid = store.hybrid_search("Kepler Station Io", k=10, exclude=exclude)
    assert {h.chunk.chunk_id for h in hybrid} <= set(left)
    assert len(hybrid) == 3


GREP_PATTERNS = [
    r"Port Amsel",
    r"(?i)port amsel",
    r"\bE\d{4}\b",
    r"\d{4}-\d{2}-\d{2}",
    r"[\w.]+@example\.(org|net)",
    r"Müller|naïve",
    r"^The",
    r"(?m)^The last",
    r"storm\.$",
    r"\.$",
    r"(a+)+$",
    r"(?x) salt \s war",
    r"C:\\Users",
    r"\bVell\b",
    r"[^\x00-\x7F]",
]


@pytest.mark.parametrize("pattern", GREP_PATTERNS)
def test_grep_returns_what_python_re_finds(store, documents, pattern) -> None:
    chunks = corpus_chunks(store, documents)
    expected = [c.chunk_id for c in chunks if re.search(pattern, c.text)]
    everything = store.grep(pattern, limit=len(chunks))
    assert [h.chunk.chunk_id for h in everything.hits] == expected
    assert everything.total == len(expected) and not everything.cut
    first = store.grep(pattern)  # default limit 5
    assert [h.chunk.chunk_id for h in first.hits] == expected[:5]
    assert first.total == len(expected) and first.cut == (len(expected) > 5)
    skip = set(expected[:3])
    after = store.grep(pattern, limit=2, exclude=skip)
    assert [h.chunk.chunk_id for h in after.hits] == expected[3:5]
    assert after.total == len(expected) - len(skip)  # counted after exclusion
    assert all(h.method == "grep" for h in store.grep(pattern, limit=2).hits)


def test_grep_refuses_hostile_patterns(store) -> None:
    for pattern in [r"(a)\1", r"(?<=a)b", "a" * 300, r"(a{50}){50}", ""]:
        with pytest.raises(PatternRejectedError):
            store.grep(pattern)


def test_get_keeps_the_order_asked_and_names_unknown_ids(store) -> None:
    chunks = store.get(["zoo-2#0", "astro-1#0", "zoo-2#0"])
    assert [c.chunk_id for c in chunks] == ["zoo-2#0", "astro-1#0", "zoo-2#0"]
    assert chunks[0].text.startswith("The axolotl")
    assert store.get([]) == []
    with pytest.raises(UnknownIdError) as err:
        store.get(["zoo-2#0", "nope#0", "zoo-2#99"])
    assert err.value.ids == ["nope#0", "zoo-2#99"]
    assert "nope#0" in str(err.value)


def test_chunks_carry_provenance_and_metadata(store, documents) -> None:
    by_id = {d.doc_id: d for d in documents}
    for chunk in store.read_document("multi-1") + store.read_document("hist-3"):
        doc = by_id[chunk.doc_id]
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.title == doc.title and chunk.source == doc.source
        assert chunk.metadata == doc.metadata  # lists JSON round-trip; bools stay bools
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", chunk.ingested_at)


def test_read_document_in_position_order(store) -> None:
    chunks = store.read_document("multi-1")
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len(chunks) >= 2
    assert [c.chunk_id for c in chunks] == [f"multi-1#{i}" for i in range(len(chunks))]
    with pytest.raises(UnknownIdError, match="no-such-doc"):
        store.read_document("no-such-doc")


def test_similarity_agrees_with_the_searches(store) -> None:
    query = "sulfur plumes on Io"
    dense = {h.chunk.chunk_id: h.dense_score for h in store.dense_search(query, k=60)}
    bm25 = {h.chunk.chunk_id: h.bm25_score for h in store.bm25_search(query, k=60)}
    ids = ["astro-3#0", "bake-2#0", "astro-1#0"]
    pairs = store.similarity(query, ids)
    for cid, (b, d) in zip(ids, pairs, strict=True):
        assert b == pytest.approx(bm25.get(cid, 0.0), rel=1e-5)
        assert d == pytest.approx(dense[cid], abs=1e-4)
    assert pairs[0][1] > pairs[1][1]
    assert store.similarity(query, []) == []
    with pytest.raises(UnknownIdError):
        store.similarity(query, ["astro-3#0", "missing#0"])


@pytest.mark.parametrize("method", ["hybrid_search", "bm25_search", "dense_search"])
def test_empty_queries_and_bad_k_are_input_errors(store, method) -> None:
    with pytest.raises(InputError, match="empty query"):
        getattr(store, method)("   ")
    with pytest.raises(InputError, match="positive"):
        getattr(store, method)("river", k=0)
    with pytest.raises(InputError):
        store.similarity("", ["zoo-2#0"])


def test_open_store_and_close(built_index, small_config) -> None:
    opened = open_store(str(built_index), small_config)
    assert isinstance(opened, EmbeddedStore)
    assert top_docs(opened.bm25_search("axolotl", k=1)) == ["zoo-2"]
    opened.close()
    opened.close()  # idempotent
    with pytest.raises(BackendUnavailableError, match="closed"):
        opened.bm25_search("axolotl")


def test_open_store_hands_urls_to_the_server_backend() -> None:
    # Either the server backend exists (and fails to reach a closed port) or it is
    # absent; both end in a typed error, never NotImplementedError.
    with pytest.raises(BackendUnavailableError):
        open_store("http://127.0.0.1:9/chunks")


def test_similarity_is_each_rows_own_dot_product(store) -> None:
    # one vecdot over the rows gives the floats ``vector @ query`` gives row by row
    query = "sulfur plumes on Io"
    ids = ["astro-3#0", "bake-2#0", "astro-3#0", "astro-1#0"]
    vectors = store._view().exact.get().vectors(ids)
    q = store._queries.embed_query(query)
    assert [d for _, d in store.similarity(query, ids)] == [float(vectors[c] @ q) for c in ids]
    assert store._view().exact.get().follows(store._view().bm25.id_list)


def test_a_cache_holding_every_chunk_never_evicts_and_reads_in_bulk() -> None:
    from thresher.index.view import ChunkCache

    chunks = [Chunk(f"d{i}#0", f"d{i}", 0, "t", "text", 0, 4, "h", "s") for i in range(3)]
    whole = ChunkCache(maxsize=3, chunks=3)
    whole.store(chunks)
    assert whole.all_of(["d2#0", "d0#0", "d2#0"]) == [chunks[2], chunks[0], chunks[2]]
    assert whole.all_of(["d0#0", "gone#0"]) is None
    lru = ChunkCache(maxsize=2, chunks=3)  # too small for the index: an LRU
    lru.store(chunks[:2])
    assert lru.all_of(["d0#0"]) is None and set(lru.lookup(["d0#0"])) == {"d0#0"}
    lru.store(chunks[2:])  # d1 was used least recently
    assert set(lru.lookup(["d0#0", "d1#0", "d2#0"])) == {"d0#0", "d2#0"}
