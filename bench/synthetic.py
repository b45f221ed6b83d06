"""What the retrieval and scale benches share: the dev data, synthetic indexes at any
size, timing helpers and a ``chroma run`` on loopback. Not a benchmark itself.

A synthetic index of ``n`` chunks (:func:`build_synthetic`) holds real paragraphs
(the pooled HotpotQA and MuSiQue dev paragraphs, ~7.8k) repeated under new ids,
each with its paragraph's real MiniLM vector plus Gaussian noise (cosine ~0.93 to
the original; pure random vectors build twice as slowly in HNSW and are less like
real data). Vectors are given, never embedded: it measures the index, not the
embedder. It is written straight into an index folder with its BM25 and grep side
indexes, and ``build.json`` beside it records how long each part took.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from thresher.config import Config
from thresher.corpus.document import Chunk, Document
from thresher.index.backends import ingest
from thresher.index.bm25 import Bm25Index
from thresher.index.embedded import holds as generation_holds
from thresher.index.embedded import layout
from thresher.index.embedded.collection import open_client
from thresher.index.grep import side_index as grep_index
from thresher.index.grep.side_index import GrepIndex
from thresher.index.id_table import load_ids, save_ids
from thresher.index.ingest.common import document_hash
from thresher.index.manifest import COLLECTION, FORMAT_VERSION, DocEntry
from thresher.index.records import chunk_metadata, indexed_text

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / ".." / "shared" / "data" / "dev"
SHARED_INDEXES = Path("/tmp/thresher-dev-index")
CACHE = Path.home() / ".cache" / "thresher" / "bench-retrieval"
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
    """Print one figure and keep it for the closing table."""
    ROWS.append((name, value, note))
    print(f"  {name:44s} {value:>22s}  {note}", flush=True)


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def pcts(samples: Sequence[float]) -> str:
    """``p50 / p95 ms`` of samples in seconds."""
    return f"{statistics.median(samples) * 1000:7.1f} / {percentile(samples, 0.95) * 1000:7.1f} ms"


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
        collection = client.get_collection(COLLECTION)
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


class NoisyEmbedder(ReuseEmbedder):
    """Known vectors plus the synthetic indexes' noise (for a server copy of one)."""

    def __init__(self, inner, known: dict[str, np.ndarray]) -> None:
        super().__init__(inner)
        self.known = known
        self.rng = np.random.default_rng(0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = super().embed(texts)
        out = out + 0.02 * self.rng.standard_normal(out.shape).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


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
    """The pooled dev index ``name``: the shared one when it holds ``docs``, else built."""
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


def dev_corpus(config: Config, minilm, cache: Path) -> tuple[list[Document], ReuseEmbedder]:
    """The pooled unique dev paragraphs, and an embedder that knows their real vectors."""
    from thresher.corpus import iter_documents

    hotpot_docs = list(iter_documents([DEV / f for f in HOTPOT]))
    musique_docs = list(iter_documents([DEV / f for f in MUSIQUE]))
    reuse = ReuseEmbedder(minilm)
    reuse.learn(dev_index("hotpotqa", hotpot_docs, cache, config, minilm))
    reuse.learn(dev_index("musique", musique_docs, cache, config, minilm))
    first: dict[str, Document] = {}  # a paragraph in both datasets has one id: keep one
    for doc in hotpot_docs + musique_docs:
        first.setdefault(doc.doc_id, doc)
    return list(first.values()), reuse


def built_corpus(minilm, cache: Path) -> tuple[list[Document], ReuseEmbedder]:
    """:func:`dev_corpus` without building anything: the vectors are read from the dev
    indexes already on disk (``cache`` or the shared ones), whatever documents they hold;
    a paragraph none of them has gets a random vector. For building scale indexes
    without first embedding the dev corpus."""
    from thresher.corpus import iter_documents

    reuse = ReuseEmbedder(minilm)
    for name in ("hotpotqa", "musique"):
        for folder in (cache / name, *sorted((SHARED_INDEXES / name).glob("*"))):
            try:
                reuse.learn(folder)
                break
            except Exception:  # noqa: BLE001 - not an index: try the next place
                continue
    first: dict[str, Document] = {}
    for doc in iter_documents([DEV / f for f in HOTPOT + MUSIQUE]):
        first.setdefault(doc.doc_id, doc)
    return list(first.values()), reuse


def synthetic_docs(docs: list[Document], n: int) -> Iterator[Document]:
    """``n`` one-chunk documents: ``docs`` repeated under ids ``syn-NNNNNN``."""
    for i in range(n):
        src = docs[i % len(docs)]
        yield Document(f"syn-{i:06d}", src.title, src.text, source="synthetic")


def _synthetic_chunk(docs: list[Document], i: int) -> Chunk:
    src = docs[i % len(docs)]
    return Chunk(f"syn-{i:06d}#0", f"syn-{i:06d}", 0, src.title, src.text, 0, len(src.text),
                 f"{i:016x}", "synthetic", "2026-01-01T00:00:00Z")  # fmt: skip


def _synthetic_vectors(
    chunks: list[Chunk], start: int, known: dict[str, np.ndarray], dim: int
) -> np.ndarray:
    """The vectors of the chunks from ``start`` on: seeded by ``start``, so a resumed
    build gives the same vectors as an uninterrupted one."""
    rng = np.random.default_rng([0, start])
    vectors = rng.standard_normal((len(chunks), dim)).astype(np.float32)
    for row_i, c in enumerate(chunks):
        base = known.get(text_key(indexed_text(c.title, c.text)))
        if base is not None:
            vectors[row_i] = base + 0.02 * vectors[row_i]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def build_synthetic(
    target: Path,
    docs: list[Document],
    n: int,
    known: dict[str, np.ndarray],
    dim: int,
    batch: int = 5000,
) -> dict[str, float]:
    """An index folder of ``n`` one-chunk documents: real texts, noisy real vectors.

    ``known`` maps the hash of a paragraph's indexed text to its real vector (a
    random one stands in when it is missing). Returns (and writes to
    ``target/build.json``) the seconds each part took; a folder that already holds
    ``n`` chunks is kept (its side indexes added if it predates them).

    The chromadb part is resumable: ``target/building.json`` names the generation
    being filled, and a build stopped part way (killed, out of time) goes on from
    the chunks its collection holds. Progress (chunks, rate, CPU) is printed per batch.
    """
    if holds_count(target, n):
        return ensure_side_indexes(target)
    target.mkdir(parents=True, exist_ok=True)
    marker = target / "building.json"
    state: dict = json.loads(marker.read_text()) if marker.is_file() else {}
    generation = target / str(state.get("generation", ""))
    if state.get("n") != n or not state.get("generation") or not generation.is_dir():
        generation_holds.remove_stale_generations(target, keep=None)
        generation = layout.new_generation(target)
        state = {"n": n, "generation": generation.name, "dense_s": 0.0}
        marker.write_text(json.dumps(state), encoding="utf-8")
    client = open_client(generation / "chroma")
    collection = client.get_or_create_collection(
        COLLECTION, metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    batch = min(batch, client.get_max_batch_size())
    done = collection.count()  # each add is one batch, all or nothing
    if done:
        print(f"  resuming {target}: {done:,} of {n:,} chunks there", flush=True)
    for start in range(done, n, batch):
        mark, cpu = time.perf_counter(), time.process_time()
        chunks = [_synthetic_chunk(docs, i) for i in range(start, min(n, start + batch))]
        collection.add(
            ids=[c.chunk_id for c in chunks],
            documents=[c.text for c in chunks],
            metadatas=[chunk_metadata(c) for c in chunks],
            embeddings=_synthetic_vectors(chunks, start, known, dim),
        )
        took = time.perf_counter() - mark
        state["dense_s"] += took
        marker.write_text(json.dumps(state), encoding="utf-8")
        print(f"  {start + len(chunks):>9,} / {n:,} chunks  {len(chunks) / took:6.0f} chunks/s "
              f"(CPU {time.process_time() - cpu:.1f} s for {len(chunks)})", flush=True)  # fmt: skip
    client.close()
    phases = {"chunks": n, "dense_s": state["dense_s"]}
    mark = time.perf_counter()
    chunks = (_synthetic_chunk(docs, i) for i in range(n))
    ids = [f"syn-{i:06d}#0" for i in range(n)]
    Bm25Index.build(ids, (indexed_text(c.title, c.text) for c in chunks)).save(generation / "bm25")
    phases["bm25_s"] = time.perf_counter() - mark
    print(f"  BM25 side index: {phases['bm25_s']:.0f} s", flush=True)
    mark = time.perf_counter()
    GrepIndex.build(generation / grep_index.FILE, (docs[i % len(docs)].text for i in range(n)))
    phases["grep_s"] = time.perf_counter() - mark
    print(f"  grep side index: {phases['grep_s']:.0f} s", flush=True)
    entries = {
        f"syn-{i:06d}": DocEntry(f"{i:032x}", [f"syn-{i:06d}#0"], "2026-01-01T00:00:00Z")
        for i in range(n)
    }
    manifest = layout.Manifest(FORMAT_VERSION, "bench", "minilm-int8", dim,
                               {"max_tokens": 512, "tokenizer": "o200k_base"}, entries)  # fmt: skip
    layout.write_manifest(generation, manifest)
    mark = time.perf_counter()
    layout.commit_generation(target, generation)  # and the generation's shared read copy
    phases["commit_s"] = time.perf_counter() - mark
    phases["seconds"] = phases["dense_s"] + phases["bm25_s"] + phases["grep_s"] + phases["commit_s"]
    (target / "build.json").write_text(json.dumps(phases, indent=1), encoding="utf-8")
    marker.unlink(missing_ok=True)
    return phases


def holds_count(target: Path, n: int) -> bool:
    try:
        return layout.read_summary(layout.current_generation(target)).chunks == n
    except Exception:  # noqa: BLE001 - not built yet
        return False


def ensure_side_indexes(target: Path) -> dict[str, float]:
    """Add the id table and grep side index to a synthetic index built before them (read
    straight from its chroma sqlite, whose row order is the corpus order); returns the
    build record, with the time this took added."""
    generation = layout.current_generation(target)
    record_path = target / "build.json"
    phases = json.loads(record_path.read_text()) if record_path.is_file() else {}
    bm25_dir = generation / "bm25"
    if load_ids(bm25_dir) is None:
        ids = json.loads((bm25_dir / "ids.json").read_text(encoding="utf-8"))
        save_ids(bm25_dir, ids)
    if GrepIndex.open(generation / grep_index.FILE, len(load_ids(bm25_dir) or ())) is None:
        base = phases.get("seconds", phases.get("total_s", 0.0)) - phases.get("grep_s", 0.0)
        started = time.perf_counter()
        db = sqlite3.connect(
            f"file:{generation / 'chroma' / 'chroma.sqlite3'}?immutable=1", uri=True
        )
        rows = db.execute(
            "SELECT c.c0 FROM embeddings e JOIN embedding_fulltext_search_content c "
            "ON c.id = e.id ORDER BY e.id"
        )
        GrepIndex.build(generation / grep_index.FILE, (text for (text,) in rows))
        db.close()
        phases["grep_s"] = time.perf_counter() - started
        phases["seconds"] = base + phases["grep_s"]
        record_path.write_text(json.dumps(phases, indent=1), encoding="utf-8")
    return phases


def disk_size(path: Path) -> int:
    """Bytes under ``path`` (files only)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@contextmanager
def chroma_server(folder: str) -> Iterator[str]:
    """``chroma run`` on 127.0.0.1 with its data in ``folder``; yields its URL (the tests'
    :class:`ChromaProcess`: it waits until the server answers and stops it on exit)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from index.chroma_server import ChromaProcess

    with ChromaProcess(Path(folder), timeout_s=60.0) as chroma:
        yield chroma.url


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB."""
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024
