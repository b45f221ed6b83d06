"""Text that is not valid Unicode (a lone surrogate) never hangs or crashes a server.

JSON lets a client send ``"\\ud800"``: a lone surrogate that UTF-8 cannot encode.
A request holding one is refused (400) before it takes a slot; whatever gets
past (a model's tool arguments) is replaced; the trace writer cannot die on
it, and a slot is freed whatever ends an episode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serve.helpers import QUESTION, running_server, wait_idle

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
SURROGATE_BODY = b'{"query": "a \\ud800 glassworks"}'


@pytest.fixture(scope="module")
def traced(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("traced")
    extra = ["--trace-dir", str(workdir / "traces"), "--max-concurrent", "4"]
    with running_server(serve_index, workdir, extra) as s:
        s.trace_dir = workdir / "traces"
        yield s


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream"])
def test_lone_surrogates_are_refused_and_never_leak_a_slot(traced, accept):
    with traced.client() as client:
        for _ in range(5):
            reply = client.post(
                "/search",
                content=SURROGATE_BODY,
                headers={"Content-Type": "application/json", "Accept": accept},
            )
            assert reply.status_code == 400, reply.text
            assert "Unicode" in reply.json()["message"]
        nested = {"query": QUESTION, "config": {"retrieval.mode": "\ud800"}}
        raw = json.dumps(nested).encode()  # ASCII escapes: valid JSON, invalid text
        assert client.post("/search", content=raw, headers=JSON_HEADERS).status_code == 400
        assert wait_idle(client)["running"] == 0
        ok = client.post(
            "/search", json={"query": QUESTION}, headers={"Accept": "application/json"}
        )
        assert ok.status_code == 200
        assert ok.json()["exit_reason"] == "answered"
        assert wait_idle(client)["running"] == 0


@pytest.mark.parametrize("trace_dir", [True, False], ids=["trace-dir", "memory"])
def test_a_model_sending_lone_surrogates_never_leaks_a_slot(serve_index, tmp_path, trace_dir):
    from thresher.testing.replay_server import ReplayServer, reply, tool_call

    bad = reply(tool_call("search_corpus", {"query": "\ud800 glassworks"}))
    with ReplayServer([bad] * 12, tmp_path / "llm") as llm:
        extra = [
            "--policy", "llm", "--policies", "local",
            "--set", f"llm.base_url={llm.base_url}", "--set", "llm.model=replay",
        ]  # fmt: skip
        extra += ["--trace-dir", str(tmp_path / "traces")] if trace_dir else []
        with running_server(serve_index, tmp_path, extra) as server, server.client() as client:
            for accept in ("application/json", "text/event-stream") * 2:
                body = {"query": QUESTION, "config": {"episode.max_turns": 2}}
                got = client.post("/search", json=body, headers={"Accept": accept})
                assert got.status_code == 200
                if accept == "text/event-stream":
                    assert "event: done" in got.text
            assert wait_idle(client)["running"] == 0
            ok = client.post(
                "/search", json={"query": QUESTION, "policy": "local"}, headers=JSON_HEADERS
            )
            assert ok.status_code == 200 and ok.json()["exit_reason"] == "answered"
            assert wait_idle(client)["running"] == 0
    traces = sorted((tmp_path / "traces").glob("*.jsonl"))
    assert len(traces) == (5 if trace_dir else 0)
    for path in traces:
        path.read_text(encoding="utf-8")  # valid UTF-8 throughout
