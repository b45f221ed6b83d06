"""Serving benchmark: N concurrent episodes over HTTP (SSE on loopback) beside the same N in-process.

A ``thresher serve`` process is started on a free loopback port over a dev
corpus (the pooled HotpotQA dev index, built into ``--cache`` when absent,
when ``../shared/data/dev`` exists; otherwise a generated fictional world and
its planted-chain questions). ``--n`` clients then post their question at
once, each reading its episode's server-sent events to the ``done`` event;
the server runs ``--slots`` episodes at a time and queues the rest. The same
questions then run in this process, ``--slots`` at a time on one shared
Store, the way the server runs them.

Printed per mode: episodes, errors (a non-200 reply, a stream without
``done``, an episode that failed), latency p50/p95 from the moment all were
sent (queueing included), the episode's own wall time p50 (the trace's), the
first event's latency (HTTP), and episodes/s; then the HTTP/in-process ratios
and whether both modes returned the same documents for every question.
Prints figures; asserts nothing (exit code 1 only when a run had errors).

Usage::

    .venv/bin/python bench/bench_serve.py [--n 50] [--slots 4] [--cache DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from thresher.config import Config

REPO = Path(__file__).resolve().parents[1]
DEV = (REPO / ".." / "shared" / "data" / "dev").resolve()
HOTPOT = ["hotpotqa_rpt_dev.jsonl", "hotpotqa_rpt_train.jsonl"]


@dataclass
class Run:
    """What one mode measured, per episode."""

    mode: str
    latency_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    first_event_s: list[float] = field(default_factory=list)
    docs: dict[int, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def corpus(cache: Path, world_size: str) -> tuple[Path, list[str], str]:
    """``(index, questions, label)``: the pooled HotpotQA dev index, else a generated world."""
    from thresher.tasks.readers import load_tasks

    if all((DEV / f).is_file() for f in HOTPOT):
        from thresher.tasks.corpus import pooled_index

        files = [DEV / f for f in HOTPOT]
        index = pooled_index(files, cache / "hotpotqa", Config(), progress=False)
        questions = [t.question for t in load_tasks(DEV / HOTPOT[0])]
        return index, questions, f"HotpotQA dev pool ({index})"
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    root = cache / f"world-{world_size}"
    index = root / "index"
    if not (index / "CURRENT").is_file():
        generate_world(0, world_size, root / "corpus")
        ingest(iter_documents([root / "corpus"]), index, Config(), progress=False)
    questions = [t.question for t in load_tasks(root / "corpus" / ".world" / "chains.jsonl")]
    return index, questions, f"generated world ({world_size}, no dev data at {DEV})"


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``, 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# -- in-process -------------------------------------------------------------------------------
def run_in_process(index: Path, questions: list[str], slots: int, policy: str) -> Run:
    """The questions through ``run_episode`` on one Store, ``slots`` at a time."""
    from thresher.harness.episode import run_episode
    from thresher.index.backends import open_store
    from thresher.policies import build_policy

    config = Config()
    run = Run("in-process")
    with open_store(str(index), config) as store:
        run_episode(questions[0], store, build_policy(policy, config), config)  # warm caches
        start = time.perf_counter()

        def one(i: int) -> None:
            result = run_episode(questions[i], store, build_policy(policy, config), config)
            run.latency_s.append(time.perf_counter() - start)
            run.wall_s.append(result.wall_s)
            run.docs[i] = result.doc_ids
            if result.exit_reason.value in ("policy_error", "error", "endpoint_unavailable"):
                run.errors.append(f"{i}: {result.exit_reason.value} {result.message}")

        with ThreadPoolExecutor(slots) as pool:
            list(pool.map(one, range(len(questions))))
        run.seconds = time.perf_counter() - start
    return run


# -- over HTTP --------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(index: Path, slots: int, n: int, policy: str, log: Path) -> tuple[object, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "thresher.cli.main", "serve", "--index", str(index)]
    cmd += ["--port", str(port), "--policy", policy, "--max-concurrent", str(slots)]
    cmd += ["--max-queued", str(n), "--queue-timeout", "900", "--max-traces", str(n + 8)]
    cmd += ["--max-connections-per-client", str(n + 8)]  # all n come from 127.0.0.1
    env = {k: v for k, v in os.environ.items() if k != "THRESHER_API_KEY"}
    out = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"thresher serve exited: {log.read_text()}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise SystemExit(f"thresher serve did not start in 300 s: {log.read_text()}")
        time.sleep(0.25)


async def one_stream(
    client: httpx.AsyncClient, question: str, start: float, run: Run, i: int
) -> None:
    """Post one question and read its SSE stream to the end."""
    event, first, terminal, data = "", None, None, ""
    try:
        async with client.stream("POST", "/search", json={"query": question}) as reply:
            if reply.status_code != 200:
                run.errors.append(f"{i}: HTTP {reply.status_code} {await reply.aread()!r}")
                return
            async for line in reply.aiter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                    if first is None:
                        first = time.perf_counter() - start
                elif line.startswith("data:") and event in ("done", "error"):
                    terminal, data = event, line[5:].strip()
    except httpx.HTTPError as exc:
        run.errors.append(f"{i}: {type(exc).__name__} {exc}")
        return
    if terminal != "done":
        run.errors.append(f"{i}: stream ended with {terminal!r}: {data[:200]}")
        return
    done = json.loads(data)
    run.latency_s.append(time.perf_counter() - start)
    run.first_event_s.append(first or 0.0)
    run.wall_s.append(done["wall_s"])
    run.docs[i] = [d["doc_id"] for d in done["documents"]]


async def run_http_async(url: str, questions: list[str]) -> Run:
    run = Run("HTTP (SSE)")
    limits = httpx.Limits(max_connections=len(questions) + 2)
    timeout = httpx.Timeout(900, connect=30)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
        warm = Run("warm")
        await one_stream(client, questions[0], time.perf_counter(), warm, 0)  # warm the server
        if warm.errors:
            raise SystemExit(f"the warm-up request failed: {warm.errors}")
        start = time.perf_counter()
        await asyncio.gather(
            *(one_stream(client, q, start, run, i) for i, q in enumerate(questions))
        )
        run.seconds = time.perf_counter() - start
    return run


def run_http(index: Path, questions: list[str], slots: int, policy: str, log: Path) -> Run:
    proc, url = start_server(index, slots, len(questions), policy, log)
    try:
        return asyncio.run(run_http_async(url, questions))
    finally:
        proc.terminate()  # type: ignore[attr-defined]
        proc.wait(30)  # type: ignore[attr-defined]


# -- report -----------------------------------------------------------------------------------
def line(run: Run, n: int) -> str:
    ok = len(run.latency_s)
    rate = ok / run.seconds if run.seconds else 0.0
    first = f"{pct(run.first_event_s, 0.5) * 1000:.0f}" if run.first_event_s else "-"
    return (
        f"| {run.mode} | {ok}/{n} | {len(run.errors)} | {pct(run.latency_s, 0.5) * 1000:.0f} | "
        f"{pct(run.latency_s, 0.95) * 1000:.0f} | {pct(run.wall_s, 0.5) * 1000:.0f} | {first} | "
        f"{rate:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=50, help="concurrent episodes (50)")
    ap.add_argument("--slots", type=int, default=4, help="episodes the server runs at once (4)")
    ap.add_argument("--policy", default="local", help="policy (local)")
    ap.add_argument("--cache", default="/tmp/thresher-dev-index", help="index cache folder")
    ap.add_argument("--world-size", default="small", help="world size without dev data (small)")
    args = ap.parse_args(argv)

    index, pool, label = corpus(Path(args.cache), args.world_size)
    questions = [pool[i % len(pool)] for i in range(args.n)]
    print(f"corpus: {label}")
    print(
        f"{args.n} episodes, policy {args.policy}, {args.slots} at a time; cores {os.cpu_count()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        http = run_http(index, questions, args.slots, args.policy, Path(tmp) / "serve.log")
    local = run_in_process(index, questions, args.slots, args.policy)

    print("\n| mode | episodes | errors | p50 ms | p95 ms | episode wall p50 ms | first event p50 ms"
          " | episodes/s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    print(line(http, args.n))
    print(line(local, args.n))
    for run in (http, local):
        for error in run.errors[:5]:
            print(f"  {run.mode} error: {error}")
    if http.seconds and local.seconds and http.latency_s and local.latency_s:
        rate = (len(http.latency_s) / http.seconds) / (len(local.latency_s) / local.seconds)
        p50 = pct(http.latency_s, 0.5) / max(pct(local.latency_s, 0.5), 1e-9)
        print(f"\nHTTP / in-process: episodes/s x{rate:.2f}, p50 latency x{p50:.2f}")
    differ = [i for i, docs in local.docs.items() if http.docs.get(i) != docs]
    print(f"same documents over HTTP and in-process: {args.n - len(differ)}/{args.n}")
    for i in differ[:3]:
        print(f"  differs: {questions[i]!r}: HTTP {http.docs.get(i)} / in-process {local.docs[i]}")
    print(f"mean episode wall (server): {statistics.fmean(http.wall_s or [0]) * 1000:.0f} ms")
    return 1 if http.errors or local.errors else 0


if __name__ == "__main__":
    sys.exit(main())
