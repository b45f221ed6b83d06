"""Retrieval figures (issue 2): ingestion rate, search and grep latency at 10k and 100k
chunks, a Chroma server on loopback, and single-shot recall@5 on the pooled dev sets.

What is built (cached under ``--cache``, default ``~/.cache/thresher/bench-retrieval``,
so a second run only measures):

- the pooled dev indexes: HotpotQA (both ``hotpotqa_rpt_*`` files' paragraphs, 600
  questions) and MuSiQue (question file + corpus, 100 questions), reused from
  ``/tmp/thresher-dev-index/{hotpotqa,musique}`` when they hold the same documents;
- ``10k``: the pooled HotpotQA and MuSiQue paragraphs (~7.8k), topped up to
  10,000 chunks with the first paragraphs repeated under new ids; real MiniLM
  vectors, taken from the dev indexes (nothing is embedded twice);
- ``100k``: real paragraphs repeated under new ids, each with its paragraph's real
  vector plus Gaussian noise (cosine ~0.93 to the original; pure random vectors
  build twice as slowly in HNSW and are less like real data). For latency, not
  quality: written straight into an index folder with its BM25 side index.

Ingestion is timed on a fresh index of the MuSiQue corpus (real embeddings).
Latencies are per call, one thread, after one warm-up call; "new query" means
the query vector is not cached yet.

Usage::

    .venv/bin/python bench/bench_retrieval.py [--cache DIR] [--queries 200] [--no-server]

Prints a table; asserts nothing. Run it alone: the machine's load matters.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from unittest import mock

from synthetic import (
    CACHE,
    DEV,
    GREP_PATTERNS,
    HOTPOT,
    MUSIQUE,
    ROWS,
    ReuseEmbedder,
    build_synthetic,
    chroma_server,
    dev_index,
    pcts,
    row,
    timed,
)

from thresher.config import Config
from thresher.corpus import iter_documents
from thresher.corpus.document import Document
from thresher.eval.metrics import recall_at_k
from thresher.index.backends import ingest, open_store
from thresher.index.embed.embedder import get_embedder
from thresher.tasks.readers import load_tasks


def latency(store, questions: list[str], label: str) -> None:
    store.hybrid_search("warm up the query path", k=50)
    samples = [timed(lambda q=q: store.hybrid_search(q, k=50)) for q in questions]
    row(f"hybrid k=50 {label} (new query)", pcts(samples), f"p50 / p95, n={len(samples)}")
    samples = [timed(lambda q=q: store.hybrid_search(q, k=50)) for q in questions]
    row(f"hybrid k=50 {label} (cached vector)", pcts(samples), f"n={len(samples)}")
    store.grep(GREP_PATTERNS[0], 5)
    samples = [timed(lambda p=p: store.grep(p, 5)) for p in GREP_PATTERNS for _ in range(3)]
    row(f"grep limit=5 {label}", pcts(samples), f"{len(GREP_PATTERNS)} patterns x 3")


def recall(store, tasks, label: str) -> None:
    for method in ("bm25_search", "dense_search", "hybrid_search"):
        scores = []
        for task in tasks:
            hits = getattr(store, method)(task.question, k=50)
            ranked = list(dict.fromkeys(h.chunk.doc_id for h in hits))
            scores.append(recall_at_k(ranked, task.gold_doc_ids, 5))
        row(f"recall@5 {label} {method.split('_')[0]}", f"{statistics.mean(scores):.3f}",
            f"document level, {len(tasks)} questions")  # fmt: skip


def server_latency(docs: list[Document], questions: list[str], config: Config, emb) -> None:
    with tempfile.TemporaryDirectory() as folder, chroma_server(folder) as url:
        report = ingest(docs, f"{url}/chunks", config, embedder=emb, progress=False)
        row("server ingest (vectors reused)", f"{report.chunks_added / report.seconds:.1f} chunks/s",
            f"{report.chunks_added} chunks over HTTP")  # fmt: skip
        opened = time.perf_counter()
        # the BM25 side index is cached under $XDG_CACHE_HOME: keep it in the temp folder
        with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": folder}):
            store = open_store(f"{url}/chunks", config, embedder=emb.inner)
        with closing(store):
            row("server open (BM25 side index built)",
                f"{time.perf_counter() - opened:.2f} s",
                store.stats().extra["fusion_reason"])  # fmt: skip
            latency(store, questions, f"server {len(docs) / 1000:.1f}k")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path,
                        default=CACHE)  # fmt: skip
    parser.add_argument("--queries", type=int, default=200, help="questions per latency figure")
    parser.add_argument("--mid", type=int, default=10_000, help="chunks in the real index")
    parser.add_argument("--big", type=int, default=100_000, help="chunks in the synthetic index")
    parser.add_argument("--ingest-docs", type=int, default=600, help="documents ingested fresh")
    parser.add_argument("--no-server", action="store_true", help="skip the chroma run figures")
    args = parser.parse_args()
    if not DEV.is_dir():
        raise SystemExit(f"no development data at {DEV}")
    config = Config()
    minilm = get_embedder("minilm-int8")
    minilm.embed(["warm up"])
    cache = args.cache
    cache.mkdir(parents=True, exist_ok=True)
    print(f"retrieval bench  (cache {cache})")

    hotpot_docs = list(iter_documents([DEV / f for f in HOTPOT]))
    musique_docs = list(iter_documents([DEV / f for f in MUSIQUE]))
    hotpot_tasks = [t for f in HOTPOT for t in load_tasks(DEV / f)]
    musique_tasks = load_tasks(DEV / MUSIQUE[0])
    questions = [t.question for t in hotpot_tasks][: args.queries]

    with tempfile.TemporaryDirectory() as folder:  # ingestion rate, real embeddings
        part = musique_docs[: args.ingest_docs]
        report = ingest(part, folder, config, embedder=minilm, progress=False)
        row("ingest, fresh embedded index", f"{report.chunks_added / report.seconds:.1f} chunks/s",
            f"MuSiQue corpus, {report.chunks_added} chunks in {report.seconds:.0f} s")  # fmt: skip

    hotpot_dir = dev_index("hotpotqa", hotpot_docs, cache, config, minilm)
    musique_dir = dev_index("musique", musique_docs, cache, config, minilm)
    reuse = ReuseEmbedder(minilm)
    reuse.learn(hotpot_dir)
    reuse.learn(musique_dir)

    first: dict[str, Document] = {}  # a paragraph in both datasets has one id: keep one
    for doc in hotpot_docs + musique_docs:
        first.setdefault(doc.doc_id, doc)
    unique = list(first.values())
    repeats = [
        dataclasses.replace(d, doc_id=f"rep{i:05d}-{d.doc_id}")
        for i, d in enumerate(unique[: max(0, args.mid - len(unique))])
    ]
    mix_docs = unique + repeats
    report = ingest(mix_docs, cache / f"real{args.mid}", config, embedder=reuse, progress=False)
    if report.chunks_added:
        row(f"{args.mid // 1000}k index built", f"{report.seconds:.0f} s",
            f"{reuse.embedded} chunks embedded, the rest reused")  # fmt: skip
    with closing(open_store(cache / f"real{args.mid}", config, embedder=minilm)) as store:
        latency(store, questions, f"{store.stats().chunks / 1000:.1f}k")

    started = time.perf_counter()
    big_dir = cache / f"noisy{args.big}"
    build_synthetic(big_dir, unique, args.big, reuse.known, minilm.dimension)
    row(f"{args.big // 1000}k index ready", f"{time.perf_counter() - started:.0f} s",
        "real texts repeated, noisy real vectors")  # fmt: skip
    with closing(open_store(big_dir, config, embedder=minilm)) as store:
        latency(store, questions, f"{args.big // 1000}k")

    with closing(open_store(hotpot_dir, config, embedder=minilm)) as store:
        recall(store, hotpot_tasks, "HotpotQA pooled")
    with closing(open_store(musique_dir, config, embedder=minilm)) as store:
        recall(store, musique_tasks, "MuSiQue pooled")

    if not args.no_server:
        server_latency(musique_docs, [t.question for t in musique_tasks], config, reuse)

    print("\n| figure | value | note |\n|---|---|---|")
    for name, value, note in ROWS:
        print(f"| {name} | {value.strip()} | {note} |")
    print(json.dumps({"rows": ROWS}), file=sys.stderr)


if __name__ == "__main__":
    main()
