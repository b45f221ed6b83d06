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
from thresher.index.embedded import holds as generation_holds
from thresher.index.embedded import layout
from thresher.index.embedded.records_file import RECORDS, RecordsFile
from thresher.index.embedded.vectors import Vectors
from thresher.index.embedded.writer import NewChunks, write_generation
from thresher.index.ingest.common import document_hash
from thresher.index.manifest import FOLDER_FORMAT, DocEntry
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
        generation = layout.current_generation(index_dir)
        ids = layout.read_manifest(generation).chunk_ids()
        records = RecordsFile.open(generation / RECORDS, len(ids))
        assert records is not None, f"{generation}: no records"
        matrix = Vectors(generation).matrix
        row = {cid: i for i, cid in enumerate(ids)}
        for cid, _doc, text, meta in records.rows(ids):
            key = text_key(indexed_text(str(json.loads(meta).get("title", "")), text))
            self.known[key] = np.asarray(matrix[row[cid]], dtype=np.float32)

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
    """The vectors of the chunks from ``start`` on (seeded by ``start``: the same on
    every build)."""
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
    ``n`` chunks is kept. Written as an ingest writes a generation
    (:func:`thresher.index.embedded.writer.write_generation`: records, vectors, the
    HNSW graph above ``retrieval.exact_dense_max_chunks``, BM25, grep), the vectors
    given instead of embedded. Progress (chunks, rate, CPU) is printed per batch.
    """
    if holds_count(target, n):
        record = target / "build.json"
        return json.loads(record.read_text()) if record.is_file() else {"chunks": n}
    target.mkdir(parents=True, exist_ok=True)
    generation_holds.remove_stale_generations(target, keep=None)
    generation = layout.new_generation(target)
    new = NewChunks()
    mark = time.perf_counter()
    for start in range(0, n, batch):
        cpu = time.process_time()
        chunks = [_synthetic_chunk(docs, i) for i in range(start, min(n, start + batch))]
        new.add(
            [c.chunk_id for c in chunks],
            [c.text for c in chunks],
            [chunk_metadata(c) for c in chunks],
            _synthetic_vectors(chunks, start, known, dim),
        )
        print(f"  {start + len(chunks):>9,} / {n:,} chunks  "
              f"(CPU {time.process_time() - cpu:.1f} s for {len(chunks)})", flush=True)  # fmt: skip
    phases: dict[str, float] = {"chunks": n, "vectors_s": time.perf_counter() - mark}
    mark = time.perf_counter()
    ids = [f"syn-{i:06d}#0" for i in range(n)]
    ann = n > Config().retrieval.exact_dense_max_chunks
    write_generation(generation, ids, new, None, dim, ann=ann)
    phases["write_s"] = time.perf_counter() - mark
    print(f"  records, vectors{', HNSW' if ann else ''}, BM25, grep: "
          f"{phases['write_s']:.0f} s", flush=True)  # fmt: skip
    entries = {
        f"syn-{i:06d}": DocEntry(f"{i:032x}", [f"syn-{i:06d}#0"], "2026-01-01T00:00:00Z")
        for i in range(n)
    }
    manifest = layout.Manifest(FOLDER_FORMAT, "bench", "minilm-int8", dim,
                               {"max_tokens": 512, "tokenizer": "o200k_base"}, entries)  # fmt: skip
    layout.write_manifest(generation, manifest)
    mark = time.perf_counter()
    layout.commit_generation(target, generation)
    phases["commit_s"] = time.perf_counter() - mark
    phases["seconds"] = phases["vectors_s"] + phases["write_s"] + phases["commit_s"]
    (target / "build.json").write_text(json.dumps(phases, indent=1), encoding="utf-8")
    return phases


def holds_count(target: Path, n: int) -> bool:
    try:
        return layout.read_summary(layout.current_generation(target)).chunks == n
    except Exception:  # noqa: BLE001 - not built yet
        return False


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
