"""Connection floods: how fast both HTTP servers answer while idle and slow-header sockets are open.

A generated fictional world (``--world-size``, indexed into ``--cache`` once) is
served by ``thresher serve`` and by ``thresher mcp --transport http``, each with
its default connection settings (``--header-timeout``, ``--idle-timeout``,
``--max-connections``, ``--max-connections-per-client``) unless given after
``--``. Against each server, from this machine (one client address, 127.0.0.1):

* ``quiet``: a request with nothing else open;
* ``flood``: ``--idle`` sockets that send nothing and ``--slow`` sockets that send a
  request line and then one header line every ``--every`` seconds are opened, and
  the same requests are made while they are held.

The requests: ``GET /healthz`` and ``POST /search`` (JSON) on the HTTP API; an MCP
session's ``initialize`` and a ``search`` tool call on the MCP server. Printed per
server and mode: each request's status and seconds (worst of ``--rounds``), then
how long the server took to close every flood socket (counted from the moment
they were all open). Loopback only; bounded (sockets, rounds, a 120 s wait for the
closes). Exit code 1 when a request failed or a flood socket was still open.

Usage::

    .venv/bin/python bench/bench_connections.py [--idle 200] [--slow 200] [--every 5]
        [--rounds 3] [-- --header-timeout 5 ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import httpx

from thresher.testing.flood import Flood

#: the longest wait for the server to close every flood socket
CLOSE_WAIT_S = 120.0


def world_index(cache: Path, size: str) -> tuple[Path, str]:
    """``(index, question)``: a generated world indexed under ``cache`` (built once)."""
    from thresher.config import Config
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world
    from thresher.tasks.readers import load_tasks

    root = cache / f"world-{size}"
    index = root / "index"
    if not (index / "CURRENT").is_file():
        generate_world(0, size, root / "corpus")
        ingest(iter_documents([root / "corpus"]), index, Config(), progress=False)
    question = load_tasks(root / "corpus" / ".world" / "chains.jsonl")[0].question
    return index, question


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(
    kind: str, index: Path, extra: list[str], log: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``thresher serve`` or ``thresher mcp --transport http``; wait until it answers."""
    port = free_port()
    cmd = [sys.executable, "-m", "thresher.cli.main", kind, "--index", str(index)]
    cmd += ["--port", str(port), *(["--transport", "http"] if kind == "mcp" else []), *extra]
    env = {k: v for k, v in os.environ.items() if k != "THRESHER_API_KEY"}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"thresher {kind} exited: {log.read_text()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return proc, port
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise SystemExit(f"thresher {kind} did not start in 300 s: {log.read_text()}")
        time.sleep(0.25)


def http_requests(port: int, question: str) -> dict[str, Callable[[], str]]:
    """The HTTP API's requests: each returns its status ('200', '503', or an error name)."""
    url = f"http://127.0.0.1:{port}"

    def healthz() -> str:
        return str(httpx.get(url + "/healthz", timeout=60).status_code)

    def search() -> str:
        body = {"query": question}
        reply = httpx.post(
            url + "/search", json=body, headers={"Accept": "application/json"}, timeout=120
        )
        return str(reply.status_code)

    return {"GET /healthz": healthz, "POST /search": search}


def mcp_requests(port: int, question: str) -> dict[str, Callable[[], str]]:
    """The MCP server's requests: a session's initialize, and initialize + a search call."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url = f"http://127.0.0.1:{port}/mcp"

    async def session(call: bool) -> str:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            if call:
                result = await client.call_tool("search", {"question": question})
                return "tool error" if result.is_error else "ok"
            return "ok"

    return {
        "mcp initialize": lambda: anyio.run(session, False),
        "mcp initialize + search": lambda: anyio.run(session, True),
    }


def measure(requests: dict[str, Callable[[], str]], rounds: int) -> list[tuple[str, str, float]]:
    """``(request, statuses, worst seconds)`` over ``rounds`` of each request."""
    rows = []
    for name, request in requests.items():
        statuses, worst = set(), 0.0
        for _ in range(rounds):
            started = time.perf_counter()
            try:
                statuses.add(request())
            except Exception as exc:  # noqa: BLE001 - a figure: whatever failed is printed
                statuses.add(type(exc).__name__)
            worst = max(worst, time.perf_counter() - started)
        rows.append((name, ",".join(sorted(statuses)), worst))
    return rows


def run_floods(
    index: Path,
    question: str,
    servers: Sequence[str] = ("serve", "mcp"),
    idle: int = 200,
    slow: int = 200,
    every_s: float = 5.0,
    rounds: int = 3,
    server_args: Sequence[str] = (),
) -> list[str]:
    """Measure each server quiet and flooded, printing the table rows; the problems
    found (a request not answered during the flood, a flood socket left open)."""
    problems = []
    print("| server | mode | request | status | worst s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for kind in servers:
            proc, port = start(kind, index, list(server_args), Path(work) / f"{kind}.log")
            try:
                requests = (http_requests if kind == "serve" else mcp_requests)(port, question)
                measure(requests, 1)  # warm
                for name, status, worst in measure(requests, rounds):
                    print(f"| {kind} | quiet | {name} | {status} | {worst:.2f} |", flush=True)
                with Flood("127.0.0.1", port, idle, slow, every_s) as flood:
                    opened = time.perf_counter()
                    for name, status, worst in measure(requests, rounds):
                        if status not in ("200", "ok"):
                            problems.append(f"{kind}: {name} answered {status} during the flood")
                        print(f"| {kind} | flood | {name} | {status} | {worst:.2f} |", flush=True)
                    left = flood.still_open(CLOSE_WAIT_S - (time.perf_counter() - opened))
                    closed_s = time.perf_counter() - opened
                if left:
                    problems.append(
                        f"{kind}: {left} flood sockets still open after {CLOSE_WAIT_S:g} s"
                    )
                print(
                    f"{kind}: the server closed {idle + slow - left} of {idle + slow} flood "
                    f"sockets within {closed_s:.1f} s of opening",
                    flush=True,
                )
            finally:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idle", type=int, default=200, help="sockets that send nothing (200)")
    ap.add_argument("--slow", type=int, default=200, help="slow-header sockets (200)")
    ap.add_argument("--every", type=float, default=5.0, help="s between header lines (5)")
    ap.add_argument("--rounds", type=int, default=3, help="times each request is made (3)")
    ap.add_argument("--servers", nargs="+", choices=("serve", "mcp"), default=["serve", "mcp"])
    ap.add_argument("--world-size", default="small", help="generated world size (small)")
    ap.add_argument("--cache", default="/tmp/thresher-conn-bench", help="index cache folder")
    ap.add_argument("server_args", nargs="*", help="after --: flags for both servers")
    args = ap.parse_args(argv)
    index, question = world_index(Path(args.cache), args.world_size)
    print(
        f"flood: {args.idle} idle + {args.slow} slow-header sockets (a header line every "
        f"{args.every:g} s) from 127.0.0.1; server flags: "
        f"{' '.join(args.server_args) or 'defaults'}"
    )
    problems = run_floods(
        index,
        question,
        args.servers,
        args.idle,
        args.slow,
        args.every,
        args.rounds,
        args.server_args,
    )
    for line in problems:
        print(f"PROBLEM {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
