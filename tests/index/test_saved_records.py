"""A small index is searched and read from its side files, without chromadb: the chunk
records saved with the shared read copy answer exactly as chromadb does, and a process
that only searches never imports chromadb.

The index holds 1200 chunks (past chromadb's HNSW ``sync_threshold``, so its read copy
is shared and holds the saved vectors and records, as ``test_read_copies.py`` says),
with user metadata of every kind; vectors come from the hashing embedder (no model).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.embedded.saved_records import RECORDS
from thresher.index.embedded.store import EmbeddedStore

from .hash_embedder import HashEmbedder

_HERE = Path(__file__).resolve().parent
_QUERIES = ["mill built in 1742", "Town 12 river", "harbour of town 901", "bridge 1999"]


def _docs(n: int) -> list[Document]:
    out = []
    for i in range(n):
        meta = {"year": 1700 + i % 300, "lang": "en" if i % 2 else "fr", "share": i / 7,
                "listed": i % 3 == 0, "tags": ["mill", f"t{i % 5}"]}  # fmt: skip
        text = f"Town {i} keeps a mill built in {1700 + i % 300}. Its harbour faces the river."
        out.append(Document(f"d{i:05d}", f"Town {i}", text, "test", meta))
    return out


@pytest.fixture
def index_dir(tmp_path, copies) -> Path:
    where = tmp_path / "index"
    ingest(_docs(1200), where, Config(), embedder=HashEmbedder(), progress=False)
    return where


def _answers(store: EmbeddedStore) -> list[object]:
    """What searches and reads return, chunks whole (text and metadata included)."""
    out: list[object] = []
    for q in _QUERIES:
        out.append([(h.chunk, h.score, h.bm25_rank, h.dense_rank) for h in
                    store.hybrid_search(q, k=20, exclude={"d00012#0"})])  # fmt: skip
        out.append([(h.chunk, h.score) for h in store.dense_search(q, k=10)])
        out.append([(h.chunk, h.score) for h in store.bm25_search(q, k=10)])
        out.append(store.similarity(q, ["d00003#0", "d00777#0"]))
    out.append(store.get(["d00007#0", "d01199#0", "d00007#0"]))
    out.append(store.read_document("d00042"))
    found = store.grep(r"Town 11\d\b", limit=5)
    out.append(([h.chunk for h in found.hits], found.total, found.capped))
    return out


def test_saved_records_answer_exactly_as_chromadb(index_dir, copies) -> None:
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        saved = _answers(store)
        assert not store._view().source.opened  # every answer came from the side files
    [shared] = [p for p in copies.iterdir() if p.name.startswith("thresher-gen-")]
    (shared / RECORDS).unlink()  # no saved records: chromadb reads the chunks
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        read = _answers(store)
        assert store._view().source.opened
    assert saved == read
    assert saved[-3][0].metadata == {"year": 1707, "lang": "en", "share": 1.0,
                                     "listed": False, "tags": ["mill", "t2"]}  # fmt: skip


_SEARCH = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(_HERE)!r})
    from hash_embedder import HashEmbedder
    import thresher
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    store = EmbeddedStore(sys.argv[1], Config(), embedder=HashEmbedder())
    result = thresher.search("Which town keeps a mill built in 1742?", index=store)
    assert result.documents, result.exit_reason
    assert store.read_document("d00042") and store.grep("harbour", limit=2).hits
    print("chromadb" in sys.modules)
    hits = store.hybrid_search("mill", k=3, where=__import__("thresher.index.filters",
        fromlist=["DocFilter"]).DocFilter.parse('{{"lang": "fr"}}', None))
    assert hits and all(h.chunk.metadata["lang"] == "fr" for h in hits)
    print("chromadb" in sys.modules)
    store.close()
""")


def test_a_search_on_a_small_index_never_imports_chromadb(index_dir, copies) -> None:
    """A full episode of the local policy, a read and a grep leave chromadb unimported;
    a filter, which chromadb evaluates, opens it then."""
    import os

    env = {**os.environ, "THRESHER_READ_COPIES": str(copies)}
    done = subprocess.run([sys.executable, "-c", _SEARCH, str(index_dir)], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_a_damaged_records_file_is_read_through_chromadb(index_dir, copies) -> None:
    [shared] = [p for p in copies.iterdir() if p.name.startswith("thresher-gen-")]
    (shared / RECORDS).write_bytes(b"\x00" * 512)
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        assert store.get(["d00005#0"])[0].metadata["year"] == 1705
        assert store._view().records is None and store._view().source.opened
