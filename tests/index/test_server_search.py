"""Server-side hybrid search, without a server: the probe, the request built, the answer read.

No distributed Chroma runs here (``chroma run`` refuses ``search``; the store
contract tests hold that against a real one), so the server-side branch is checked
on what it sends: the ``Search`` objects, their ``Rrf`` k, ranks and limits, and how
an answer in Chroma's shape becomes hits.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from thresher.index.fusion import rrf_score
from thresher.index.server.search import (
    ABSENT_RANK,
    SPARSE_KEY,
    TIE_SLACK,
    hybrid_rank,
    hybrid_searches,
    probe_search,
    read_hybrid,
    sparse_schema,
)
from thresher.index.server.store import fusion_path

VECTOR = [0.6, 0.8, 0.0]


def test_the_rrf_expression_keeps_the_client_side_contract() -> None:
    from chromadb import Knn, Rrf

    rank = hybrid_rank(VECTOR, "lighthouse keepers", "thresher_bm25", rrf_k=60, depth=50)
    assert isinstance(rank, Rrf) and rank.k == 61  # 0-based ranks: 1/(61 + r0) = 1/(60 + r1)
    assert rank.weights is None and not rank.normalize  # equal weights, as here
    dense, sparse = rank.ranks
    assert isinstance(dense, Knn) and isinstance(sparse, Knn)
    assert (dense.query, dense.key.name) == (VECTOR, "#embedding")
    assert (sparse.query, sparse.key) == ("lighthouse keepers", "thresher_bm25")
    for knn in (dense, sparse):
        assert (knn.limit, knn.return_rank, knn.default) == (50, True, ABSENT_RANK)


def test_one_request_is_the_fused_search_then_each_retriever_alone() -> None:
    import numpy as np

    fused, dense, sparse = hybrid_searches(
        np.asarray(VECTOR, dtype=np.float32), "q", "sk", rrf_k=7, depth=50, k=10,
        exclude=["b#1", "a#0", "b#1"],
    )  # fmt: skip
    assert fused._rank.k == 8 and [r.limit for r in fused._rank.ranks] == [50, 50]
    assert fused.to_dict()["limit"] == {"offset": 0, "limit": 10 + TIE_SLACK}
    assert dense.to_dict()["rank"] == {"$knn": {"query": pytest.approx(VECTOR), "key": "#embedding",
                                                "limit": 50}}  # fmt: skip
    assert sparse.to_dict()["rank"] == {"$knn": {"query": "q", "key": "sk", "limit": 50}}
    for search in (fused, dense, sparse):
        body = search.to_dict()
        assert body["filter"] == {"#id": {"$nin": ["a#0", "b#1"]}}  # excluded before ranking
        assert body["select"] == {"keys": ["#score"]}
    assert dense.to_dict()["limit"]["limit"] == sparse.to_dict()["limit"]["limit"] == 50

    # on the wire: -(1/(8 + dense rank0) + 1/(8 + sparse rank0)), ranks defaulting to 1e9
    def term(knn: dict) -> dict:
        knn = {**knn, "limit": 50, "default": ABSENT_RANK, "return_rank": True}
        return {"$div": {"left": {"$val": 1.0}, "right": {"$sum": [{"$val": 8}, {"$knn": knn}]}}}

    dense_knn = {"query": pytest.approx(VECTOR), "key": "#embedding"}
    assert fused.to_dict()["rank"] == {
        "$mul": [{"$val": -1}, {"$sum": [term(dense_knn), term({"query": "q", "key": "sk"})]}]
    }
    no_filter = hybrid_searches(VECTOR, "q", "sk", rrf_k=60, depth=5, k=3)
    assert all(s.to_dict()["filter"] is None for s in no_filter)


def test_an_answer_becomes_fused_hits_with_both_retrievers_evidence() -> None:
    k = 61
    answer = {
        "ids": [["c", "b", "a", "d"], ["a", "b", "c"], ["b", "c"]],
        "scores": [[-(1 / (k + 2) + 1 / (k + 1)), -(1 / (k + 1) + 1 / k), -1 / k, -1 / k],
                   [0.1, 0.2, 0.3], [-9.0, -4.0]],
    }  # fmt: skip
    hits = read_hybrid(answer, k=3)
    # best first, the tie between a and d ordered by id, then cut at k
    assert [h.key for h in hits] == ["b", "c", "a"]
    b, c, a = hits
    assert (b.bm25_rank, b.dense_rank, b.bm25_score, b.dense_score) == (1, 2, 9.0, 0.8)
    assert (c.bm25_rank, c.dense_rank) == (2, 3)
    assert (a.bm25_rank, a.dense_rank, a.bm25_score) == (None, 1, None)
    for h in hits:  # the server's fused score is the client-side RRF of the same ranks
        assert h.score == pytest.approx(rrf_score([h.bm25_rank, h.dense_rank], 60))
    assert read_hybrid({"ids": [[]], "scores": [[]]}, k=5) == []


def test_the_probe_keeps_the_refusal_word_for_word() -> None:
    from chromadb.errors import ChromaError

    sent = []

    class Refusing:
        def search(self, plan):
            sent.append(plan)
            raise ChromaError("Error executing plan: Not implemented: nope\nmore detail")

    assert probe_search(Refusing(), 3, 60) == "Error executing plan: Not implemented: nope"
    probe = sent[0]
    assert probe._rank.k == 61 and probe._rank.ranks[0].query == [1.0, 0.0, 0.0]
    assert probe.to_dict()["limit"]["limit"] == 1
    assert probe_search(SimpleNamespace(search=lambda plan: {"ids": [[]]}), 3, 60) is None
    assert (
        probe_search(SimpleNamespace(), 3, 60) == "'types.SimpleNamespace' object has no "
        "attribute 'search'"
    )  # an old client without search()

    class Down:
        def search(self, plan):
            raise ConnectionError("refused")

    with pytest.raises(ConnectionError):  # a transport failure is no refusal
        probe_search(Down(), 3, 60)


def test_the_path_and_its_reason() -> None:
    path, why = fusion_path("Search operation is not implemented", "", 60)
    assert path == "client"
    assert why == (
        "server-side hybrid not offered by this server (Search operation is not implemented); "
        "fused client-side"
    )
    path, why = fusion_path(None, "", 60)
    assert path == "client" and why == (
        "server-side hybrid offered by the server, but this collection has no sparse key; "
        "fused client-side"
    )
    path, why = fusion_path(None, "thresher_bm25", 60, "it needs snowballstemmer")
    assert path == "client" and "but it needs snowballstemmer; fused client-side" in why
    path, why = fusion_path(None, "thresher_bm25", 60)
    assert path == "server" and why.startswith("server-side hybrid: Rrf(k=61")
    assert "'thresher_bm25'" in why


def test_the_sparse_schema_asks_for_chroma_bm25_on_the_chunk_text() -> None:
    schema = sparse_schema()
    sparse = schema.keys[SPARSE_KEY].sparse_vector.sparse_vector_index
    assert sparse.enabled and sparse.config.source_key == "#document" and sparse.config.bm25
    assert sparse.config.embedding_function.name() == "chroma_bm25"
    assert schema.keys["#embedding"].float_list.vector_index.config.space == "cosine"


def test_a_new_collection_is_asked_with_the_sparse_key_then_without(monkeypatch) -> None:
    from chromadb.errors import InvalidArgumentError

    from thresher.index.server import ingest as server_ingest
    from thresher.index.server import layout as sl

    calls = []

    class Client:
        def __init__(self, refuse: bool) -> None:
            self.refuse = refuse

        def create_collection(self, name, **kwargs):
            calls.append(kwargs)
            if self.refuse and "schema" in kwargs:
                raise InvalidArgumentError("Sparse vector indexing is not enabled in local")
            return name

    where = sl.parse_location("http://127.0.0.1:8000/chunks")
    monkeypatch.setattr(server_ingest, "sparse_unavailable", lambda: None)
    header = sl.ServerHeader(1, "minilm-int8", 384, {})
    assert server_ingest._create_chunks(Client(refuse=False), where, header) == "chunks"
    assert header.sparse_key == SPARSE_KEY
    assert calls[0]["metadata"]["thresher:sparse_key"] == SPARSE_KEY
    assert "hnsw:space" not in calls[0]["metadata"]  # the schema carries the space
    calls.clear()
    header = sl.ServerHeader(1, "minilm-int8", 384, {})
    server_ingest._create_chunks(Client(refuse=True), where, header)
    assert header.sparse_key == "" and len(calls) == 2
    assert "schema" not in calls[1] and calls[1]["metadata"]["hnsw:space"] == "cosine"
    assert "thresher:sparse_key" not in calls[1]["metadata"]
    # without Chroma's BM25 here (no snowballstemmer), no sparse key is asked for at all
    calls.clear()
    monkeypatch.setattr(server_ingest, "sparse_unavailable", lambda: "no snowballstemmer")
    server_ingest._create_chunks(Client(refuse=False), where, sl.ServerHeader(1, "m", 3, {}))
    assert len(calls) == 1 and "schema" not in calls[0]
