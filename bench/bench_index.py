"""Index figures: embedding throughput, ingest throughput, search latencies.

Builds an embedded index of the HotpotQA development paragraphs
(``../shared/data/dev/hotpotqa_rpt_dev.jsonl``, ~3k paragraphs) in a temporary
folder, re-ingests it (nothing to do), then times each search over the
questions of the same file.

Usage::

    .venv/bin/python bench/bench_index.py [--data FILE] [--limit N] [--queries 100]

Prints figures; asserts nothing. The machine's load matters: run it alone.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path

from thresher.config import Config
from thresher.corpus import iter_documents
from thresher.index.backends import ingest, open_store
from thresher.index.embedder import MiniLMEmbedder

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "dev"


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEV / "hotpotqa_rpt_dev.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="index at most N documents")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"no data at {args.data}")

    docs = list(iter_documents([args.data]))
    if args.limit:
        docs = docs[: args.limit]
    questions = [json.loads(line)["question"] for line in args.data.open()][: args.queries]
    config = Config()
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])

    sample = [d.text for d in docs[:256]]
    started = time.perf_counter()
    embedder.embed(sample)
    rate = len(sample) / (time.perf_counter() - started)
    words = statistics.mean(len(t.split()) for t in sample)
    print(f"embedding   {rate:7.1f} passages/s  (MiniLM int8, {words:.0f} words on average)")

    with tempfile.TemporaryDirectory() as folder:
        report = ingest(docs, folder, config, embedder=embedder, progress=False)
        print(
            f"ingest      {report.chunks_added / report.seconds:7.1f} chunks/s   "
            f"({report.documents_added} documents, {report.chunks_added} chunks, "
            f"{report.seconds:.1f} s)"
        )
        again = ingest(docs, folder, config, embedder=embedder, progress=False)
        print(f"re-ingest   {again.seconds:7.2f} s        (unchanged: {again.documents_unchanged})")

        with closing(open_store(folder, config, embedder=embedder)) as store:
            timings: dict[str, list[float]] = {}

            def timed(name: str, fn, *a, **kw) -> None:
                started = time.perf_counter()
                fn(*a, **kw)
                timings.setdefault(name, []).append(time.perf_counter() - started)

            for q in questions:
                timed("hybrid (new query)", store.hybrid_search, q, k=50)
                timed("hybrid (cached query vector)", store.hybrid_search, q, k=50)
                timed("bm25", store.bm25_search, q, k=50)
                timed("dense (cached query vector)", store.dense_search, q, k=50)
                word = re.escape(max(q.split(), key=len).strip("?,.'\""))
                timed("grep (longest word, limit 5)", store.grep, word, 5)
            timed("grep (matches everything)", store.grep, r"\w", 5)
            for name, samples in timings.items():
                print(f"{name:30s} {_ms(samples)}   (n={len(samples)})")


if __name__ == "__main__":
    main()
