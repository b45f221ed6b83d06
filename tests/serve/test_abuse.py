"""Limits that hold under abuse, each against a real server process.

Oversized body or question → 413; missing or wrong key → 401; more episodes
than the server runs and queues → 429 with Retry-After; a client that
disconnects → its episode ends ``cancelled`` (the trace shows it) and its slot
is freed. The slow episodes come from the LLM policy talking to the replay
server (a real local process) whose replies are held back.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx
import pytest

from serve.helpers import QUESTION, running_server, wait_for_trace_end, wait_idle
from thresher.serve.app import TRACE_HEADER
from thresher.testing.replay_server import ReplayServer, delayed, reply, tool_call

KEY = "s3cret-key"


@pytest.fixture(scope="module")
def guarded(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """A server with an API key and small size limits."""
    workdir = tmp_path_factory.mktemp("guarded")
    extra = ["--max-body-bytes", "2048", "--max-question-chars", "300"]
    with running_server(serve_index, workdir, extra, env={"THRESHER_API_KEY": KEY}) as s:
        yield s


@pytest.fixture(scope="module")
def slow(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """One episode at a time, no queue; every LLM reply held back for 60 s."""
    workdir = tmp_path_factory.mktemp("slow")
    held = delayed(reply(tool_call("search_corpus", {"query": "glassworks"})), 60)
    with ReplayServer([held] * 8, workdir / "llm") as llm:
        extra = [
            "--policy", "llm", "--max-concurrent", "1", "--max-queued", "0",
            "--set", f"llm.base_url={llm.base_url}", "--set", "llm.model=replay",
            "--trace-dir", str(workdir / "traces"),
        ]  # fmt: skip
        with running_server(serve_index, workdir, extra) as s:
            s.trace_dir = workdir / "traces"
            yield s, llm


def test_an_oversized_body_is_refused_with_413(guarded):
    headers = {"Authorization": f"Bearer {KEY}"}
    big = {"query": QUESTION, "padding": "x" * 4000}
    declared = httpx.post(guarded.url + "/search", json=big, headers=headers)
    assert declared.status_code == 413 and "limit of 2048" in declared.json()["message"]

    def chunks():  # no Content-Length: the server counts what it reads
        yield b'{"query": "' + b"y" * 1500
        yield b"z" * 1500 + b'"}'

    chunked = httpx.post(
        guarded.url + "/search",
        content=chunks(),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert chunked.status_code == 413


def test_an_oversized_question_is_refused_with_413(guarded):
    with guarded.client(KEY) as client:
        reply = client.post("/search", json={"query": "why? " * 100})
    assert reply.status_code == 413 and "limit of 300" in reply.json()["message"]


def test_a_missing_or_wrong_key_is_refused_with_401_and_the_right_one_is_served(guarded):
    body = {"query": QUESTION}
    accept = {"Accept": "application/json"}
    with guarded.client() as anonymous, guarded.client("wrong") as wrong:
        assert anonymous.post("/search", json=body).status_code == 401
        refused = wrong.post("/search", json=body)
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
        assert wrong.get("/traces/" + "0" * 32).status_code == 401
        assert anonymous.get("/healthz").status_code == 200  # liveness stays open
    with guarded.client(KEY) as client:
        assert client.post("/search", json=body, headers=accept).json()["exit_reason"] == "answered"
    chroma_style = httpx.post(
        guarded.url + "/search", json=body, headers={**accept, "X-Chroma-Token": KEY}, timeout=60
    )
    assert chroma_style.status_code == 200


def test_over_the_concurrency_limit_is_429_with_retry_after_and_a_disconnect_cancels(slow):
    server, llm = slow
    with server.client(timeout=30) as client:
        with client.stream("POST", "/search", json={"query": QUESTION}) as first:
            assert first.status_code == 200
            trace_id = first.headers[TRACE_HEADER]
            busy = client.post("/search", json={"query": QUESTION})
            assert busy.status_code == 429
            assert int(busy.headers["Retry-After"]) >= 1
            assert client.get("/healthz").json()["running"] == 1
            # close only once the model holds the request: the cancel then lands while
            # the policy is thinking (on a loaded machine the episode may not be there yet)
            deadline = time.monotonic() + 30
            while not llm.chat_requests() and time.monotonic() < deadline:
                time.sleep(0.05)
        # leaving the block closed the stream: the episode must end, cancelled
        events = wait_for_trace_end(client, trace_id)
        assert events[-1]["exit_reason"] == "cancelled" and events[-1]["partial"]
        refusals = [e for e in events if e["type"] == "refusal"]
        assert refusals and refusals[-1]["code"] == "cancelled"
        assert wait_idle(client)["running"] == 0  # the slot is freed
    assert len(llm.chat_requests()) == 1  # the second request never reached the model


def test_a_json_client_that_gives_up_cancels_its_episode(slow):
    server, llm = slow
    before = len(llm.chat_requests())
    url = httpx.URL(server.url)
    body = json.dumps({"query": QUESTION}).encode()
    head = (
        f"POST /search HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    # a raw connection, closed once the model holds the request: the hang-up then lands
    # while the policy is thinking, however long a loaded machine took to get there
    with socket.create_connection((url.host, url.port), timeout=30) as conn:
        conn.sendall(head.encode() + body)
        deadline = time.monotonic() + 30
        while len(llm.chat_requests()) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(llm.chat_requests()) == before + 1
    with server.client(timeout=30) as client:
        assert wait_idle(client)["running"] == 0
    written = sorted(server.trace_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    last = json.loads(written[-1].read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "episode_end" and last["exit_reason"] == "cancelled"
    assert len(llm.chat_requests()) == before + 1
