"""Connection floods against real ``thresher serve`` and ``thresher mcp --transport http``
processes: idle and slow-header sockets are closed after their timeouts, one client's
stalled connections cannot take the capacity a request needs, and the per-client cap
(the guard in :mod:`thresher.serve.connections`, its bookkeeping tested alone too)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from index.chroma_server import free_port
from serve.helpers import QUESTION, running_server
from thresher.serve.connections import ConnectionGuard
from thresher.testing.flood import Flood

JSON = {"Accept": "application/json"}
#: short timeouts, so that the flood is closed quickly
QUICK = ["--header-timeout", "1", "--idle-timeout", "1"]
#: how long a test waits for the server to close a connection (its timeouts are 1 s)
CLOSED_WITHIN_S = 30.0


class Conn:
    """A stand-in connection: in a request or not."""

    def __init__(self, name: str, busy: bool = False) -> None:
        self.name, self.busy = name, busy

    def in_request(self) -> bool:
        return self.busy

    def __repr__(self) -> str:
        return self.name


def test_a_client_past_its_cap_loses_its_oldest_connection_not_in_a_request():
    guard: ConnectionGuard[Conn] = ConnectionGuard(max_connections=100, max_per_client=3)
    a1, a2, a3 = Conn("a1", busy=True), Conn("a2"), Conn("a3")
    for conn in (a1, a2, a3):
        assert guard.admit(conn, "10.0.0.1") == []
    a4 = Conn("a4")
    assert guard.admit(a4, "10.0.0.1") == [a2]  # a1 is busy: the oldest idle one goes
    assert guard.admit(Conn("b1"), "10.0.0.2") == []  # another client is not touched
    assert guard.open_count("10.0.0.1") == 3 and guard.open_count() == 4


def test_a_client_whose_connections_are_all_in_requests_is_refused_the_next():
    guard: ConnectionGuard[Conn] = ConnectionGuard(max_connections=100, max_per_client=2)
    busy = [Conn("a1", busy=True), Conn("a2", busy=True)]
    for conn in busy:
        guard.admit(conn, "10.0.0.1")
    late = Conn("a3")
    assert guard.admit(late, "10.0.0.1") == [late]
    assert guard.open_count("10.0.0.1") == 2
    guard.release(late)  # the refused connection's own close: counted once
    guard.release(busy[0])
    assert guard.open_count() == 1 and guard.admit(Conn("a4"), "10.0.0.1") == []


def test_at_the_server_cap_the_oldest_idle_connection_of_any_client_makes_room():
    guard: ConnectionGuard[Conn] = ConnectionGuard(max_connections=3, max_per_client=3)
    b1, a1, a2 = Conn("b1"), Conn("a1", busy=True), Conn("a2")
    guard.admit(b1, "10.0.0.2")
    guard.admit(a1, "10.0.0.1")
    assert guard.admit(a2, "10.0.0.1") == [b1]
    a2.busy = True
    assert guard.admit(Conn("c1"), "10.0.0.3") == []  # all others busy: uvicorn answers 503
    assert guard.open_count() == 3


async def _ok(scope, receive, send) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


def _get(port: int) -> bytes:
    """``GET /`` on a fresh connection: the reply's head and body (the server then closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN_S) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):  # the idle keep-alive is closed after the reply
            reply += chunk
    return reply


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["httptools", "h11"])
def test_the_guard_holds_on_either_of_uvicorns_protocols(impl: str) -> None:
    import threading

    import uvicorn
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    from thresher.serve.connections import uvicorn_options
    from thresher.serve.settings import ServeSettings

    pytest.importorskip(impl)
    settings = ServeSettings(
        {"a": "idx"},
        max_connections=8,
        max_connections_per_client=4,
        header_timeout_s=0.5,
        idle_timeout_s=0.5,
    )
    port = free_port()
    options = uvicorn_options(settings, import_from_string(HTTP_PROTOCOLS[impl]))
    server = uvicorn.Server(uvicorn.Config(_ok, port=port, lifespan="off", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.05)
        with Flood("127.0.0.1", port, idle=2, slow=2, every_s=0.2) as few:
            assert few.still_open(CLOSED_WITHIN_S) == 0
        with Flood("127.0.0.1", port, idle=20, slow=20, every_s=0.2) as flood:
            assert _get(port).startswith(b"HTTP/1.1 200") and _get(port).endswith(b"ok")
            assert flood.still_open(CLOSED_WITHIN_S) == 0
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def quick(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """``thresher serve`` with 1 s header and idle timeouts, the default caps."""
    with running_server(serve_index, tmp_path_factory.mktemp("quick"), QUICK) as s:
        yield s


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@pytest.mark.server
@pytest.mark.slow
def test_a_flood_of_idle_and_slow_header_connections_leaves_requests_answered(quick):
    with Flood("127.0.0.1", _port(quick.url), idle=200, slow=200, every_s=0.5) as flood:
        with quick.client() as client:
            assert client.get("/healthz").status_code == 200
            found = client.post("/search", json={"query": QUESTION}, headers=JSON)
            assert found.status_code == 200 and found.json()["documents"]
        assert flood.still_open(CLOSED_WITHIN_S) == 0


@pytest.mark.server
@pytest.mark.slow
def test_a_flood_from_many_addresses_under_their_caps_leaves_requests_answered(quick):
    port = _port(quick.url)
    with contextlib.ExitStack() as stack:  # 10 clients x 30 connections: over 128, each under 32
        floods = [
            stack.enter_context(Flood("127.0.0.1", port, 15, 15, 0.5, source=f"127.0.1.{i}"))
            for i in range(1, 11)
        ]
        with quick.client() as client:
            assert client.get("/healthz").status_code == 200
        assert sum(flood.still_open(CLOSED_WITHIN_S) for flood in floods) == 0


@pytest.mark.server
@pytest.mark.slow
def test_idle_and_slow_header_connections_are_closed_by_the_server(quick):
    with Flood("127.0.0.1", _port(quick.url), idle=3, slow=3, every_s=0.3) as flood:
        assert flood.still_open(CLOSED_WITHIN_S) == 0
    port = _port(quick.url)
    with socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN_S) as s:
        s.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += s.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200")
        while s.recv(65536):  # the rest of the body, then the idle keep-alive is closed
            pass


@pytest.fixture(scope="module")
def capped(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """``thresher serve`` with 4 connections a client and long timeouts."""
    extra = ["--max-connections-per-client", "4", "--body-timeout", "60"]
    extra += ["--header-timeout", "60", "--idle-timeout", "60"]
    with running_server(serve_index, tmp_path_factory.mktemp("capped"), extra) as s:
        yield s


def _closed(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` within :data:`CLOSED_WITHIN_S` (what it sends
    first is read and dropped)."""
    sock.settimeout(CLOSED_WITHIN_S)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        return False
    return True


def _partial_body(port: int, source: str) -> socket.socket:
    """A ``POST /search`` whose head the server has read (it asked for the body: ``100
    Continue``) and whose body stops after a few bytes: a connection in a request."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(
        f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n".encode()
    )
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 100"), reply
    sock.sendall(b'{"query": ')
    return sock


@pytest.mark.server
@pytest.mark.slow
def test_past_its_cap_a_client_loses_its_oldest_idle_connection(capped):
    port = _port(capped.url)
    with (
        Flood("127.0.0.1", port, idle=4, slow=0, source="127.0.0.2") as first,
        Flood("127.0.0.1", port, idle=1, slow=0, source="127.0.0.2") as second,
    ):
        assert _closed(first.idle[0])
        for sock in [*first.idle[1:], *second.idle]:
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):  # still open, nothing sent
                sock.recv(1)


@pytest.mark.server
@pytest.mark.slow
def test_a_client_with_every_connection_in_a_request_is_refused_another(capped):
    port = _port(capped.url)
    held = [_partial_body(port, "127.0.0.3") for _ in range(4)]
    try:
        with Flood("127.0.0.1", port, idle=1, slow=0, source="127.0.0.3") as late:
            assert _closed(late.idle[0])
        with capped.client() as client:  # another client (127.0.0.1) is served
            assert client.get("/healthz").status_code == 200
    finally:
        for sock in held:
            sock.close()


@pytest.fixture
def mcp_http(serve_index: Path, tmp_path: Path) -> Iterator[int]:
    """``thresher mcp --transport http`` with 1 s header and idle timeouts; its port."""
    port = free_port()
    log = (tmp_path / "mcp-http.log").open("wb")
    args = ["mcp", "--index", str(serve_index), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "thresher.cli.main", *args, *QUICK],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "mcp http did not start"
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.mark.server
@pytest.mark.slow
def test_mcp_over_http_answers_through_a_flood_and_closes_it(mcp_http):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def search() -> object:
        url = f"http://127.0.0.1:{mcp_http}/mcp"
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("search", {"question": QUESTION})

    with Flood("127.0.0.1", mcp_http, idle=200, slow=200, every_s=0.5) as flood:
        result = anyio.run(search)
        assert not getattr(result, "is_error", True)
        assert flood.still_open(CLOSED_WITHIN_S) == 0
