"""What an embedder costs on this machine: CPU and wall time per chunk, and per query.

For each embedder name (any name ``thresher.index.embed.embedder.get_embedder``
reads), in a fresh process of its own: the model is loaded first (not timed),
then ``--chunks`` chunks of ``--folder`` (cut by the index's own chunker at the
configured size, every n-th chunk of the folder in path order, so the sample
spans the whole tree; embedded as an index embeds them, ``indexed_text``) are
embedded in batches of the embedder's batch size, sorted by length as an ingest
does; then ``--queries`` questions of the real-folder benchmark are embedded one
at a time. It prints the process's CPU milliseconds (all threads) and the wall
milliseconds per chunk and per query.

CPU time is the steadier figure on a shared machine (the wall time moves with
the load, printed beside it).

Usage::

    .venv/bin/python bench/bench_embed_cost.py [--folder /tmp/docfolders/docs]
        [--chunks 128] [--queries 50] [--embedders minilm-int8-dq-w128 minilm-int8-dq-w128x4]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS = sorted((HERE / "docfolders").glob("questions-*.jsonl"))
DEFAULT_EMBEDDERS = ("minilm-int8-dq-w128", "minilm-int8-dq-w128x4")


def sample_chunks(folder: Path, n: int) -> list[str]:
    """``n`` chunk texts of ``folder``, spread over it: every k-th chunk in path order."""
    from thresher.config import Config
    from thresher.corpus import iter_documents
    from thresher.corpus.chunking import chunk_document
    from thresher.index.records import indexed_text
    from thresher.tokens import get_counter

    config = Config()
    counter = get_counter(config.chunking.tokenizer)
    docs = sorted(iter_documents([folder]), key=lambda d: d.doc_id)
    chunks = [c for d in docs for c in chunk_document(d, config.chunking.max_tokens, counter)]
    step = max(1, len(chunks) // n)
    return [indexed_text(c.title, c.text) for c in chunks[::step][:n]]


def questions(n: int) -> list[str]:
    """The first ``n`` questions of the real-folder benchmark's files."""
    out: list[str] = []
    for path in QUESTIONS:
        out += [json.loads(line)["question"] for line in path.read_text().splitlines() if line]
    return out[:n]


def measure(name: str, texts: list[str], queries: list[str]) -> dict[str, float]:
    """Times of one embedder (run in its own process)."""
    from thresher.index.embed.embedder import batch_size_of, get_embedder

    embedder = get_embedder(name)
    embedder.embed(["warm up"])  # loads the model (and builds a derived file once)
    batch = batch_size_of(embedder)
    order = sorted(texts, key=len)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for start in range(0, len(order), batch):
        embedder.embed(order[start : start + batch])
    cpu_chunk = 1000 * (time.process_time() - cpu0) / len(texts)
    wall_chunk = 1000 * (time.perf_counter() - wall0) / len(texts)
    walls, cpus = [], []
    for q in queries:
        c, w = time.process_time(), time.perf_counter()
        embedder.embed([q])
        cpus.append(1000 * (time.process_time() - c))
        walls.append(1000 * (time.perf_counter() - w))
    return {
        "cpu_ms_per_chunk": cpu_chunk,
        "wall_ms_per_chunk": wall_chunk,
        "cpu_ms_per_query": statistics.fmean(cpus),
        "wall_ms_per_query_p50": statistics.median(walls),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--folder", type=Path, default=Path("/tmp/docfolders/docs"))
    ap.add_argument("--chunks", type=int, default=128, help="chunks embedded per embedder")
    ap.add_argument("--queries", type=int, default=50, help="questions embedded one by one")
    ap.add_argument("--embedders", nargs="+", default=list(DEFAULT_EMBEDDERS))
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child: one embedder, JSON out
    args = ap.parse_args(argv)
    if not args.folder.is_dir():
        print(f"skipped: no folder {args.folder} (build it: bench/docfolders/build.py)")
        return 2
    if args.one:
        texts = sample_chunks(args.folder, args.chunks)
        print(json.dumps(measure(args.one, texts, questions(args.queries))))
        return 0
    print(
        f"{args.chunks} chunks of {args.folder}, {args.queries} questions; load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"  {'embedder':<26} {'CPU ms/chunk':>12} {'wall ms/chunk':>13} {'CPU ms/query':>12} {'wall ms/query p50':>17}"
    )
    for name in args.embedders:
        cmd = [sys.executable, __file__, "--one", name, "--folder", str(args.folder)]
        cmd += ["--chunks", str(args.chunks), "--queries", str(args.queries)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"  {name:<26} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"  {name:<26} {r['cpu_ms_per_chunk']:12.1f} {r['wall_ms_per_chunk']:13.1f}"
            f" {r['cpu_ms_per_query']:12.1f} {r['wall_ms_per_query_p50']:17.1f}",
            flush=True,
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
