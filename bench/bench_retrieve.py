"""``POST /retrieve`` latency: batches of Search-R1-shaped requests to ``thresher serve`` on loopback.

The demo index (``thresher demo``'s fictional world: seed 0, size small, indexed
into ``--dir``, reused when present) is served by a ``thresher serve`` process on
a free loopback port. The world's planted-chain questions (the first ``--queries``,
repeated when there are fewer) are posted as one ``{"queries", "topk",
"return_scores": true}`` request, ``--rounds`` times one after another, after one
warm-up request: once with the same batch every time (the server's query caches
answer) and once with every query made new each round (a round number appended,
so each query is embedded and scored afresh). The same batch then runs in this process (one ``hybrid_search``
per query on the same index), for the HTTP overhead.

Prints per-request latency p50/p95 (HTTP), the per-query mean, and the
in-process time of the same batch. Asserts nothing.

Usage::

    .venv/bin/python bench/bench_retrieve.py [--queries 8] [--topk 3] [--rounds 30] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_demo(root: Path) -> tuple[Path, list[str]]:
    """The demo world's index under ``root`` (built when absent) and its chain questions."""
    from thresher.config import Config
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world.generate import generate_world

    world, index = root / "world", root / "index"
    manifest = generate_world(0, "small", world)
    ingest(iter_documents([world]), index, Config(), progress=False)
    return index, [chain.question for chain in manifest.chains]


def serve(index: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "thresher.cli.main", "serve", "--index", str(index)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*args, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=os.environ
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"thresher serve exited: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"thresher serve did not start: {log.read_text()}")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=8, help="queries per request (8)")
    parser.add_argument("--topk", type=int, default=3, help="documents per query (3)")
    parser.add_argument("--rounds", type=int, default=30, help="timed requests (30)")
    parser.add_argument("--dir", help="demo folder (default: a temporary one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.dir) if args.dir else Path(tmp)
        index, questions = build_demo(root)
        queries = [questions[i % len(questions)] for i in range(args.queries)]
        body = {"queries": queries, "topk": args.topk, "return_scores": True}
        fresh = [{**body, "queries": [f"{q} {r}" for q in queries]} for r in range(args.rounds)]
        port = free_port()
        proc = serve(index, port, Path(tmp) / "serve.log")
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                client.post("/retrieve", json=body).raise_for_status()  # warm-up
                http_s: list[float] = []
                fresh_s: list[float] = []
                for timings, bodies in ((http_s, [body] * args.rounds), (fresh_s, fresh)):
                    for one in bodies:
                        start = time.perf_counter()
                        reply = client.post("/retrieve", json=one)
                        timings.append(time.perf_counter() - start)
                        reply.raise_for_status()
                        assert len(reply.json()["result"]) == len(queries)
        finally:
            proc.terminate()
            proc.wait(15)

        from thresher.config import Config
        from thresher.index.backends import open_store

        store = open_store(index, Config())
        try:
            local_s: list[float] = []
            for r in range(args.rounds):
                start = time.perf_counter()
                for query in queries:
                    store.hybrid_search(f"{query} {r + args.rounds}", k=args.topk)
                local_s.append(time.perf_counter() - start)
        finally:
            store.close()

    n = args.queries
    print(f"POST /retrieve, {n} queries x topk {args.topk}, {args.rounds} requests each:")
    for label, timings in (("same batch", http_s), ("new queries", fresh_s)):
        print(
            f"  {label}: p50 {pct(timings, 0.5) * 1000:.1f} ms, "
            f"p95 {pct(timings, 0.95) * 1000:.1f} ms per request, "
            f"{statistics.mean(timings) / n * 1000:.1f} ms per query"
        )
    print(
        f"  in-process hybrid_search, new queries: p50 {pct(local_s, 0.5) * 1000:.1f} ms, "
        f"p95 {pct(local_s, 0.95) * 1000:.1f} ms per batch"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
