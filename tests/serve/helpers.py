"""Serving tests' helpers: the served corpus, real server processes on loopback, an SSE reader.

The corpus is the harness tests' small corpus plus one document whose text is
HTML with a ``<script>`` (the viewer must show it as text). Servers are
``thresher serve`` / ``thresher mcp`` processes started the way a user starts
them, on a free loopback port; clients talk to them over real HTTP (httpx).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from harness.small_corpus import corpus
from index.chroma_server import free_port
from thresher.corpus.document import Document

HOSTILE_TEXT = (
    "Lighthouse keepers' log. <script>window.__pwned = 1</script> "
    '<img src=x onerror="window.__pwned = 2"> The Cape Orrin keeper wrote in 1950.'
)
#: the two-hop question of the harness corpus
QUESTION = "In which province is the town where the Halvard Glassworks was founded?"


def serve_corpus() -> list[Document]:
    """The harness corpus plus the hostile-HTML document."""
    return [*corpus(), Document("keeper-log", "Keeper's log <b>1950</b>", HOSTILE_TEXT, "test")]


def thresher_cmd(*args: str) -> list[str]:
    """The ``thresher`` command line, run with this interpreter."""
    return [sys.executable, "-m", "thresher.cli.main", *args]


class Server:
    """A ``thresher serve`` process on a free loopback port."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log

    def client(self, key: str | None = None, timeout: float = 60.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)


@contextlib.contextmanager
def running_server(
    index: Path, workdir: Path, extra: Sequence[str] = (), env: dict[str, str] | None = None
) -> Iterator[Server]:
    """Start ``thresher serve --index INDEX`` on a free port; wait for ``/healthz``; stop it."""
    port = free_port()
    log = workdir / f"serve-{port}.log"
    args = thresher_cmd("serve", "--index", str(index), "--port", str(port), *extra)
    full_env = {**os.environ, **(env or {})}
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"thresher serve exited: {log.read_text()}")
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"thresher serve did not start: {log.read_text()}")
            time.sleep(0.2)
        yield Server(proc, url, log)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def read_sse(lines: Iterator[str]) -> Iterator[tuple[str, dict, str | None]]:
    """``(event, data, id)`` of each server-sent event (comments and pings skipped).

    The subset of the SSE format a server sends: ``event:``, ``data:`` (joined by
    newlines), ``id:``, a blank line ending each event.
    """
    event, data, ident = "message", [], None
    for line in lines:
        if line == "":
            if data:
                yield event, json.loads("\n".join(data)), ident
            event, data, ident = "message", [], None
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                ident = value
    if data:
        yield event, json.loads("\n".join(data)), ident


def wait_for_trace_end(client: httpx.Client, trace_id: str, timeout: float = 30.0) -> list[dict]:
    """Poll ``GET /traces/{id}`` until the trace ends with ``episode_end``; its events."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = client.get(f"/traces/{trace_id}")
        if reply.status_code == 200:
            events = [json.loads(line) for line in reply.text.splitlines() if line.strip()]
            if events and events[-1]["type"] == "episode_end":
                return events
        time.sleep(0.1)
    raise AssertionError(f"trace {trace_id} did not end within {timeout} s")


def wait_idle(client: httpx.Client, timeout: float = 30.0) -> dict:
    """Poll ``GET /healthz`` until no episode runs (a slot is freed once its thread ends)."""
    deadline = time.monotonic() + timeout
    while True:
        health = client.get("/healthz").json()
        if health["running"] == 0 or time.monotonic() > deadline:
            return health
        time.sleep(0.1)
