"""Harness figures: concurrent tool calls, and the harness's own overhead per turn.

1. A turn with several ``search_corpus`` calls costs about the slowest call,
   not their sum: measured on the real embedded store (CPU-bound: 2 cores
   limit the overlap) and on the same store behind a simulated network
   latency (a remote Chroma server), where the overlap is nearly perfect.
2. The harness's overhead per turn, excluding retrieval and the policy:
   episodes are replayed against a memoizing wrapper of the real store (the
   second run's store calls are dictionary lookups), so a turn's time is
   rendering, exact token counting, validation, transitions and threads.

Usage::

    .venv/bin/python bench/bench_harness.py [--index DIR] [--docs 400] [--latency-ms 50]

Without ``--index`` a fictional corpus of ``--docs`` documents is generated
and indexed in a temporary folder first. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.harness.actions import Proposal, ToolCall, answer
from thresher.harness.episode import run_episode
from thresher.harness.trace import ProposalEvent, QueryState, ToolResult
from thresher.policies.scripted import ScriptedPolicy

WORDS = [
    "river",
    "glass",
    "salt",
    "tower",
    "harbour",
    "mill",
    "orchard",
    "bridge",
    "market",
    "lantern",
    "copper",
    "quarry",
    "wool",
    "ferry",
    "chapel",
    "archive",
    "engine",
    "canal",
    "festival",
    "lighthouse",
    "foundry",
    "garden",
]
NAMES = [
    "Aldren",
    "Brisk",
    "Corvel",
    "Dunmore",
    "Elsy",
    "Fenwick",
    "Garrow",
    "Hollis",
    "Ivers",
    "Jessop",
    "Kell",
]


def make_corpus(n: int, seed: int = 7) -> list[Document]:
    """``n`` fictional documents of a few sentences each (deterministic)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        name, town = rng.choice(NAMES), f"{rng.choice(NAMES)}{rng.choice(['ton', 'wick', 'ford'])}"
        sentences = [
            f"{name} {i} built the {rng.choice(WORDS)} {rng.choice(WORDS)} of {town} in "
            f"{1800 + rng.randrange(200)}."
        ]
        for _ in range(rng.randrange(3, 8)):
            a, b, c = rng.sample(WORDS, 3)
            sentences.append(f"The {a} near the {b} was known for its {c} and its {town} trade.")
        docs.append(Document(f"doc-{i:04d}", f"{name} {i} of {town}", " ".join(sentences), "bench"))
    return docs


class LatencyStore:
    """The real store plus a fixed delay per search (a remote server's round trip)."""

    def __init__(self, store, delay_s: float) -> None:
        self._store, self._delay = store, delay_s

    def __getattr__(self, name):
        return getattr(self._store, name)

    def hybrid_search(self, query, k=50, exclude=()):
        time.sleep(self._delay)
        return self._store.hybrid_search(query, k=k, exclude=exclude)


class MemoStore:
    """The real store, memoized per (method, arguments): repeat runs skip retrieval."""

    def __init__(self, store) -> None:
        self._store, self._memo, self._lock = store, {}, threading.Lock()

    def __getattr__(self, name):
        return getattr(self._store, name)

    def _cached(self, key, fn):
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        value = fn()
        with self._lock:
            self._memo[key] = value
        return value

    def hybrid_search(self, query, k=50, exclude=()):
        key = ("h", query, k, frozenset(exclude))
        return self._cached(key, lambda: self._store.hybrid_search(query, k=k, exclude=exclude))

    def grep(self, pattern, limit=5, exclude=()):
        key = ("g", pattern, limit, frozenset(exclude))
        return self._cached(key, lambda: self._store.grep(pattern, limit=limit, exclude=exclude))

    def read_document(self, doc_id):
        return self._cached(("r", doc_id), lambda: self._store.read_document(doc_id))

    def similarity(self, query, chunk_ids):
        key = ("s", query, tuple(chunk_ids))
        return self._cached(key, lambda: self._store.similarity(query, chunk_ids))


def turn_seconds(trace) -> list[float]:
    """Per turn: from the proposal to the last tool result applied."""
    out = []
    start = None
    last = None
    for e in trace:
        if isinstance(e, ProposalEvent):
            if start is not None and last is not None:
                out.append(last - start)
            start, last = e.t, None
        elif isinstance(e, ToolResult):
            last = e.t
    if start is not None and last is not None:
        out.append(last - start)
    return out


def calls_turn(store, config, queries: list[str]) -> float:
    """Seconds of one turn running ``queries`` as concurrent search_corpus calls."""
    calls = tuple(ToolCall("search_corpus", {"query": q}, f"c{i}") for i, q in enumerate(queries))
    policy = ScriptedPolicy([Proposal(tool_calls=calls), answer()])
    result = run_episode("bench question", store, policy, config)
    return turn_seconds(result.trace)[0]


def bench_concurrency(store, config, label: str, repeats: int) -> None:
    queries = [f"{a} {b} trade" for a, b in zip(WORDS[::2], WORDS[1::2], strict=False)][:4]
    calls_turn(store, config, queries[:1])  # warm-up
    singles = [
        statistics.median(calls_turn(store, config, [q]) for _ in range(repeats)) for q in queries
    ]
    print(f"\n[{label}] one turn with K concurrent search_corpus calls (median of {repeats}):")
    print("   K   turn ms   slowest single ms   sum of singles ms   turn/sum")
    for k in (1, 2, 4):
        turn = statistics.median(calls_turn(store, config, queries[:k]) for _ in range(repeats))
        slowest, total = max(singles[:k]), sum(singles[:k])
        print(
            f"  {k:2d}  {turn * 1000:8.1f}  {slowest * 1000:18.1f}  {total * 1000:18.1f}"
            f"  {turn / total:8.2f}"
        )


def overhead_script(n_turns: int) -> list:
    """Two searches per turn, pruning the two oldest active chunks every third turn."""
    actions = []
    for t in range(n_turns):
        a, b = WORDS[t % len(WORDS)], WORDS[(3 * t + 5) % len(WORDS)]
        calls = [
            ToolCall("search_corpus", {"query": f"{a} {b}"}, "s1"),
            ToolCall("search_corpus", {"query": f"{b} market {a}"}, "s2"),
        ]
        if t % 3 == 2:

            def act(obs, calls=tuple(calls)):
                ids = [x.chunk_id for x in obs.active[:2]]
                return Proposal(
                    tool_calls=(*calls, ToolCall("prune_chunks", {"chunk_ids": ids}, "p"))
                )

            actions.append(act)
        else:
            actions.append(Proposal(tool_calls=tuple(calls)))
    actions.append(answer())
    return actions


def bench_overhead(store, config, n_turns: int, repeats: int) -> None:
    memo = MemoStore(store)
    run_episode("bench question", memo, ScriptedPolicy(overhead_script(n_turns)), config)  # fill
    per_turn: list[list[float]] = []
    used: list[int] = []
    for _ in range(repeats):
        result = run_episode(
            "bench question", memo, ScriptedPolicy(overhead_script(n_turns)), config
        )
        states = [e for e in result.trace if isinstance(e, QueryState)]
        proposals = {e.turn: e.elapsed_s for e in result.trace if isinstance(e, ProposalEvent)}
        ends = [e.t for e in states[1:]] + [result.trace[-1].t]
        per_turn.append(
            [end - s.t - proposals.get(s.turn, 0.0) for s, end in zip(states, ends, strict=False)]
        )
        used = [s.used for s in states]
    print(
        f"\n[harness overhead] per turn, retrieval memoized, policy time excluded (median of {repeats}):"
    )
    print("  turn   tokens sent   overhead ms")
    for t in range(len(used)):
        ms = statistics.median(run[t] for run in per_turn if t < len(run)) * 1000
        print(f"  {t:4d}  {used[t]:12d}  {ms:12.2f}")
    flat = sorted(x for run in per_turn for x in run)
    print(
        f"  all turns: median {statistics.median(flat) * 1000:.2f} ms, "
        f"p90 {flat[int(0.9 * (len(flat) - 1))] * 1000:.2f} ms, max {flat[-1] * 1000:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", help="an existing index folder (default: build one)")
    parser.add_argument("--docs", type=int, default=400, help="documents in the generated corpus")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="simulated server latency")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=12, help="turns of the overhead episode")
    args = parser.parse_args()

    from thresher.index.embedded.store import EmbeddedStore

    config = Config()
    tmp = None
    if args.index:
        index = Path(args.index)
    else:
        from thresher.index.backends import ingest

        tmp = tempfile.TemporaryDirectory(prefix="thresher-bench-")
        index = Path(tmp.name)
        start = time.perf_counter()
        ingest(make_corpus(args.docs), index, config)
        print(f"indexed {args.docs} generated documents in {time.perf_counter() - start:.1f} s")
    store = EmbeddedStore(index, config)
    try:
        bench_concurrency(store, config, "embedded store, local CPU", args.repeats)
        latency = LatencyStore(store, args.latency_ms / 1000)
        bench_concurrency(
            latency, config, f"+{args.latency_ms:.0f} ms simulated server latency", args.repeats
        )
        bench_overhead(store, config, args.turns, args.repeats)
    finally:
        store.close()
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
