"""What the open-time file checks cost: opening an embedded index with and without them.

Builds an index of the distinct paragraphs of the HotpotQA dev file
(``../shared/data/dev/hotpotqa_rpt_dev.jsonl``, the dev-size index), then opens it
(``EmbeddedStore``, first search included) ``--rounds`` times with the checks of
its ``files.json`` (sizes of every file, checksums of the BM25 id map) and as many
times with them switched off in the process (``checksums.check_sizes`` and
``checksums.verify`` replaced by no-ops), alternating so both see the same load. Also prints what listing the files costs at commit, and the SHA-256
throughput of this machine (to scale the checks to a larger index).

Usage::

    PYTHONPATH=src .venv/bin/python bench/bench_open_checks.py [--paragraphs 10000] [--rounds 5] [--dev DIR]

Prints figures; asserts nothing. The machine's load matters: compare within one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "dev"


def paragraphs(dev: Path, limit: int) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    with (dev / "hotpotqa_rpt_dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            ctx = json.loads(line)["context"]
            for title, sentences in zip(ctx["title"], ctx["sentences"], strict=True):
                seen.setdefault(title, "".join(sentences))
                if len(seen) >= limit:
                    return list(seen.items())
    return list(seen.items())


def open_once(index: Path) -> float:
    from thresher.index.embedded.store import EmbeddedStore

    start = time.perf_counter()
    store = EmbeddedStore(index)
    store.bm25_search("first performance city", k=5)
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev data folder")
    args = parser.parse_args()

    from thresher.corpus.document import Document
    from thresher.index.backends import ingest
    from thresher.index.embedded import checksums
    from thresher.index.embedded.checksums import FILES, record_files
    from thresher.index.embedded.layout import current_generation

    root = Path(tempfile.mkdtemp(prefix="bench-open-"))
    real = (checksums.check_sizes, checksums.verify)

    def unchecked_open(index: Path) -> float:
        checksums.check_sizes = checksums.verify = lambda *a, **k: None  # type: ignore[assignment]
        try:
            return open_once(index)
        finally:
            checksums.check_sizes, checksums.verify = real

    try:
        docs = [
            Document(f"p{i:06d}", t, x, "hotpotqa")
            for i, (t, x) in enumerate(paragraphs(args.dev, args.paragraphs))
        ]
        checked = root / "checked"
        ingest(docs, checked, progress=False)
        generation = current_generation(checked)
        files = json.loads((generation / FILES).read_text())["files"]
        total = sum(r["size"] for r in files.values())
        ids = sum(r["size"] for rel, r in files.items() if rel.startswith("bm25/ids"))
        start = time.perf_counter()
        record_files(generation)
        listing = time.perf_counter() - start
        open_once(checked), unchecked_open(checked)  # warm: embedder, page cache
        with_checks, without = [], []
        for _ in range(args.rounds):
            with_checks.append(open_once(checked))
            without.append(unchecked_open(checked))
        blob = os.urandom(64 << 20)
        start = time.perf_counter()
        hashlib.sha256(blob).digest()
        rate = len(blob) / (time.perf_counter() - start) / 1e6
        print(f"index: {len(docs)} documents, {len(files)} files, {total / 1e6:.1f} MB "
              f"(BM25 id map {ids / 1e3:.0f} kB)")  # fmt: skip
        print(f"listing the files at commit (sizes + SHA-256): {listing * 1000:.0f} ms")
        print(f"open + first search, median of {args.rounds}: "
              f"with checks {statistics.median(with_checks) * 1000:.0f} ms, "
              f"without {statistics.median(without) * 1000:.0f} ms")  # fmt: skip
        print(f"SHA-256 on this machine: {rate:.0f} MB/s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
