"""Local-policy episode time on a dev index, query embeddings cached: the policy and harness cost.

Runs the shipped local policy (shipped controls, or ``--local KEY=VALUE``) on the
first ``--questions`` questions of a pooled dev set once to warm the query
embedding cache (and every per-process memo a long-running service would have
warm), then ``--passes`` more times, timing each episode. Prints per pass the
p50 / p95 of the episode wall time, the process CPU time per episode and the part
of it the cyclic garbage collector took, then the median over passes. This 2-core VM's speed drifts by up to 40% within an
hour; several passes, and the CPU figure beside the wall figure, show how much of
a difference is the machine's.

``--dump FILE`` writes what the warm-up pass decided, one JSON line per
question: the final documents (ids, chunk ids, justification, ``repr`` of the
score), the exit reason, the turns, and every tool call in order (tool,
arguments, status, the chunk ids it showed and its token count). A speed change
must leave this file byte-identical (``cmp`` it against a dump of the base
commit); ``--passes 0`` dumps without timing.

The policy keeps what it derives from chunk text in the index generation's
reader memo, so a pass repeating the warm-up's questions finds every chunk it
reads already analysed; ``--cold-memo`` empties that memo before each timed
pass (query vectors stay cached), so each pass's episodes share only what
earlier episodes of the same pass read: the figure for new questions on an
index the service has not read yet.

Usage::

    .venv/bin/python bench/bench_episode.py [--dataset hotpotqa] [--questions 60] [--passes 5]

Needs ``../shared/data/dev`` (skips with a message without it). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

from bench_policies import DATASETS, DEV, parse_local

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.harness.result import Result
from thresher.harness.trace import ToolResult
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.tasks.task import Task
from thresher.train.local.data import ensure_index, group_tasks


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", choices=list(DATASETS), default="hotpotqa")
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--data", default=str(DEV), help="the dev data folder")
    ap.add_argument("--cache", default="/tmp/thresher-dev-index")
    ap.add_argument("--local", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--dump", default=None, metavar="FILE", help="the warm-up pass's decisions")
    ap.add_argument(
        "--cold-memo",
        action="store_true",
        help="empty the index generation's reader memo before each timed pass",
    )
    args = ap.parse_args()
    files = [Path(args.data) / f for f in DATASETS[args.dataset]]
    if not all(f.exists() for f in files):
        print(f"skipped: {args.data} lacks {', '.join(DATASETS[args.dataset])}")
        return 0
    options = parse_local(args.local)
    config = Config()
    store = EmbeddedStore(ensure_index(files, Path(args.cache) / args.dataset, config), config)
    tasks = [t for f in files for t in _questions(f)][: args.questions]
    print(
        f"{args.dataset}: {len(tasks)} questions, {store.stats().chunks} chunks; "
        f"local policy {options or '(shipped controls)'}"
    )

    collecting = _CollectorClock()
    gc.callbacks.append(collecting)

    def one_pass(dump: list[str] | None = None) -> tuple[list[float], float, float]:
        cpu = time.process_time()
        collecting.seconds = 0.0
        ms = []
        turns = 0
        for task in tasks:
            result = run_episode(
                task.question, store, LocalPolicy(LocalOptions(**options), config=config), config
            )
            ms.append(result.wall_s * 1000)
            turns += result.turns
            if dump is not None:
                dump.append(_decisions(result))
        n = len(tasks)
        return ms, (time.process_time() - cpu) * 1000 / n, turns / n

    dumped: list[str] = []
    one_pass(dumped)  # query embeddings and per-process memos warm
    if args.dump:
        Path(args.dump).write_text("".join(line + "\n" for line in dumped))
        print(f"wrote {len(dumped)} episodes' decisions to {args.dump}")
    p50s = []
    for i in range(1, args.passes + 1):
        if args.cold_memo:
            store.reader_memo().clear()
        ms, cpu_ms, turns = one_pass()
        p50s.append(statistics.median(ms))
        print(
            f"pass {i}: p50 {p50s[-1]:.1f} ms, p95 {_pct(ms, 0.95):.1f} ms, "
            f"CPU {cpu_ms:.1f} ms/episode (cyclic GC {collecting.seconds * 1000 / len(tasks):.1f}), "
            f"{turns:.2f} turns"
        )
    if p50s:
        print(f"median of the passes' p50: {statistics.median(p50s):.1f} ms (min {min(p50s):.1f})")
    return 0


class _CollectorClock:
    """A ``gc.callbacks`` entry summing the wall time of the cyclic collector's runs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


def _decisions(result: Result) -> str:
    """One episode's decisions as a JSON line (scores as ``repr``: every bit counts)."""
    calls = [
        {
            "tool": e.tool,
            "arguments": e.arguments,
            "status": e.status,
            "shown": e.shown,
            "tokens": e.tokens,
        }
        for e in result.trace
        if isinstance(e, ToolResult)
    ]
    documents = [
        {
            "doc_id": d.doc_id,
            "chunk_ids": list(d.chunk_ids),
            "justification": d.justification,
            "score": repr(d.score),
        }
        for d in result.documents
    ]
    return json.dumps(
        {
            "question": result.question,
            "exit_reason": result.exit_reason.value,
            "turns": result.turns,
            "documents": documents,
            "calls": calls,
        },
        sort_keys=True,
    )


def _questions(path: Path) -> list[Task]:
    if path.name == DATASETS["musique"][1]:  # the corpus file: passages, no questions
        return []
    return group_tasks([path])


if __name__ == "__main__":
    sys.exit(main())
