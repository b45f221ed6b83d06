"""``thresher.search(index=PATH)`` call after call: the index kept open, or opened each time.

Builds a small index of made-up documents in a temporary folder, warms the imports
and the embedder with one call, then times ``--calls`` calls in a row with the
index kept open (``reuse=True``, the default: the first call opens it) and with
``reuse=False`` (every call opens the index, copying its chroma folder).

Usage::

    .venv/bin/python bench/bench_reuse.py [--docs 300] [--calls 4]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import thresher
from thresher.corpus.document import Document
from thresher.index.backends import ingest


def _documents(n: int) -> list[Document]:
    return [
        Document(
            f"d{i:04d}",
            f"Town {i}",
            f"Town {i} is known for its trade number {i}. Its mill was founded in "
            f"{1800 + i % 200} by family {i % 17}.",
            "bench",
        )
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300, help="documents in the index")
    parser.add_argument("--calls", type=int, default=4, help="calls timed per mode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "index"
        ingest(_documents(args.docs), where, progress=False)
        question = "Who founded the mill in town 42?"
        thresher.search(question, index=where, reuse=False)  # imports, embedder
        for reuse in (True, False):
            thresher.close_indexes()
            times = []
            for _ in range(args.calls):
                start = time.perf_counter()
                thresher.search(question, index=where, reuse=reuse)
                times.append(time.perf_counter() - start)
            shown = ", ".join(f"{t * 1000:.0f} ms" for t in times)
            print(f"reuse={reuse}: {shown}")
        thresher.close_indexes()


if __name__ == "__main__":
    main()
