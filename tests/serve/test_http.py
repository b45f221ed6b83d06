"""The HTTP API over a real ``thresher serve`` process: the SSE stream, JSON, traces, schema.

The stream must use Chroma's hosted search agent event names in their order
(``action``/``observation`` pairs, then one ``done``), with the payloads
documented in docs/serving.md; a JSON request must return the documents
``thresher.search`` returns in-process on the same index and policy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import thresher
from serve.helpers import QUESTION, read_sse, running_server
from thresher.serve.app import TRACE_HEADER


@pytest.fixture(scope="module")
def server(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("http")
    extra = ["--name", "harness", "--policies", "single-shot", "--trace-dir", str(workdir / "t")]
    with running_server(serve_index, workdir, extra) as s:
        yield s


def stream(server, body: dict) -> tuple[dict, list[tuple[str, dict, str | None]]]:
    with server.client() as client, client.stream("POST", "/search", json=body) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        return dict(reply.headers), list(read_sse(reply.iter_lines()))


def test_the_stream_has_chroma_event_names_in_order_and_documented_shapes(server):
    headers, events = stream(server, {"query": QUESTION, "collection_name": "harness"})
    names = [e for e, _, _ in events]
    assert set(names) <= {"action", "observation", "done"} and names[-1] == "done"
    assert names.count("done") == 1 and names[0] == "action"
    # every action is followed by the observations of its calls, then the next action
    turns = [d["turn"] for _, d, _ in events[:-1]]
    assert turns == sorted(turns)
    for name, data, ident in events[:-1]:
        assert ident == str(data["seq"])  # the SSE id is the trace event's seq
        assert {"turn", "seq", "kind", "content", "usage"} <= set(data)
        assert set(data["usage"]) == {"used", "budget"} and data["usage"]["budget"] == 32768
        if name == "action" and data["kind"] == "tool_calls":
            assert data["tool_calls"] and {"id", "name", "arguments"} <= set(data["tool_calls"][0])
        if name == "observation" and data["kind"] == "tool_result":
            assert data["status"] in ("ok", "error", "refused")
            assert {"call_id", "tool", "chunks", "pruned", "recalled", "tokens"} <= set(data)
            for chunk in data["chunks"]:
                assert set(chunk) == {"chunk_id", "doc_id", "title", "text"} and chunk["text"]
    first_call = events[0][1]["tool_calls"][0]
    answered = [d for n, d, _ in events if n == "observation" and d["call_id"] == first_call["id"]]
    assert answered and answered[0]["tool"] == first_call["name"]
    done = events[-1][1]
    assert done["trace_id"] == headers[TRACE_HEADER.lower()]
    assert done["exit_reason"] == "answered" and not done["partial"]
    assert done["documents"] and done["documents"][0]["rank"] == 1
    doc = done["documents"][0]
    assert {"id", "doc_id", "title", "text", "justification", "chunk_ids", "rank"} <= set(doc)
    assert done["answer"].startswith(f'<Document id="{doc["id"]}"><Justification>')
    assert done["answer"].count("</Document>") == len(done["documents"])


def test_json_request_returns_what_thresher_search_returns_in_process(server, serve_index):
    with server.client() as client:
        reply = client.post(
            "/search", json={"query": QUESTION}, headers={"Accept": "application/json"}
        )
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    served = reply.json()
    local = thresher.search(QUESTION, index=serve_index, policy="local")
    assert [d["doc_id"] for d in served["documents"]] == local.doc_ids
    assert [d["justification"] for d in served["documents"]] == [
        d.justification for d in local.documents
    ]
    assert served["exit_reason"] == local.exit_reason.value
    assert served["trace_id"] == reply.headers[TRACE_HEADER]


def test_a_request_may_choose_an_allowed_policy_and_tighten_the_config(server):
    body = {"query": QUESTION, "model": "single-shot", "config": {"episode": {"max_turns": 2}}}
    with server.client() as client:
        reply = client.post("/search", json=body, headers={"Accept": "application/json"})
        assert reply.status_code == 200
        trace = client.get(f"/traces/{reply.json()['trace_id']}").text.splitlines()
    start = json.loads(trace[0])
    assert start["policy"] == "single-shot" and start["config"]["episode"]["max_turns"] == 2


def test_k_or_n_results_sets_how_many_documents_come_back(server):
    with server.client() as client:
        for body in ({"query": QUESTION, "k": 1}, {"query": QUESTION, "n_results": 2}):
            reply = client.post("/search", json=body, headers={"Accept": "application/json"})
            assert reply.status_code == 200
            assert len(reply.json()["documents"]) == body.get("k", body.get("n_results"))
        over = client.post("/search", json={"query": QUESTION, "k": 1000})
        zero = client.post("/search", json={"query": QUESTION, "k": 0})
    assert over.status_code == 400 and "max_final_documents" in over.text
    assert zero.status_code == 422


def test_where_and_path_keep_the_episode_inside_the_filter(server):
    with server.client() as client:
        body = {"query": QUESTION, "path": "t*", "k": 3}
        reply = client.post("/search", json=body, headers={"Accept": "application/json"})
        bad = client.post("/search", json={"query": QUESTION, "where": {"a": {"$like": 1}}})
        via_config = client.post(
            "/search",
            json={"query": QUESTION, "config": {"retrieval.path": "glassworks"}},
            headers={"Accept": "application/json"},
        )
    assert reply.status_code == 200
    docs = [d["doc_id"] for d in reply.json()["documents"]]
    assert docs and all(d.startswith("t") for d in docs)
    assert bad.status_code == 400 and "one operator" in bad.text
    assert [d["doc_id"] for d in via_config.json()["documents"]] == ["glassworks"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"query": QUESTION, "collection_name": "other"}, 404, "served: harness"),
        ({"query": QUESTION, "policy": "tests.evil:Policy"}, 400, "not served here"),
        ({"query": QUESTION, "config": {"llm.base_url": "http://10.0.0.1/v1"}}, 400, "may not set"),
        ({"query": QUESTION, "config": {"episode.max_turns": 1000}}, 400, "over this server"),
        ({"query": "   "}, 400, "empty"),
        ({"query": " ?! "}, 400, "no searchable words"),
        ({"collection_name": "harness"}, 422, "query"),
    ],
)
def test_bad_requests_are_refused_before_any_episode_runs(server, body, status, words):
    with server.client() as client:
        reply = client.post("/search", json=body)
        health = client.get("/healthz").json()
    assert reply.status_code == status and words in reply.text
    assert health["running"] == 0


def test_traces_are_served_as_jsonl_and_kept_on_disk(server):
    with server.client() as client:
        done = client.post(
            "/search", json={"query": QUESTION}, headers={"Accept": "application/json"}
        )
        trace_id = done.json()["trace_id"]
        reply = client.get(f"/traces/{trace_id}")
        page = client.get(f"/traces/{trace_id}/view")
        missing = client.get("/traces/" + "0" * 32)
        traversal = client.get("/traces/..%2f..%2fetc%2fpasswd")
    assert reply.headers["content-type"].startswith("application/x-ndjson")
    events = [json.loads(line) for line in reply.text.splitlines()]
    assert events[0]["type"] == "episode_start" and events[-1]["type"] == "episode_end"
    assert events[-1]["exit_reason"] == done.json()["exit_reason"]
    assert missing.status_code == 404 and traversal.status_code == 404
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'sha256-" in page.headers["content-security-policy"]
    assert trace_id in page.text and 'id="trace-data"' in page.text
    written = Path(server.log).parent / "t" / f"{trace_id}.jsonl"
    assert written.read_text(encoding="utf-8") == reply.text


def test_health_and_openapi_schema(server):
    with server.client() as client:
        health = client.get("/healthz").json()
        schema = client.get("/openapi.json").json()
    assert health["status"] == "ok" and health["collections"] == ["harness"]
    assert health["policies"] == ["local", "single-shot"]
    assert {"/search", "/traces/{trace_id}", "/traces/{trace_id}/view", "/healthz"} <= set(
        schema["paths"]
    )
    search = schema["paths"]["/search"]["post"]
    assert {"200", "413", "429", "401"} <= set(search["responses"])
    assert "text/event-stream" in search["responses"]["200"]["content"]
