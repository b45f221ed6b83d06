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
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from thresher.errors import BackendUnavailableError, IndexNotFoundError, UnknownIdError
from thresher.index.open import open_store
from thresher.index.store import Store

from .conftest import make_documents
from .helpers import CountingEmbedder

BACKENDS = ["embedded", pytest.param("server", marks=pytest.mark.server)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _heartbeat(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).is_success
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` on a free loopback port; yields its base URL."""
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip(f"no chroma executable next to {sys.executable}")
    port = _free_port()
    folder = tmp_path_factory.mktemp("chroma-server")
    log = (folder / "server.log").open("wb")
    cmd = [str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(folder)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _heartbeat(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not start: {(folder / 'server.log').read_text()}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.fixture(scope="module")
def server_store(chroma_server, documents, minilm, small_config, tmp_path_factory):
    """The shared corpus ingested into the server (collection ``contract``), opened."""
    from thresher.index.ingest import ingest
    from thresher.index.server import ServerStore

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
    assert (stats.embedder, stats.dimension, stats.format_version) == ("minilm-int8", 384, 1)
    assert stats.extra["chunking"] == {"max_tokens": 24, "tokenizer": "o200k_base"}
    if stats.backend == "server":
        assert stats.extra["fusion"] == "client"  # chroma run has no server-side search
        assert "not implemented" in stats.extra["fusion_reason"]
        assert stats.location.endswith("/contract")


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
            assert h.score == pytest.approx(expected)


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
    assert [h.chunk.chunk_id for h in any_store.grep(pattern, limit=len(chunks))] == expected
    skip = set(expected[:1])
    assert [h.chunk.chunk_id for h in any_store.grep(pattern, 2, skip)] == expected[1:3]


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


@pytest.mark.server
@pytest.mark.parametrize("query", QUERIES)
def test_both_backends_give_the_same_results(store, server_store, query) -> None:
    def ids(hits):
        return [h.chunk.chunk_id for h in hits]

    local, remote = store.bm25_search(query, k=20), server_store.bm25_search(query, k=20)
    assert ids(local) == ids(remote)
    assert [h.score for h in local] == pytest.approx([h.score for h in remote], rel=1e-6)
    local, remote = store.dense_search(query, k=10), server_store.dense_search(query, k=10)
    assert [h.score for h in local] == pytest.approx([h.score for h in remote], abs=1e-4)
    assert set(ids(local)[:5]) == set(ids(remote)[:5])
    local, remote = store.hybrid_search(query, k=10), server_store.hybrid_search(query, k=10)
    assert ids(local)[:3] == ids(remote)[:3]
    assert ids(store.grep(r"\w+ \d{4}", 50)) == ids(server_store.grep(r"\w+ \d{4}", 50))


# -- server only ------------------------------------------------------------------------------


@pytest.mark.server
def test_ingest_into_a_server_is_incremental(chroma_server, minilm, small_config, tmp_path):
    from thresher.index.ingest import ingest
    from thresher.index.server import ServerStore

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
        order = [h.chunk.doc_id for h in s.grep(r"\w", limit=100)]
        expected = [d.doc_id for d in [docs[0], changed, *docs[3:], *new]]
        assert list(dict.fromkeys(order)) == expected  # corpus order is the input order


@pytest.mark.server
def test_a_stopped_run_is_completed_by_the_next(chroma_server, minilm, small_config, tmp_path):
    import chromadb
    from chromadb.config import Settings

    from thresher.index.ingest import ingest
    from thresher.index.server import ServerStore

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
    from thresher.index.server import ServerStore

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
def test_server_side_fusion_keeps_the_rrf_contract(server_store) -> None:
    """The server path (distributed Chroma) with the collection's ``search`` stubbed:
    ``chroma run`` cannot run it, so only the request and the handling of the
    answer are checked here."""
    view = server_store._view()
    calls = []

    class Searching:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def search(self, plan):
            calls.append(plan)
            ids = ["zoo-2#0", "bake-1#0", "astro-1#0", "zoo-1#0"]
            return {"ids": [ids], "scores": [[-0.03, -0.02, -0.03, -0.01]]}

    state = server_store._state
    fake = dataclasses.replace(view, collection=Searching(view.collection))
    server_store._state = dataclasses.replace(state, view=fake)
    server_store.fusion = "server"
    try:
        hits = server_store.hybrid_search("anything", k=3, exclude={"geo-1#0"})
    finally:
        server_store._state, server_store.fusion = state, "client"
    assert [h.chunk.chunk_id for h in hits] == ["astro-1#0", "zoo-2#0", "bake-1#0"]
    assert [h.score for h in hits] == [0.03, 0.03, 0.02]
    plan = calls[0].to_dict()
    assert "geo-1#0" in str(plan["filter"]) and plan["limit"]["limit"] >= 3
    assert "61" in str(plan["rank"])  # 0-based ranks: 1/(61 + r0) == 1/(60 + r1)


@pytest.mark.server
def test_a_server_that_is_down_is_named_with_how_to_start_one(minilm) -> None:
    from thresher.index.ingest import ingest
    from thresher.index.server import ServerStore

    url = f"http://127.0.0.1:{_free_port()}/chunks"
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
    from thresher.index.server import ServerStore

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the default BM25 cache goes there

    with pytest.raises(IndexNotFoundError, match="thresher index PATH --index"):
        ServerStore(f"{chroma_server}/nothing-here", embedder=minilm)
    opened = open_store(server_store.url, server_store.config)
    with contextlib.closing(opened):
        assert opened.stats().backend == "server"
        assert opened.stats().extra["bm25_cache"].startswith(str(tmp_path))
    opened.close()  # idempotent
    with pytest.raises(BackendUnavailableError, match="closed"):
        opened.bm25_search("axolotl")
