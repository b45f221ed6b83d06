"""Issue 23's serving holes, each against a real ``thresher serve`` process or the unit
that holds the limit: DNS rebinding (Host/Origin), slow bodies and too many
connections, UTF-8 API keys, over-long numbers, loosening requests, trace retention,
MCP raw tools' caps and gate."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import anyio
import pytest

from serve.helpers import QUESTION, running_server, wait_idle
from thresher.config import Config
from thresher.errors import InputError
from thresher.harness.trace import Refusal
from thresher.serve.service import TraceStore
from thresher.serve.settings import ServeSettings, request_config

JSON = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def plain(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("plain")
    extra = ["--allowed-host", "thresher.internal", "--body-timeout", "1", "--max-connections", "6"]
    with running_server(serve_index, workdir, extra) as s:
        yield s


def test_foreign_host_and_origin_are_refused(plain):
    with plain.client() as client:
        assert client.get("/healthz", headers={"Host": "evil.example"}).status_code == 421
        rebound = client.post(
            "/search", json={"query": QUESTION}, headers={**JSON, "Host": "evil.example:80"}
        )
        assert rebound.status_code == 421 and "rebinding" in rebound.json()["message"]
        origin = client.get("/healthz", headers={"Origin": "http://evil.example"})
        assert origin.status_code == 403
        assert client.get("/healthz", headers={"Host": "thresher.internal"}).status_code == 200
        port = plain.url.rsplit(":", 1)[1]
        assert client.get("/healthz", headers={"Host": f"localhost:{port}"}).status_code == 200
        assert client.get("/healthz", headers={"Origin": plain.url}).status_code == 200


def _partial_body(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    head = (
        f"POST /search HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        'Content-Length: 1000\r\n\r\n{"query": '
    )
    sock.sendall(head.encode())
    return sock


def test_a_trickling_body_is_cut_with_408(plain):
    sock = _partial_body(plain.url)
    with sock:
        reply = sock.recv(4096).decode()  # blocks until the server answers (1 s body timeout)
    assert reply.startswith("HTTP/1.1 408"), reply


def test_connections_past_the_cap_are_refused_503(plain):
    socks = [_partial_body(plain.url) for _ in range(8)]
    try:
        import httpx

        refused = 0
        for _ in range(3):
            try:
                status = httpx.get(plain.url + "/healthz", timeout=10).status_code
            except httpx.HTTPError:
                status = 0
            refused += status == 503
        assert refused >= 1
    finally:
        for s in socks:
            s.close()
    with plain.client() as client:
        deadline = time.monotonic() + 30
        while client.get("/healthz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get("/healthz").status_code == 200


def test_a_utf8_api_key_matches(serve_index, tmp_path):
    key = "clé-ключ-鍵"
    with running_server(serve_index, tmp_path, env={"THRESHER_API_KEY": key}) as s:
        import httpx

        url = s.url + "/traces/" + "0" * 32
        good = httpx.get(url, headers={"X-API-Key": key.encode()}, timeout=10)
        assert good.status_code == 404  # past the key: no such trace
        bearer = {"Authorization": b"Bearer " + key.encode()}
        assert httpx.get(url, headers=bearer, timeout=10).status_code == 404
        assert httpx.get(url, headers={"X-API-Key": b"cle"}, timeout=10).status_code == 401
        latin = {"X-API-Key": key.encode("utf-8").decode("latin-1").encode("utf-8")}
        assert httpx.get(url, headers=latin, timeout=10).status_code == 401


def test_over_long_numbers_are_400_not_500(plain):
    with plain.client() as client:
        body = b'{"query": "q", "config": {"retrieval.rrf_k": ' + b"9" * 4000 + b"}}"
        got = client.post(
            "/search", content=body, headers={**JSON, "Content-Type": "application/json"}
        )
        assert got.status_code == 400 and "at most" in got.json()["message"]
        assert wait_idle(client)["running"] == 0


def test_a_request_may_not_loosen_the_harness_limits():
    base = Config()
    for key, value in (
        ("budget.hard_fraction", 1.0),
        ("budget.soft_fraction", 0.8),
        ("budget.reply_reserve", 0),
        ("episode.max_refused_in_a_row", 10**12),
        ("episode.max_hard_refused_turns", 50),
    ):
        with pytest.raises(InputError, match="only tighten"):
            request_config(base, {key: value})
    tight = request_config(base, {"budget.hard_fraction": 0.7, "budget.reply_reserve": 2048})
    assert tight.budget.hard_fraction == 0.7 and tight.budget.reply_reserve == 2048


def test_the_trace_folder_keeps_at_most_its_limits(tmp_path):
    store = TraceStore(4, tmp_path, max_files=3)
    ids = [f"{i:032x}" for i in range(6)]
    for trace_id in ids:
        store.finish(trace_id, (Refusal(code="x", message="y" * 100),))
    assert sorted(p.stem for p in tmp_path.glob("*.jsonl")) == ids[3:]
    (tmp_path / "notes.jsonl").write_text("mine")
    by_bytes = TraceStore(4, tmp_path, max_files=100, max_bytes=300)
    by_bytes.finish(ids[0], (Refusal(code="x", message="z" * 100),))
    left = {p.stem for p in tmp_path.glob("*.jsonl")}
    assert "notes" in left and ids[0] in left and len(left) <= 3


def test_mcp_raw_tools_are_capped_and_gated(serve_index):
    from mcp.server.mcpserver.exceptions import ToolError

    from thresher.serve.mcp_server import build_mcp_server
    from thresher.serve.service import SearchService

    settings = ServeSettings({"idx": str(serve_index)}, max_concurrent=1, max_queued=0)
    service = SearchService(settings)
    server = build_mcp_server(service)

    async def call(name: str, args: dict) -> object:
        return await server.call_tool(name, args)

    async def scenario() -> list[str]:
        errors = []
        for name, args in (
            ("search_corpus", {"query": "x" * 4_000_001}),
            ("grep_corpus", {"pattern": "a" * 10_000}),
            ("read_document", {"doc_id": "d" * 100_000}),
            ("search_corpus", {"query": "\ud800"}),
            ("search", {"question": "a \ud800 question"}),
        ):
            with pytest.raises(ToolError) as info:
                await call(name, args)
            errors.append(str(info.value))
        await service.gate.acquire()  # every slot taken: a raw call is refused, not run
        try:
            with pytest.raises(ToolError) as info:
                await call("search_corpus", {"query": "glassworks"})
            errors.append(str(info.value))
        finally:
            service.gate.release()
        await call("search_corpus", {"query": "glassworks"})
        assert service.gate.running == 0
        return errors

    errors = anyio.run(scenario)
    service.close()
    assert "over this server's limit" in errors[0] and "over this server's limit" in errors[1]
    assert "over this server's limit" in errors[2] and "Unicode" in errors[3]
    assert "Unicode" in errors[4] and "running" in errors[5]


def test_an_episode_whose_tools_all_failed_is_not_answered(plain):
    with plain.client() as client:
        body = {"query": QUESTION, "config": {"episode.tool_timeout_s": 0}}
        got = client.post("/search", json=body, headers=JSON)
        assert got.status_code == 200
        result = got.json()
        assert result["exit_reason"] == "tools_failed" and result["partial"] is True
        assert result["documents"] == []
        assert wait_idle(client)["running"] == 0


def test_an_episode_that_cannot_get_a_worker_thread_frees_its_slot(serve_index, monkeypatch):
    """Thread exhaustion cannot be produced for real here: a worker thread that cannot start
    (each step of an episode runs on one)."""
    import thresher.serve.service as service_module
    from thresher.errors import ThresherError
    from thresher.serve.service import SearchService

    async def no_thread(*args, **kwargs):
        raise RuntimeError("can't start new thread")

    service = SearchService(ServeSettings({"idx": str(serve_index)}))
    monkeypatch.setattr(service_module, "run_sync", no_thread)

    async def scenario() -> None:
        with pytest.raises(ThresherError, match="could not start"):
            await service.search(QUESTION)
        assert service.gate.running == 0 and service.traces.running() == 0

    anyio.run(scenario)
    service.close()
