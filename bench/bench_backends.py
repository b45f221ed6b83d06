"""The embedded backend's read path, measured: open, searches, reads, disk, readers under a writer.

Runs with whichever thresher is first on ``PYTHONPATH`` (so the same script measures a
baseline checkout and this tree), on an index folder (the pooled HotpotQA dev index
of ``bench_episode.py`` by default):

- open: a fresh process imports ``thresher.index.backends``, then times ``open_store``
  and its first hybrid search (median of ``--opens``), and says whether chromadb was
  imported;
- in one process, p50 over ``--queries`` questions (titles of the index's documents):
  ``dense_search``, ``hybrid_search``, ``hybrid_search`` under a ``where`` filter,
  ``get`` of 10 ids, ``read_document``;
- disk: the bytes of the live generation and, when it has a ``chroma/`` folder, of
  its shared read copies;
- ``--chroma``: chromadb itself on a private copy of the generation's ``chroma/``
  (option (a) of docs/backends.md: chromadb as the read path): ``query`` and ``get``
  by id p50;
- ``--readers N``: on a copy of the index, N processes search without pause while
  this one deletes ``--writes`` documents one commit at a time; prints the searches
  run, the errors, and the p50 of a search meanwhile.

Prints figures; asserts nothing. The machine's load matters: compare within one run.

Usage::

    PYTHONPATH=src .venv/bin/python bench/bench_backends.py [--index DIR] [--queries 50]
        [--opens 3] [--chroma] [--readers 2 --writes 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_OPEN = """
import json, sys, time
import thresher.index.backends as b
c0, t0 = time.process_time(), time.perf_counter()
store = b.open_store(sys.argv[1])
c1, t1 = time.process_time(), time.perf_counter()
store.hybrid_search("an album released in the city", k=10)
c2, t2 = time.process_time(), time.perf_counter()
print(json.dumps({"open": t1 - t0, "first": t2 - t1, "open_cpu": c1 - c0, "first_cpu": c2 - c1,
                  "chromadb": "chromadb" in sys.modules}))
"""

_READER = """
import json, sys, time
import thresher.index.backends as b
store = b.open_store(sys.argv[1])
queries = json.loads(sys.argv[2])
until = time.time() + float(sys.argv[3])
n = errors = 0
ms = []
while time.time() < until:
    for q in queries:
        t0 = time.perf_counter()
        try:
            store.hybrid_search(q, k=10)
            n += 1
        except Exception as exc:  # counted, not raised
            errors += 1
            print(type(exc).__name__, exc, file=sys.stderr)
        ms.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"searches": n, "errors": errors, "ms": ms}))
"""


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _p50(fn: object, items: list[object]) -> str:
    """Wall and CPU (this process, every thread) p50 of ``fn`` over ``items``, in ms."""
    wall, cpu = [], []
    for item in items:
        c0, t0 = time.process_time(), time.perf_counter()
        fn(item)  # type: ignore[operator]
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return f"{statistics.median(wall):.3f} ms (CPU {statistics.median(cpu):.3f} ms)"


def _env() -> dict[str, str]:
    return dict(os.environ)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=None, help="index folder (default: the HotpotQA dev one)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--opens", type=int, default=3)
    ap.add_argument("--chroma", action="store_true")
    ap.add_argument("--readers", type=int, default=0)
    ap.add_argument("--writes", type=int, default=5)
    args = ap.parse_args()

    from thresher.index.backends import open_store
    from thresher.index.filters import DocFilter

    if args.index is None:
        root = Path("/tmp/thresher-dev-index/hotpotqa")
        found = sorted(p for p in root.iterdir() if (p / "CURRENT").is_file())
        if not found:
            print(f"skipped: no index under {root} (run bench/bench_episode.py first)")
            return 0
        index = found[-1]
    else:
        index = Path(args.index)
    print(f"index {index}")

    opens = []
    for _ in range(args.opens):
        out = subprocess.run(
            [sys.executable, "-c", _OPEN, str(index)], capture_output=True, text=True, check=True
        )
        opens.append(json.loads(out.stdout))
    med = {k: statistics.median(o[k] for o in opens) * 1000 for k in opens[0] if k != "chromadb"}
    print(
        f"open_store (fresh process, after imports): {med['open']:.1f} ms (CPU "
        f"{med['open_cpu']:.1f} ms); first hybrid search {med['first']:.1f} ms (CPU "
        f"{med['first_cpu']:.1f} ms); chromadb imported: {opens[0]['chromadb']}"
    )

    store = open_store(index)
    docs = store.doc_ids()[: args.queries]
    titles = [store.read_document(d)[0].title or d for d in docs]
    store.hybrid_search(titles[0], k=10)  # warm: embedder, matrix
    where = DocFilter.parse({"title": {"$in": titles[: len(titles) // 2]}}, None)
    print(
        f"a filter's first call (resolving it) {_p50(lambda q: store.hybrid_search(q, k=10, where=where), titles[:1])}"
    )
    ids = [c.chunk_id for d in docs for c in store.read_document(d)][:200]
    print(f"dense_search p50 {_p50(lambda q: store.dense_search(q, k=10), titles)}")
    print(f"hybrid_search p50 {_p50(lambda q: store.hybrid_search(q, k=10), titles)}")
    print(
        "hybrid_search where (title $in 25) p50 "
        f"{_p50(lambda q: store.hybrid_search(q, k=10, where=where), titles)}"
    )
    groups = [ids[i : i + 10] for i in range(0, len(ids), 10)]
    print(f"get 10 ids p50 {_p50(store.get, groups)} (the store's chunk cache)")
    view = store._view()  # the bench reaches in: a read of the chunks' own storage
    source = view.source if hasattr(view.source, "chunks") else view.records  # (before: records)
    if source is not None:
        print(f"records read of 10 ids p50 {_p50(source.chunks, groups)}")
    print(f"read_document p50 {_p50(store.read_document, docs)}")
    generation = index / (index / "CURRENT").read_text(encoding="utf-8").strip()
    print(f"disk: generation {_du(generation) / 1e6:.1f} MB", end="")
    if (generation / "chroma").is_dir():
        print(f" (chroma/ {_du(generation / 'chroma') / 1e6:.1f} MB)", end="")
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        copies = Path(os.environ.get("THRESHER_READ_COPIES") or cache / "thresher" / "read-copies")
        shared = [p for p in copies.glob("thresher-gen-*") if p.is_dir()] if copies.is_dir() else []
        print(f"; shared read copies {sum(map(_du, shared)) / 1e6:.1f} MB in {len(shared)}", end="")
    print()
    store.close()

    if args.chroma and (generation / "chroma").is_dir():
        import chromadb
        import numpy as np

        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(generation / "chroma", Path(tmp) / "chroma")
            t0 = time.perf_counter()
            client = chromadb.PersistentClient(path=str(Path(tmp) / "chroma"))
            col = client.get_collection("chunks")
            print(f"chromadb: client + collection {(time.perf_counter() - t0) * 1000:.0f} ms")
            vec = np.asarray(col.get(ids=ids[:1], include=["embeddings"])["embeddings"][0])
            qs = [vec + np.float32(i) * 1e-3 for i in range(args.queries)]
            col.query(query_embeddings=[qs[0]], n_results=10)  # loads HNSW
            print(
                "chromadb query p50 "
                f"{_p50(lambda v: col.query(query_embeddings=[v], n_results=10), qs)}"
            )
            print(
                "chromadb get 10 ids p50 "
                f"{_p50(lambda g: col.get(ids=g, include=['documents', 'metadatas']), groups)}"
            )
            client.close()

    if args.readers:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "index"
            shutil.copytree(index, copy, ignore=shutil.ignore_patterns("ingest.lock"))
            seconds = 20.0
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        _READER,
                        str(copy),
                        json.dumps(titles[:20]),
                        str(seconds),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(args.readers)
            ]
            time.sleep(3)
            writer = open_store(copy)
            t0 = time.perf_counter()
            for d in docs[-args.writes :]:
                writer.delete_documents([d])
            took = time.perf_counter() - t0
            writer.close()
            results = []
            for p in procs:
                out, err = p.communicate()
                results.append(json.loads(out.strip().splitlines()[-1]))
                if err.strip():
                    print("reader stderr:", err.strip().splitlines()[-1])
            ms = [m for r in results for m in r["ms"]]
            print(
                f"{args.readers} readers x {seconds:.0f} s, {args.writes} commits "
                f"({took:.1f} s): {sum(r['searches'] for r in results)} searches, "
                f"{sum(r['errors'] for r in results)} errors, p50 {statistics.median(ms):.2f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
