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
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from unittest import mock

import numpy as np

from thresher.config import Config
from thresher.corpus import iter_documents
from thresher.corpus.document import Chunk, Document
from thresher.eval.metrics import recall_at_k
from thresher.index import layout
from thresher.index.backends import ingest, open_store
from thresher.index.bm25 import Bm25Index
from thresher.index.chroma import open_client
from thresher.index.embedder import get_embedder
from thresher.index.ingest_common import document_hash
from thresher.index.records import chunk_metadata, indexed_text
from thresher.tasks.readers import load_tasks

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / ".." / "shared" / "data" / "dev"
SHARED_INDEXES = Path("/tmp/thresher-dev-index")
HOTPOT = ["hotpotqa_rpt_dev.jsonl", "hotpotqa_rpt_train.jsonl"]
MUSIQUE = ["musique_train_hipporag.json", "musique_train_hipporag_corpus.json"]
GREP_PATTERNS = [
    r"Olympic",
    r"(?i)university of",
    r"\b1[89]\d\d\b",
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"[A-Z][a-z]+ [A-Z][a-z]+ (Jr|Sr)\.",
    r"(?i)\bsymphon(y|ies)\b",
    r"born in [A-Z]\w+",
    r"^The ",
    r"river$",
    r"Müller|Zürich|São Paulo",
    r"\$\d+(\.\d+)? (million|billion)",
    r"(?i)quantum|photon",
    r"[\w.]+@[\w.]+\.(com|org)",
    r"\w",
]
ROWS: list[tuple[str, str, str]] = []


def row(name: str, value: str, note: str = "") -> None:
    ROWS.append((name, value, note))
    print(f"  {name:44s} {value:>22s}  {note}", flush=True)


def pcts(samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:7.1f} / {p95 * 1000:7.1f} ms"


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReuseEmbedder:
    """The real embedder, answering from known vectors (by text) where it can."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.known: dict[str, np.ndarray] = {}
        self.embedded = 0

    def learn(self, index_dir: Path) -> None:
        client = open_client(layout.current_generation(index_dir) / "chroma")
        collection = client.get_collection(layout.COLLECTION)
        offset = 0
        while True:
            got = collection.get(
                limit=5000, offset=offset, include=["embeddings", "documents", "metadatas"]
            )
            if not got["ids"]:
                break
            for vec, text, meta in zip(
                got["embeddings"], got["documents"], got["metadatas"], strict=True
            ):
                key = text_key(indexed_text(str(meta.get("title", "")), text or ""))
                self.known[key] = np.asarray(vec, dtype=np.float32)
            offset += len(got["ids"])
        client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if text_key(t) not in self.known]
        if missing:
            out[missing] = self.inner.embed([texts[i] for i in missing])
            self.embedded += len(missing)
        for i, t in enumerate(texts):
            if i not in missing:
                out[i] = self.known[text_key(t)]
        return out


def holds(index_dir: Path, docs: list[Document], config: Config) -> bool:
    """True when ``index_dir`` is a committed index of exactly ``docs`` (same hashes)."""
    try:
        manifest = layout.read_manifest(layout.current_generation(index_dir))
    except Exception:  # noqa: BLE001 - anything unreadable means "build our own"
        return False
    want = {d.doc_id: document_hash(d) for d in docs}
    have = {d: e.content_hash for d, e in manifest.documents.items()}
    same_chunking = manifest.chunking.get("max_tokens") == config.chunking.max_tokens
    return have == want and same_chunking


def dev_index(name: str, docs: list[Document], cache: Path, config: Config, emb) -> Path:
    shared = SHARED_INDEXES / name
    if holds(shared, docs, config):
        row(f"{name} dev index", "reused", str(shared))
        return shared
    target = cache / name
    report = ingest(docs, target, config, embedder=emb, progress=False)
    if report.chunks_added:
        row(f"{name} dev index", f"{report.chunks_added / report.seconds:.1f} chunks/s",
            f"built {report.chunks_added} chunks in {report.seconds:.0f} s")  # fmt: skip
    return target


def build_synthetic(
    target: Path, docs: list[Document], n: int, known: dict[str, np.ndarray], dim: int
) -> None:
    """An index folder of ``n`` one-chunk documents: real texts, noisy real vectors.

    ``known`` maps the hash of a paragraph's indexed text to its real vector (a
    random one stands in when it is missing).
    """
    if holds_count(target, n):
        return
    target.mkdir(parents=True, exist_ok=True)
    layout.remove_stale_generations(target, keep=None)
    generation = layout.new_generation(target)
    client = open_client(generation / "chroma")
    collection = client.get_or_create_collection(
        layout.COLLECTION, metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    batch = min(5000, client.get_max_batch_size())
    rng = np.random.default_rng(0)
    ids, texts, entries = [], [], {}
    for start in range(0, n, batch):
        chunks = []
        for i in range(start, min(n, start + batch)):
            src = docs[i % len(docs)]
            cid = f"syn-{i:06d}#0"
            chunks.append(Chunk(cid, f"syn-{i:06d}", 0, src.title, src.text, 0, len(src.text),
                                f"{i:016x}", "synthetic", "2026-01-01T00:00:00Z"))  # fmt: skip
            entries[f"syn-{i:06d}"] = layout.DocEntry(f"{i:032x}", [cid], "2026-01-01T00:00:00Z")
        vectors = rng.standard_normal((len(chunks), dim)).astype(np.float32)
        for row_i, c in enumerate(chunks):
            base = known.get(text_key(indexed_text(c.title, c.text)))
            if base is not None:
                vectors[row_i] = base + 0.02 * vectors[row_i]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        collection.add(
            ids=[c.chunk_id for c in chunks],
            documents=[c.text for c in chunks],
            metadatas=[chunk_metadata(c) for c in chunks],
            embeddings=vectors,
        )
        ids += [c.chunk_id for c in chunks]
        texts += [indexed_text(c.title, c.text) for c in chunks]
    client.close()
    Bm25Index.build(ids, texts).save(generation / "bm25")
    manifest = layout.Manifest(layout.FORMAT_VERSION, "bench", "minilm-int8", dim,
                               {"max_tokens": 512, "tokenizer": "o200k_base"}, entries)  # fmt: skip
    layout.write_manifest(generation, manifest)
    layout.commit_generation(target, generation)


def holds_count(target: Path, n: int) -> bool:
    try:
        return layout.read_manifest(layout.current_generation(target)).chunk_count == n
    except Exception:  # noqa: BLE001 - not built yet
        return False


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_latency(docs: list[Document], questions: list[str], config: Config, emb) -> None:
    import httpx

    chroma = Path(sys.executable).with_name("chroma")
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        cmd = [str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path", folder]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).is_success:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
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
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "thresher" / "bench-retrieval")  # fmt: skip
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
