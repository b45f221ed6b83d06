"""``POST /retrieve`` over a real ``thresher serve`` process: Search-R1's retriever shape.

Search-R1, verl's search tool and SkyRL's search environment send
``{"queries", "topk", "return_scores"}`` and read ``result[i][j]["document"]["contents"]``
(``title\\ntext``) and ``["score"]``; without scores each hit is the document itself.
Each query must return what one hybrid search on the same index returns, and the
server's limits must refuse an over-large batch or ``topk`` before searching.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.small_corpus import corpus_config
from serve.helpers import QUESTION, running_server

pytestmark = [pytest.mark.server, pytest.mark.slow]

QUERIES = ["Halvard Glassworks founded", "province of the town", "lighthouse keeper 1950"]


@pytest.fixture(scope="module")
def server(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("retrieve")
    extra = ["--name", "harness", "--max-retrieve-queries", "4", "--max-retrieve-topk", "5"]
    with running_server(serve_index, workdir, extra) as s:
        yield s


def post(server, body: object):
    with server.client() as client:
        return client.post("/retrieve", json=body)


def test_scored_results_have_search_r1_shape_one_list_per_query_in_order(server, serve_index):
    from thresher.index.backends import open_store

    reply = post(server, {"queries": QUERIES, "topk": 3, "return_scores": True})
    assert reply.status_code == 200, reply.text
    result = reply.json()["result"]
    assert set(reply.json()) == {"result"} and len(result) == len(QUERIES)
    store = open_store(serve_index, corpus_config())
    try:
        for query, hits in zip(QUERIES, result, strict=True):
            assert len(hits) == 3
            for hit in hits:
                assert set(hit) == {"document", "score"} and isinstance(hit["score"], float)
                assert set(hit["document"]) == {"id", "contents"}
            scores = [h["score"] for h in hits]
            assert scores == sorted(scores, reverse=True)
            # the same documents, in the same order, as one hybrid search in-process
            expected = store.hybrid_search(query, k=3)
            assert [h["document"]["id"] for h in hits] == [e.chunk.chunk_id for e in expected]
            for hit, exp in zip(hits, expected, strict=True):
                title, text = hit["document"]["contents"].split("\n", 1)
                assert (title, text) == (exp.chunk.title, exp.chunk.text)
    finally:
        store.close()


def test_without_scores_each_hit_is_the_document_itself_and_topk_is_respected(server):
    scored = post(server, {"queries": [QUESTION], "topk": 2, "return_scores": True}).json()
    reply = post(server, {"queries": [QUESTION], "topk": 2})  # return_scores defaults to false
    assert reply.status_code == 200, reply.text
    (hits,) = reply.json()["result"]
    assert hits == [h["document"] for h in scored["result"][0]]
    (one,) = post(server, {"queries": [QUESTION], "topk": 1}).json()["result"]
    assert one == hits[:1]
    (default,) = post(server, {"queries": [QUESTION]}).json()["result"]
    assert len(default) == 3  # Search-R1's default topk


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"queries": ["a", "b", "c", "d", "e"], "topk": 1}, 413, "5 queries"),
        ({"queries": ["glass"], "topk": 6}, 413, "topk 6"),
        ({"queries": ["glass", "   "], "topk": 1}, 400, "queries[1] is empty"),
        ({"queries": ["glass", "?!"], "topk": 1}, 400, "queries[1]"),
        ({"queries": ["glass"], "collection_name": "nope"}, 404, "not served here"),
    ],
)
def test_refusals_name_the_limit_or_the_query(server, body, status, words):
    reply = post(server, body)
    assert reply.status_code == status, reply.text
    assert words in reply.json()["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"queries": []},
        {"queries": "glass"},
        {"queries": ["glass"], "topk": 0},
        {"queries": [1, 2]},
        {"topk": 3},
    ],
)
def test_malformed_bodies_are_422_with_the_field_named(server, body):
    reply = post(server, body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"] and "loc" in reply.json()["detail"][0]


def test_the_endpoint_is_in_the_schema(server):
    with server.client() as client:
        schema = client.get("/openapi.json").json()
    assert "post" in schema["paths"]["/retrieve"]
