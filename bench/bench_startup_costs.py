"""What the small design choices of the token counter, BM25 and the workers save.

The figures behind choices the module docstrings name without numbers:

- token counter (``thresher.tokens``): CPU seconds of ``import bpe_openai`` (the
  package builds every vocabulary's rank table when imported) against
  ``get_counter("o200k_base")`` (the Rust extension alone), each in a fresh process;
- BM25 stop words (``thresher.index.bm25._stopwords_en``): CPU seconds of
  ``import bm25s`` (which imports ``scipy.sparse``) against reading its stop-word
  module alone, each in a fresh process;
- BM25 build (``Bm25Index.build``): CPU seconds of its two halves over ``--chunks``
  synthetic chunks of ``--words`` words drawn with Zipf frequencies (thresher's analyzer, then
  ``bm25s`` indexing the terms): ingestion rebuilds the side index whole, as
  ``bm25s`` has no incremental add;
- worker threads (``thresher.workers``): wall time to start and join one daemon
  thread (median of ``--threads``), the cost a reused idle worker avoids.

Usage::

    PYTHONPATH=src .venv/bin/python bench/bench_startup_costs.py [--runs 3] [--chunks 100000] [--words 60] [--threads 500]

Prints figures; asserts nothing. The machine's load matters (CPU seconds move
less with it than wall seconds): read the load average printed beside them.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import subprocess
import sys
import threading
import time

CHILD = """
import sys, time
exec(sys.argv[1])
t = time.process_time()
exec(sys.argv[2])
print(time.process_time() - t)
"""

#: name -> (untimed prelude, timed code), each run in a fresh process
SNIPPETS = {
    "import bpe_openai (the package)": ("import thresher.tokens", "import bpe_openai"),
    "tokens.get_counter('o200k_base')": (
        "import thresher.tokens",
        "thresher.tokens.get_counter('o200k_base')",
    ),
    "import bm25s (with scipy.sparse)": ("import thresher.index.bm25", "import bm25s"),
    "bm25._stopwords_en() alone": (
        "import thresher.index.bm25",
        "thresher.index.bm25._stopwords_en()",
    ),
}


def child_cpu(prelude: str, code: str, runs: int) -> float:
    """Median CPU seconds of ``code`` in ``runs`` fresh processes, after an untimed ``prelude``."""
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, prelude, code],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return statistics.median(times)


def bm25_build(chunks: int, words: int, seed: int = 0) -> tuple[float, float]:
    """CPU seconds of the two halves of ``Bm25Index.build`` over synthetic chunks:
    analyzing the texts (thresher's analyzer), then ``bm25s`` indexing the terms."""
    import bm25s

    from thresher.index.bm25 import Analyzer

    rng = random.Random(seed)
    vocab = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 10)))
        for _ in range(50_000)
    ]
    zipf = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocab))))  # as in text
    texts = [" ".join(rng.choices(vocab, cum_weights=zipf, k=words)) for _ in range(chunks)]
    analyzer = Analyzer("english")
    cpu = time.process_time()
    corpus = [analyzer.terms(t) for t in texts]
    analyze = time.process_time() - cpu
    cpu = time.process_time()
    bm25s.BM25().index(corpus, show_progress=False)
    return analyze, time.process_time() - cpu


def thread_start(n: int) -> float:
    """Median seconds to start and join one daemon thread."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        th = threading.Thread(target=lambda: None, daemon=True)
        th.start()
        th.join()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per import figure")
    ap.add_argument("--chunks", type=int, default=100_000, help="chunks for the BM25 build")
    ap.add_argument("--words", type=int, default=60, help="words per synthetic chunk")
    ap.add_argument("--threads", type=int, default=500, help="threads started for the median")
    args = ap.parse_args()

    print(f"load average before: {os.getloadavg()[0]:.1f}")
    for name, (prelude, code) in SNIPPETS.items():
        print(
            f"{name:40s} {child_cpu(prelude, code, args.runs):6.3f} CPU s (median of {args.runs})"
        )
    analyze, index = bm25_build(args.chunks, args.words)
    print(
        f"BM25 build of {args.chunks:,} chunks of {args.words} words: analyzer {analyze:.2f} CPU s, bm25s index {index:.2f} CPU s"
    )
    print(
        f"{'start + join one daemon thread':40s} {thread_start(args.threads) * 1e3:6.3f} ms (median of {args.threads})"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
