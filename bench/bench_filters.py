"""Search latency under document filters (``where`` on metadata, a glob on ids) on a dev index.

On the pooled HotpotQA dev index, ``--queries`` questions are searched (hybrid and
dense, k=50) with no filter and under filters admitting few or most documents,
first on the exact dense scan (the default up to ``retrieval.exact_dense_max_chunks``)
then on the approximate path (``exact_dense_max_chunks=0``: the HNSW graph when the
index has one, else each search scores the rows it may return). Query vectors are embedded
once before timing, so the figures are the search's own. For each filter: the first
call (the store resolves the filter to the chunks it leaves out, then keeps that for
the index state) and the p50 / p95 of the calls after.

Usage::

    .venv/bin/python bench/bench_filters.py [--queries 30]

Needs ``../shared/data/dev`` (skips with a message without it). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench_policies import DATASETS, DEV

from thresher.config import Config
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.filters import DocFilter
from thresher.train.local.data import ensure_index


def _questions(path: Path, n: int) -> list[str]:
    out: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            question = json.loads(line).get("question")
            if question:
                out.append(question)
            if len(out) >= n:
                break
    return out


def _ms(fn, queries: list[str]) -> tuple[float, float]:
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def _filters(store: EmbeddedStore) -> list[tuple[str, DocFilter | None]]:
    head = store.doc_ids()[0][:2]  # dataset paragraph ids: p-<hex>, 16 first digits
    titles = [d.title for d in store.list_documents()[:200]]
    return [
        ("none", None),
        (f"path {head}a* (~1/16)", DocFilter.parse(None, f"{head}a*")),
        (f"path {head}[!a]* (~15/16)", DocFilter.parse(None, f"{head}[!a]*")),
        ("where title $in 200 titles", DocFilter.parse({"title": {"$in": titles}}, None)),
    ]


def _run(index: Path, config: Config, label: str, queries: list[str]) -> None:
    store = EmbeddedStore(index, config)
    try:
        for q in queries:
            store.dense_search(q, k=1)  # embed every query once
        print(f"{label} ({store.stats().chunks} chunks)")
        for name, f in _filters(store):
            kw = {"where": f} if f is not None else {}
            start = time.perf_counter()
            store.hybrid_search(queries[0], k=50, **kw)
            first = (time.perf_counter() - start) * 1000
            h50, h95 = _ms(lambda q, kw=kw: store.hybrid_search(q, k=50, **kw), queries)
            d50, d95 = _ms(lambda q, kw=kw: store.dense_search(q, k=50, **kw), queries)
            print(
                f"  {name:30s} first {first:6.1f} ms | hybrid p50/p95 {h50:6.1f}/{h95:6.1f} ms"
                f" | dense {d50:6.1f}/{d95:6.1f} ms"
            )
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--data", default=str(DEV), help="the dev data folder")
    ap.add_argument("--cache", default="/tmp/thresher-dev-index")
    args = ap.parse_args()
    files = [Path(args.data) / f for f in DATASETS["hotpotqa"]]
    if not all(f.exists() for f in files):
        print(f"skipped: {args.data} lacks {', '.join(DATASETS['hotpotqa'])}")
        return 0
    config = Config()
    index = ensure_index(files, Path(args.cache) / "hotpotqa", config)
    queries = _questions(files[0], args.queries)
    _run(index, config, "exact dense scan", queries)
    hnsw = config.override({"retrieval.exact_dense_max_chunks": 0})
    _run(index, hnsw, "approximate path", queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
