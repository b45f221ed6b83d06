"""One Store contract, two backends: the embedded folder and a real ``chroma run`` server.

Every test in the first part runs on both backends (the server ones marked
``server``); the rest compares the backends and covers what only a server has
(ingest into a collection, resuming a stopped run, the BM25 cache, the fusion
probe, a server that is down).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path

import pytest

from thresher.errors import BackendUnavailableError, IndexNotFoundError, UnknownIdError
from thresher.index.backends import open_store
from thresher.index.fusion import rrf_score
from thresher.index.store import GrepResult, Hit, Store

from .chroma_server import free_port, running_chroma
from .documents import make_documents
from .helpers import CountingEmbedder

BACKENDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]
#: what ``chroma run`` answers a ``search``, word for word
LOCAL_REFUSAL = (
    "Error executing plan: Not implemented: Search operation is not implemented for local executor"
)
NO_SERVER_SEARCH = (
    f"server-side hybrid not offered by this server ({LOCAL_REFUSAL}); fused client-side"
)


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` on a free loopback port; yields its base URL."""
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url


@pytest.fixture(scope="module")
def server_store(chroma_server, documents, minilm, small_config, tmp_path_factory):
    """The shared corpus ingested into the server (collection ``contract``), opened."""
    from thresher.index.backends import ingest
    from thresher.index.server.store import ServerStore

    url = f"{chroma_server}/contract"
    ingest(documents, url, small_config, embedder=minilm, progress=False)
    cache = tmp_path_factory.mktemp("bm25-cache")
    s = ServerStore(url, config=small_config, embedder=minilm, cache_dir=cache, refresh_s=0)
    yield s
    s.close()


@pytest.fixture(params=BACKENDS)
def any_store(request):
    """The shared corpus on each backend (``store`` is the embedded one from conftest)."""
    return request.getfixturevalue("store" if request.param == "embedded" else "server_store")


_CORPUS: dict[int, list] = {}


def corpus_chunks(s, documents):
    """Every chunk of ``s`` in corpus order (read once per store)."""
    if id(s) not in _CORPUS:
        _CORPUS[id(s)] = [c for d in documents for c in s.read_document(d.doc_id)]
    return _CORPUS[id(s)]


def top_docs(hits, n=1):
    return [h.chunk.doc_id for h in hits[:n]]


# -- the contract, on both backends -----------------------------------------------------------


def test_it_is_a_store_holding_the_corpus(any_store, documents) -> None:
    assert isinstance(any_store, Store)
    stats = any_store.stats()
    assert stats.documents == len(documents) == 36
    assert stats.chunks == len(corpus_chunks(any_store, documents)) > stats.documents
    format_version = 2 if stats.backend == "embedded" else 1  # each backend's own format
    assert (stats.embedder, stats.dimension, stats.format_version) == (
        "minilm-int8",
        384,
        format_version,
    )
    assert stats.extra["chunking"] == {"max_tokens": 24, "tokenizer": "o200k_base"}
    if stats.backend == "server":
        assert stats.extra["fusion"] == "client"  # chroma run has no server-side search
        assert stats.extra["fusion_reason"] == NO_SERVER_SEARCH  # the server's own words
        assert stats.extra["sparse_key"] == ""  # chroma run refuses a sparse index
        assert stats.location.endswith("/contract")
        cache = Path(stats.extra["bm25_cache"])  # the folder of this state's BM25 side index
        assert cache.parent == any_store.cache_dir and (cache / "fingerprint.json").is_file()


@pytest.mark.parametrize(
    ("method", "query", "doc"),
    [
        ("bm25_search", "sourdough starter yeast", "bake-1"),
        ("dense_search", "amphibian that can regenerate its legs", "zoo-2"),
        ("hybrid_search", "Who approved the mission of the station orbiting Io?", "astro-2"),
        ("hybrid_search", "composer who wrote suites for baroque cello", "music-2"),
    ],
)
def test_searches_find_the_expected_document(any_store, method, query, doc) -> None:
    hits = getattr(any_store, method)(query, k=10)
    assert doc in top_docs(hits, 3 if method == "hybrid_search" else 1)
    keys = [(-h.score, h.chunk.chunk_id) for h in hits]
    assert keys == sorted(keys)  # best first, ties by id
    if method == "hybrid_search":
        for h in hits:
            expected = sum(1 / (60 + r) for r in (h.bm25_rank, h.dense_rank) if r is not None)
            assert h.score == pytest.approx(expected)  # rrf_k = 60 by default


HIT_QUERIES = [
    "Port Amsel lighthouse on the River Vell",
    "error code for a missing configuration file",
    "who studies volcanic plumes on Io",
]


def check_single(hits: list[Hit], method: str) -> None:
    """A single retriever's list: its own rank (1-based, = position) and score, nothing else."""
    own = "bm25" if method == "bm25" else "dense"
    other = "dense" if own == "bm25" else "bm25"
    for position, h in enumerate(hits, start=1):
        assert h.method == method and type(h.score) is float
        assert getattr(h, f"{own}_rank") == position and type(getattr(h, f"{own}_rank")) is int
        assert getattr(h, f"{own}_score") == h.score
        assert getattr(h, f"{other}_rank") is None and getattr(h, f"{other}_score") is None


@pytest.mark.parametrize("query", HIT_QUERIES)
def test_every_hit_field_follows_the_contract(any_store, query) -> None:
    retrieval = any_store.config.retrieval
    bm25 = any_store.bm25_search(query, k=retrieval.per_retriever)
    dense = any_store.dense_search(query, k=retrieval.per_retriever)
    check_single(bm25, "bm25")
    check_single(dense, "dense")
    assert bm25 and dense

    hybrid = any_store.hybrid_search(query, k=20)
    assert len(hybrid) == 20
    for h in hybrid:
        assert h.method == "hybrid" and type(h.score) is float
        assert h.bm25_rank is not None or h.dense_rank is not None
        for rank, score, single in [
            (h.bm25_rank, h.bm25_score, bm25),
            (h.dense_rank, h.dense_score, dense),
        ]:
            assert (rank is None) == (score is None)
            if rank is None:  # absent from that retriever's own list
                assert h.chunk.chunk_id not in {x.chunk.chunk_id for x in single}
                continue
            assert type(rank) is int and type(score) is float and rank >= 1
            assert single[rank - 1].chunk.chunk_id == h.chunk.chunk_id  # that list's rank
            assert single[rank - 1].score == score
        assert h.score == pytest.approx(rrf_score([h.bm25_rank, h.dense_rank], retrieval.rrf_k))

    found = any_store.grep(r"\w+ \d{4}", 50)
    assert isinstance(found, GrepResult) and found.hits
    for h in found.hits:
        assert (h.method, h.score) == ("grep", 1.0) and type(h.score) is float
        assert (h.bm25_rank, h.dense_rank, h.bm25_score, h.dense_score) == (None,) * 4

    ids = [h.chunk.chunk_id for h in hybrid[:5]]
    for cid, (b, d) in zip(ids, any_store.similarity(query, ids), strict=True):
        assert type(b) is float and type(d) is float
        by_bm25 = {x.chunk.chunk_id: x.score for x in bm25}
        assert b == pytest.approx(by_bm25.get(cid, 0.0), rel=1e-5)
        assert d == pytest.approx({x.chunk.chunk_id: x.score for x in dense}[cid], abs=1e-4)


def reopen(s, config, monkeypatch, tmp_path):
    """The same index opened again through the registry with ``config``."""
    monkeypatch.setenv("THRESHER_CACHE", str(tmp_path))  # a server's BM25 cache goes there
    return open_store(s.stats().location, config, embedder=s.embedder)


def test_hybrid_fuses_with_the_configured_rrf_k(any_store, monkeypatch, tmp_path) -> None:
    config = any_store.config.override({"retrieval.rrf_k": 7})
    with contextlib.closing(reopen(any_store, config, monkeypatch, tmp_path)) as other:
        assert other.stats().backend == any_store.stats().backend
        hits = other.hybrid_search("Port Amsel lighthouse keepers", k=10)
        for h in hits:
            assert h.score == pytest.approx(rrf_score([h.bm25_rank, h.dense_rank], 7))
        assert any(
            h.score != pytest.approx(rrf_score([h.bm25_rank, h.dense_rank], 60)) for h in hits
        )


@pytest.mark.parametrize("method", ["bm25_search", "dense_search", "hybrid_search"])
def test_exclusion_happens_before_the_cut(any_store, method) -> None:
    search = getattr(any_store, method)
    query = "Port Amsel lighthouse on the River Vell"
    full = search(query, k=12)
    seen = {h.chunk.chunk_id for h in full[:4]}
    again = search(query, k=5, exclude=seen)
    assert len(again) == 5
    assert not seen & {h.chunk.chunk_id for h in again}
    if method != "hybrid_search":
        assert [h.chunk.chunk_id for h in again] == [h.chunk.chunk_id for h in full[4:9]]


GREP_PATTERNS = [
    r"Port Amsel",
    r"(?i)port amsel",
    r"\bE\d{4}\b",
    r"\d{4}-\d{2}-\d{2}",
    r"Müller|naïve",
    r"(?m)^The last",
    r"storm\.$",
    r"(a+)+$",
    r"C:\\Users",
]


@pytest.mark.parametrize("pattern", GREP_PATTERNS)
def test_grep_returns_what_python_re_finds(any_store, documents, pattern) -> None:
    chunks = corpus_chunks(any_store, documents)
    expected = [c.chunk_id for c in chunks if re.search(pattern, c.text)]
    everything = any_store.grep(pattern, limit=len(chunks))
    assert [h.chunk.chunk_id for h in everything.hits] == expected
    assert everything.total == len(expected) and not everything.cut
    skip = set(expected[:1])
    cut = any_store.grep(pattern, 2, skip)
    assert [h.chunk.chunk_id for h in cut.hits] == expected[1:3]
    assert cut.total == len(expected) - len(skip)  # every match after exclusion
    assert cut.cut == (cut.total > 2)


def test_hostile_grep_patterns_are_refused(any_store) -> None:
    from thresher.errors import PatternRejectedError

    for pattern in [r"(a)\1", r"(?<=a)b", "a" * 300, ""]:
        with pytest.raises(PatternRejectedError):
            any_store.grep(pattern)


def test_reads_and_unknown_ids(any_store, documents) -> None:
    chunks = any_store.get(["zoo-2#0", "astro-1#0", "zoo-2#0"])
    assert [c.chunk_id for c in chunks] == ["zoo-2#0", "astro-1#0", "zoo-2#0"]
    assert chunks[0].text.startswith("The axolotl")
    with pytest.raises(UnknownIdError) as err:
        any_store.get(["zoo-2#0", "nope#0"])
    assert err.value.ids == ["nope#0"]
    doc = next(d for d in documents if d.doc_id == "multi-1")
    parts = any_store.read_document("multi-1")
    assert [c.position for c in parts] == list(range(len(parts))) and len(parts) >= 2
    assert all(doc.text[c.start : c.end] == c.text and c.metadata == doc.metadata for c in parts)
    with pytest.raises(UnknownIdError, match="no-such-doc"):
        any_store.read_document("no-such-doc")
    (bm25, cosine), *_ = any_store.similarity("axolotl gills", ["zoo-2#0", "bake-1#0"])
    assert bm25 > 0 and cosine > 0.3


# -- the two backends agree -------------------------------------------------------------------

QUERIES = [
    "sourdough starter yeast",
    "Port Amsel lighthouse",
    "error code for a missing configuration file",
    "who studies volcanic plumes on Io",
]


def fields(hits):
    """The exact Hit fields: chunk id, method and the two ranks."""
    return [(h.chunk.chunk_id, h.method, h.bm25_rank, h.dense_rank) for h in hits]


def scores(hits):
    """The Hit scores, flat (None kept): equal to 1e-4 (the server sends float32 distances)."""
    return [x for h in hits for x in (h.score, h.bm25_score, h.dense_score)]


def same(chunk):
    """The chunk without its ingest time (the two backends' ingests ran at other times)."""
    return dataclasses.replace(chunk, ingested_at="")


@pytest.mark.server
@pytest.mark.parametrize("query", QUERIES)
def test_both_backends_give_the_same_results(store, server_store, query) -> None:
    for method, k in [("bm25_search", 20), ("dense_search", 10), ("hybrid_search", 10)]:
        local = getattr(store, method)(query, k=k)
        remote = getattr(server_store, method)(query, k=k)
        assert fields(local) == fields(remote), method
        assert scores(local) == pytest.approx(scores(remote), abs=1e-4), method
        assert [same(h.chunk) for h in local] == [same(h.chunk) for h in remote]
    local, remote = store.grep(r"\w+ \d{4}", 5), server_store.grep(r"\w+ \d{4}", 5)
    assert fields(local.hits) == fields(remote.hits) and local.total == remote.total > 5
    assert scores(local.hits) == scores(remote.hits)


# -- server only ------------------------------------------------------------------------------


@pytest.mark.server
def test_ingest_into_a_server_is_incremental(chroma_server, minilm, small_config, tmp_path):
    from thresher.index.backends import ingest
    from thresher.index.server.store import ServerStore

    url = f"{chroma_server}/incremental"
    docs = make_documents()[:8]
    counting = CountingEmbedder(minilm)
    first = ingest(docs, url, small_config, embedder=counting, progress=False)
    assert (first.documents_added, first.chunks_deleted) == (8, 0)
    embedded_once = len(counting.texts)
    assert embedded_once == first.chunks_added

    again = ingest(docs, url, small_config, embedder=counting, progress=False)
    assert (again.documents_unchanged, again.chunks_added) == (8, 0)
    assert len(counting.texts) == embedded_once  # nothing re-embedded, nothing written
    with ServerStore(
        url, config=small_config, embedder=minilm, cache_dir=tmp_path, refresh_s=0
    ) as s:
        version = s.stats().extra["index_version"]
        changed = dataclasses.replace(docs[1], text="Orion agency ships a new habitat.")
        new = make_documents()[20:21]
        report = ingest(
            [docs[0], changed, *docs[3:], *new], url, small_config, embedder=counting,
            progress=False,
        )  # fmt: skip
        assert (report.documents_added, report.documents_updated) == (1, 1)
        assert (report.documents_deleted, report.documents_unchanged) == (1, 6)
        assert s.stats().extra["index_version"] != version  # the reader followed
        assert s.stats().documents == 8
        assert [c.text for c in s.read_document(docs[1].doc_id)] == [changed.text]
        with pytest.raises(UnknownIdError):
            s.read_document(docs[2].doc_id)
        assert top_docs(s.bm25_search("new habitat ships")) == [docs[1].doc_id]
        assert top_docs(s.bm25_search("dry-run flag")) == [new[0].doc_id]
        order = [h.chunk.doc_id for h in s.grep(r"\w", limit=100).hits]
        expected = [d.doc_id for d in [docs[0], changed, *docs[3:], *new]]
        assert list(dict.fromkeys(order)) == expected  # corpus order is the input order


@pytest.mark.server
def test_a_stopped_run_is_completed_by_the_next(chroma_server, minilm, small_config, tmp_path):
    import chromadb
    from chromadb.config import Settings

    from thresher.index.backends import ingest
    from thresher.index.server.store import ServerStore

    name = "resumed"
    url = f"{chroma_server}/{name}"
    docs = make_documents()[:6]
    ingest(docs, url, small_config, embedder=minilm, progress=False)
    host, port = url.split("//")[1].split("/")[0].split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_collection(name, embedding_function=None)
    with ServerStore(
        url, config=small_config, embedder=minilm, cache_dir=tmp_path, refresh_s=0
    ) as s:
        # What a run killed midway leaves: state "writing", a chunk missing, a stray chunk.
        header = dict(collection.metadata)
        collection.modify(metadata={**header, "thresher:state": "writing"})
        collection.delete(ids=["astro-2#0"])
        stray = collection.get(ids=["bake-1#0"], include=["embeddings", "documents", "metadatas"])
        collection.add(
            ids=["gone-1#0"],
            documents=stray["documents"],
            metadatas=[{**stray["metadatas"][0], "doc_id": "gone-1"}],
            embeddings=stray["embeddings"],
        )
        assert not s.refresh()  # a reader never switches to a state being written
        counting = CountingEmbedder(minilm)
        report = ingest(docs, url, small_config, embedder=counting, progress=False)
        assert report.documents_updated == 1 and report.documents_unchanged == 5
        assert len(counting.texts) == 1 and counting.texts[0].startswith("Orion Agency\nThe")
        ids = set(collection.get(include=[])["ids"])
        assert "astro-2#0" in ids and "gone-1#0" not in ids
        meta = client.get_collection(name).metadata
        assert meta["thresher:state"] == "ready"
        assert meta["thresher:version"] != header["thresher:version"]
        assert s.refresh() and s.stats().extra["state"] == "ready"  # switched once it finished
        assert s.read_document("astro-2")[0].chunk_id == "astro-2#0"
    client.close()


@pytest.mark.server
def test_bm25_side_index_is_cached_and_rebuilt_when_stale(server_store, monkeypatch) -> None:
    from thresher.index.server.store import ServerStore

    folders = [p for p in server_store.cache_dir.iterdir() if p.is_dir()]
    assert len(folders) == 1 and (folders[0] / "fingerprint.json").is_file()

    def no_rebuild(self, collection):
        raise AssertionError("the cached BM25 index should have been used")

    monkeypatch.setattr(ServerStore, "_build_bm25", no_rebuild)
    again = ServerStore(
        server_store.url,
        config=server_store.config,
        embedder=server_store.embedder,
        cache_dir=server_store.cache_dir,
    )
    assert again.bm25_search("axolotl", k=1)[0].chunk.doc_id == "zoo-2"
    again.close()


@pytest.mark.server
def test_the_probe_says_not_offered_and_hybrid_is_the_client_side_fusion(server_store) -> None:
    """``chroma run`` refuses ``search``: the probe keeps its words, and hybrid search is
    BM25 (side index) and dense (server) fused here by RRF, as the embedded store does."""
    from thresher.index.fusion import fuse_retrievers

    assert server_store.search_refusal == LOCAL_REFUSAL
    assert (server_store.fusion, server_store.fusion_reason) == ("client", NO_SERVER_SEARCH)
    r = server_store.config.retrieval
    for query in HIT_QUERIES:
        hits = server_store.hybrid_search(query, k=10)
        depth = max(r.per_retriever, 10)
        bm25 = [(h.chunk.chunk_id, h.score) for h in server_store.bm25_search(query, k=depth)]
        dense = [(h.chunk.chunk_id, h.score) for h in server_store.dense_search(query, k=depth)]
        fused = fuse_retrievers(bm25, dense, r.rrf_k, limit=10)
        assert [(h.chunk.chunk_id, h.bm25_rank, h.dense_rank) for h in hits] == [
            (f.key, f.bm25_rank, f.dense_rank) for f in fused
        ]
        assert [h.score for h in hits] == pytest.approx([f.score for f in fused])


@pytest.mark.server
def test_an_ingest_asks_for_a_sparse_key_and_takes_the_refusal(
    chroma_server, minilm, small_config, tmp_path, monkeypatch
) -> None:
    """With Chroma's BM25 computable here, a new collection is first asked for with the
    sparse key; ``chroma run`` refuses a sparse index, so it is made without one."""
    from chromadb.errors import ChromaError

    from thresher.index.backends import ingest
    from thresher.index.server import ingest as server_ingest
    from thresher.index.server.store import ServerStore

    monkeypatch.setattr(server_ingest, "sparse_unavailable", lambda: None)
    refused: list[str] = []
    real = server_ingest._create_chunks

    def create(client, where, header):
        original = client.create_collection

        def spy(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            except ChromaError as exc:
                refused.append(str(exc))
                raise

        client.create_collection = spy
        return real(client, where, header)

    monkeypatch.setattr(server_ingest, "_create_chunks", create)
    url = f"{chroma_server}/no-sparse"
    ingest(make_documents()[:4], url, small_config, embedder=minilm, progress=False)
    assert len(refused) == 1 and "Sparse vector indexing is not enabled in local" in refused[0]
    with ServerStore(url, config=small_config, embedder=minilm, cache_dir=tmp_path) as s:
        stats = s.stats()
        assert stats.extra["sparse_key"] == "" and stats.extra["fusion"] == "client"
        assert s.hybrid_search("Kepler Station crew on Io", k=3)  # fused here


@pytest.mark.server
def test_the_server_side_branch_reads_one_request_of_three_searches(
    chroma_server, minilm, small_config, tmp_path, monkeypatch
) -> None:
    """A server that runs ``search`` and a collection with a sparse key (distributed Chroma,
    Chroma Cloud; ``chroma run`` has neither, so both are faked here): hybrid search is one
    ``search`` request, fused on the server, and every hit keeps both retrievers' evidence."""
    import chromadb
    from chromadb.config import Settings

    from thresher.index.backends import ingest
    from thresher.index.server import layout as sl
    from thresher.index.server import store as server
    from thresher.index.server.store import ServerStore

    name = "searchable"
    url = f"{chroma_server}/{name}"
    ingest(make_documents()[:9], url, small_config, embedder=minilm, progress=False)
    host, port = url.split("//")[1].split("/")[0].split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_collection(name, embedding_function=None)
    collection.modify(metadata={**collection.metadata, "thresher:sparse_key": "bm25_sparse"})
    client.close()
    monkeypatch.setattr(server, "sparse_unavailable", lambda: None)  # no snowballstemmer needed
    requests = []

    def search(self, plan):
        requests.append(plan)
        if not isinstance(plan, list):  # the capability probe
            return {"ids": [["astro-1#0"]], "scores": [[-0.5]]}
        k = 60 + 1  # Chroma's ranks are 0-based
        return {
            "ids": [["astro-1#0", "astro-2#0"], ["astro-2#0", "astro-1#0"], ["astro-1#0"]],
            "scores": [[-(1 / k + 1 / (k + 1)), -1 / k], [0.25, 0.5], [-7.5]],
        }

    monkeypatch.setattr(sl.Guarded, "search", search)
    with ServerStore(
        url, config=small_config, embedder=minilm, cache_dir=tmp_path, refresh_s=0
    ) as s:
        assert s.search_refusal is None and s.fusion == "server"
        hits = s.hybrid_search("Kepler Station crew on Io", k=5, exclude=["zoo-1#0"])
        stats = s.stats()
    assert len(requests) == 2 and len(requests[1]) == 3  # the probe, then one hybrid request
    assert [(h.chunk.chunk_id, h.bm25_rank, h.dense_rank) for h in hits] == [
        ("astro-1#0", 1, 2), ("astro-2#0", None, 1),
    ]  # fmt: skip
    assert [h.score for h in hits] == pytest.approx(
        [rrf_score([1, 2], 60), rrf_score([None, 1], 60)]
    )
    assert (hits[0].bm25_score, hits[0].dense_score) == (7.5, 0.5)  # negated; 1 - distance
    assert stats.extra["fusion"] == "server" and stats.extra["sparse_key"] == "bm25_sparse"
    assert stats.extra["fusion_reason"].startswith("server-side hybrid: Rrf(k=61")


@pytest.mark.server
def test_chroma_cloud_credentials_from_the_environment(server_store, monkeypatch) -> None:
    """With ``CHROMA_API_KEY`` set the client authenticates as ``chromadb.CloudClient``
    does (token header, tenant and database of the key); ``chroma run`` ignores the token."""
    from thresher.index.server import layout as sl

    monkeypatch.setenv("CHROMA_API_KEY", "ck-test")
    monkeypatch.delenv("CHROMA_TENANT", raising=False)
    monkeypatch.delenv("CHROMA_DATABASE", raising=False)
    client = sl.connect(server_store.location)
    try:
        assert client.get_settings().chroma_client_auth_credentials == "ck-test"
        assert client._server._session.headers["x-chroma-token"] == "ck-test"  # sent as is
        assert (client.tenant, client.database) == ("default_tenant", "default_database")
        assert client.get_collection("contract", embedding_function=None).count() > 0
    finally:
        client.close()


@pytest.mark.server
def test_a_server_that_is_down_is_named_with_how_to_start_one(minilm) -> None:
    from thresher.index.backends import ingest
    from thresher.index.server.store import ServerStore

    url = f"http://127.0.0.1:{free_port()}/chunks"
    for attempt in (
        lambda: ServerStore(url, embedder=minilm),
        lambda: open_store(url),
        lambda: ingest(make_documents()[:1], url, embedder=minilm, progress=False),
    ):
        with pytest.raises(BackendUnavailableError) as err:
            attempt()
        message = str(err.value)
        assert url in message and "chroma run --host 127.0.0.1 --port" in message
        assert "\n" not in message


@pytest.mark.server
def test_missing_collection_and_closed_store(
    chroma_server, server_store, minilm, tmp_path, monkeypatch
) -> None:
    from thresher.index.server.store import ServerStore
    from thresher.paths import cache_dir

    with pytest.raises(IndexNotFoundError, match="thresher index PATH --index"):
        ServerStore(f"{chroma_server}/nothing-here", embedder=minilm)
    opened = open_store(server_store.url, server_store.config)
    with contextlib.closing(opened):
        assert opened.stats().backend == "server"
        assert opened.stats().extra["bm25_cache"].startswith(str(cache_dir("server-bm25")))
    opened.close()  # idempotent
    with pytest.raises(BackendUnavailableError, match="closed"):
        opened.bm25_search("axolotl")
