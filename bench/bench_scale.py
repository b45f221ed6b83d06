"""Scale figures (issue 14): embedded indexes of 10k, 100k and 1M chunks, and a Chroma
server (``chroma run``) at 100k beside the embedded index of the same size.

The indexes are synthetic (see ``bench/synthetic.py``): the pooled HotpotQA and
MuSiQue dev paragraphs (~7.8k, real texts) repeated under new ids, each with its
paragraph's real MiniLM vector plus Gaussian noise; vectors are given, never
embedded, so "ingest" is the index's own rate. They are cached under ``--cache``
(shared with ``bench_retrieval.py``), so a second run only measures. For each size:

- ingest rate (vectors given: records, vectors and their HNSW graph, BM25 and grep
  indexes written), measured when the index was built (``build.json``);
- size on disk of the index generation;
- open time and resident memory of a fresh process opening the index (a child
  process, the libraries imported first: after the open, then after its first hybrid
  search); the first open is shown apart (cold page cache), then the median of three;
- hybrid search k=50 p50/p95, first with new questions (query vector embedded),
  then the same questions again (vector cached);
- grep p50/p95 over the bench's 14 patterns (x3), and the full scan over the same
  patterns (grep's fallback when the trigram index cannot answer);
- episode p50/p95 of the ``local`` policy (``thresher.search``) over dev questions.

With ``--build-only``: only the missing indexes are built (no dev index is embedded
first: the known vectors are read from the dev indexes on disk), printing the rate of
each batch.

With ``--server``: the 100k corpus ingested into ``chroma run`` on 127.0.0.1 (vectors
given), then the same figures, and the server/embedded ratios.

Usage::

    .venv/bin/python bench/bench_scale.py [--sizes 10k,100k,1M] [--cache DIR]
        [--queries 100] [--episodes 20] [--server] [--open-only] [--build-only]

Prints a table; asserts nothing. Run it alone: the machine's load matters.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing, suppress
from pathlib import Path

import synthetic as syn

from thresher.errors import PatternRejectedError

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
#: the full scan is cut here; a cut pattern counts this long
SCAN_TIMEOUT_S = 20.0


def probe_open(index: str) -> None:
    """Child process: open the index, search once; print open time and memory as JSON.
    The libraries are imported first (``import_s``): the open time is the index's."""
    started = time.perf_counter()
    import bm25s  # noqa: F401
    import faiss  # noqa: F401
    import onnxruntime  # noqa: F401

    from thresher.config import Config
    from thresher.index.backends import open_store

    imported = time.perf_counter() - started
    base = syn.rss_mb()
    started = time.perf_counter()
    store = open_store(index, Config())
    opened = time.perf_counter() - started
    rss_open = syn.rss_mb()
    started = time.perf_counter()
    store.hybrid_search("who founded the university", k=50)
    first = time.perf_counter() - started
    out = {"open_s": opened, "first_search_s": first, "rss_base_mb": base, "import_s": imported,
           "rss_open_mb": rss_open, "rss_search_mb": syn.rss_mb()}  # fmt: skip
    store.close()
    print(json.dumps(out))


def fresh_open(index: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--probe-open", index],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(store, label: str, questions: list[str], episodes: list[str], config) -> dict:
    """Hybrid, grep, full-scan grep and episode figures for one open store."""
    import thresher
    from thresher.index.grep.guard import grep_ids

    figures: dict[str, list[float]] = {}
    store.hybrid_search("warm up the query path", k=50)
    figures["hybrid_new"] = [syn.timed(lambda q=q: store.hybrid_search(q, k=50)) for q in questions]
    figures["hybrid_cached"] = [
        syn.timed(lambda q=q: store.hybrid_search(q, k=50)) for q in questions
    ]
    store.grep(syn.GREP_PATTERNS[0], 5)
    figures["grep"] = [
        syn.timed(lambda p=p: store.grep(p, 5)) for p in syn.GREP_PATTERNS for _ in range(3)
    ]
    capped = sum(store.grep(p, 5).capped for p in syn.GREP_PATTERNS)
    view = store._view()  # the bench reaches in: the source's full scan, grep's fallback

    scan_grep = dataclasses.replace(config.grep, timeout_s=SCAN_TIMEOUT_S)

    def scan(pattern: str) -> None:
        def matching(rust: str) -> list[str]:
            return view.source.regex_ids(rust, pattern)

        with suppress(PatternRejectedError):  # ran past SCAN_TIMEOUT_S: counted that long
            grep_ids(matching, pattern, scan_grep, view.order, 5)

    figures["grep_scan"] = [syn.timed(lambda p=p: scan(p)) for p in syn.GREP_PATTERNS]
    if episodes:  # the first episode loads the policy's weights: not timed
        thresher.search(episodes[0], index=store, policy="local", config=config)
    figures["episode"] = [
        syn.timed(lambda q=q: thresher.search(q, index=store, policy="local", config=config))
        for q in episodes
    ]
    n_q, n_e = len(questions), len(episodes)
    syn.row(
        f"{label} hybrid k=50 (new query)", syn.pcts(figures["hybrid_new"]), f"p50 / p95, n={n_q}"
    )
    syn.row(f"{label} hybrid k=50 (cached vector)", syn.pcts(figures["hybrid_cached"]), f"n={n_q}")
    syn.row(f"{label} grep limit=5", syn.pcts(figures["grep"]),
            f"{len(syn.GREP_PATTERNS)} patterns x 3; {capped} counts capped")  # fmt: skip
    syn.row(f"{label} grep, full scan", syn.pcts(figures["grep_scan"]),
            f"{len(syn.GREP_PATTERNS)} patterns; before the side index")  # fmt: skip
    syn.row(f"{label} episode, local policy", syn.pcts(figures["episode"]), f"n={n_e}")
    return {k: statistics.median(v) for k, v in figures.items()} | {
        k + "_p95": syn.percentile(v, 0.95) for k, v in figures.items()
    }


def embedded_size(name: str, n: int, docs, reuse, dim: int, args, config, minilm) -> dict:
    from thresher.index.backends import open_store
    from thresher.index.embedded import layout

    target = args.cache / f"noisy{n}"
    started = time.perf_counter()
    phases = syn.build_synthetic(target, docs, n, reuse.known, dim)
    if time.perf_counter() - started > 60:
        syn.row(f"{name} index built", f"{time.perf_counter() - started:.0f} s", str(target))
    seconds = phases.get("seconds") or phases.get("total_s") or 0.0
    rate = n / seconds if seconds else float("nan")
    parts = ", ".join(f"{k[:-2]} {v:.0f} s" for k, v in phases.items() if k.endswith("_s"))
    syn.row(f"{name} ingest (vectors given)", f"{rate:,.0f} chunks/s", parts)
    generation = layout.current_generation(target)
    size = syn.disk_size(generation) / 1e9
    syn.row(f"{name} size on disk", f"{size:.2f} GB", f"{generation}")
    first_open = fresh_open(str(target))  # makes the shared read copy if the commit did not
    syn.row(f"{name} first open (fresh process)", f"{first_open['open_s']:.2f} s",
            "makes the generation's shared read copy unless its commit did")  # fmt: skip
    opens = [fresh_open(str(target)) for _ in range(3)]
    opened = sorted(opens, key=lambda o: o["open_s"])[1]  # the median of 3
    syn.row(f"{name} open (fresh process)", f"{opened['open_s']:.2f} s",
            f"median of 3; first search {opened['first_search_s']:.2f} s; libraries "
            f"imported before, {opened['import_s']:.2f} s")  # fmt: skip
    syn.row(f"{name} resident memory, opened", f"{opened['rss_open_mb']:,.0f} MB",
            f"{opened['rss_search_mb']:,.0f} MB after the first search; "
            f"{opened['rss_base_mb']:,.0f} MB before the open")  # fmt: skip
    with closing(open_store(target, config, embedder=minilm)) as store:
        figures = measure(store, name, args.questions, args.episode_questions, config)
    return figures | {"rate": rate, "size_gb": size, **opened}


def server_size(name: str, n: int, docs, reuse, args, config, minilm, embedded: dict) -> None:
    from thresher.index.backends import ingest, open_store

    with tempfile.TemporaryDirectory() as folder, syn.chroma_server(folder) as url:
        location = f"{url}/chunks"
        emb = syn.NoisyEmbedder(minilm, reuse.known)
        report = ingest(syn.synthetic_docs(docs, n), location, config, embedder=emb, progress=False)
        syn.row(f"{name} server ingest (vectors given)",
                f"{report.chunks_added / report.seconds:,.0f} chunks/s",
                f"{report.chunks_added} chunks over HTTP in {report.seconds:.0f} s")  # fmt: skip
        started = time.perf_counter()
        import os
        from unittest import mock

        with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": folder}):
            store = open_store(location, config, embedder=minilm)
        syn.row(f"{name} server open (BM25 side index built)",
                f"{time.perf_counter() - started:.2f} s", "reads every text over HTTP")  # fmt: skip
        with closing(store):
            figures = measure(
                store, f"{name} server", args.questions, args.episode_questions, config
            )
    for key, label in (("hybrid_cached", "hybrid p50, cached vector"), ("hybrid_new", "hybrid p50, new query"),
                       ("grep", "grep p50"), ("grep_p95", "grep p95"), ("episode", "episode p50")):  # fmt: skip
        ratio = figures[key] / embedded[key] if embedded.get(key) else float("nan")
        syn.row(f"{name} server / embedded, {label}", f"{ratio:.2f}x",
                f"{figures[key] * 1000:.1f} ms vs {embedded[key] * 1000:.1f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k,1M", help="comma-separated: 10k, 100k, 1M")
    parser.add_argument("--cache", type=Path, default=syn.CACHE, help="where indexes are kept")
    parser.add_argument("--queries", type=int, default=100, help="questions per hybrid figure")
    parser.add_argument("--episodes", type=int, default=20, help="local-policy episodes per size")
    parser.add_argument(
        "--server", action="store_true", help="also chroma run at 100k (or the largest size below)"
    )
    parser.add_argument(
        "--open-only", action="store_true", help="only the open figures, of indexes built before"
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="only build the synthetic indexes that are missing (resumable), no figures",
    )
    parser.add_argument("--probe-open", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_open:
        probe_open(args.probe_open)
        return
    sizes = [(s.strip(), SIZES[s.strip().lower()]) for s in args.sizes.split(",") if s.strip()]
    if args.open_only:
        open_only(sizes, args.cache)
        return
    if not syn.DEV.is_dir():
        raise SystemExit(f"no development data at {syn.DEV}")
    if args.build_only:
        build_only(sizes, args.cache)
        return
    from thresher.config import Config
    from thresher.index.embed.embedder import get_embedder
    from thresher.tasks.readers import load_tasks

    config = Config()
    minilm = get_embedder("minilm-int8")
    minilm.embed(["warm up"])
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"scale bench  (cache {args.cache}; synthetic indexes: real dev texts repeated, "
          "noisy real vectors)", flush=True)  # fmt: skip
    docs, reuse = syn.dev_corpus(config, minilm, args.cache)
    tasks = [t for f in syn.HOTPOT for t in load_tasks(syn.DEV / f)]
    args.questions = [t.question for t in tasks][: args.queries]
    args.episode_questions = [t.question for t in tasks][-args.episodes :] if args.episodes else []
    results: dict[str, dict] = {}
    for name, n in sizes:
        results[name] = embedded_size(name, n, docs, reuse, minilm.dimension, args, config, minilm)
    if args.server:
        below = [(name, n) for name, n in sizes if n <= 100_000]
        if below:
            name, n = below[-1]
            server_size(name, n, docs, reuse, args, config, minilm, results[name])
    _table(results)
    print(json.dumps({"rows": syn.ROWS, "results": results}), file=sys.stderr)


def build_only(sizes: list[tuple[str, int]], cache: Path) -> None:
    """Build the missing synthetic indexes (a stopped build resumes) and print their rates."""
    from thresher.index.embed.embedder import get_embedder

    minilm = get_embedder("minilm-int8")
    cache.mkdir(parents=True, exist_ok=True)
    docs, reuse = syn.built_corpus(minilm, cache)
    for name, n in sizes:
        phases = syn.build_synthetic(cache / f"noisy{n}", docs, n, reuse.known, minilm.dimension)
        parts = ", ".join(f"{k[:-2]} {v:.0f} s" for k, v in phases.items() if k.endswith("_s"))
        seconds = phases.get("seconds") or float("nan")
        syn.row(f"{name} ingest (vectors given)", f"{n / seconds:,.0f} chunks/s", parts)


def open_only(sizes: list[tuple[str, int]], cache: Path) -> None:
    """The open rows alone, for indexes already built under ``cache``."""
    for name, n in sizes:
        target = cache / f"noisy{n}"
        if not syn.holds_count(target, n):
            raise SystemExit(f"no {name} index in {target}: run without --open-only to build it")
        first = fresh_open(str(target))
        syn.row(f"{name} first open (fresh process)", f"{first['open_s']:.2f} s",
                "makes the generation's shared read copy unless its commit did")  # fmt: skip
        opens = sorted((fresh_open(str(target)) for _ in range(3)), key=lambda o: o["open_s"])
        shown = ", ".join(f"{o['open_s']:.3f}" for o in opens)
        syn.row(f"{name} open (fresh process)", f"{opens[1]['open_s']:.3f} s",
                f"median of 3 ({shown}); first search "
                f"{opens[1]['first_search_s']:.2f} s; libraries imported before")  # fmt: skip


def _table(results: dict[str, dict]) -> None:
    names = list(results)
    lines = [
        ("ingest, vectors given (chunks/s)", "rate", lambda v: f"{v:,.0f}"),
        ("index size on disk (GB)", "size_gb", lambda v: f"{v:.2f}"),
        ("open, fresh process (s)", "open_s", lambda v: f"{v:.2f}"),
        ("resident memory opened (MB)", "rss_open_mb", lambda v: f"{v:,.0f}"),
        ("  after first search (MB)", "rss_search_mb", lambda v: f"{v:,.0f}"),
    ]
    ms = lambda v: f"{v * 1000:.1f}"  # noqa: E731
    for key, label in (("hybrid_new", "hybrid, new query"), ("hybrid_cached", "hybrid, cached vector"),
                       ("grep", "grep"), ("grep_scan", "grep, full scan (the fallback)"),
                       ("episode", "episode, local policy")):  # fmt: skip
        lines.append((f"{label} p50 (ms)", key, ms))
        lines.append((f"{label} p95 (ms)", key + "_p95", ms))
    print("\n| figure | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for label, key, fmt in lines:
        cells = [fmt(results[n][key]) if key in results[n] else "" for n in names]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\n| figure | value | note |\n|---|---|---|")
    for name, value, note in syn.ROWS:
        print(f"| {name} | {value.strip()} | {note} |")


if __name__ == "__main__":
    main()
