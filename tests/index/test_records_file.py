"""The embedded index's own chunk records: searches and reads answer from them with each
chunk as it was indexed (text and metadata of every kind), a ``where`` selects the
chunks chromadb's ``where`` selects on the same metadata, and no read imports chromadb.

Vectors come from the hashing embedder (no model).
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
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.filters import DocFilter

from .hash_embedder import HashEmbedder

_HERE = Path(__file__).resolve().parent


def _docs(n: int) -> list[Document]:
    out = []
    for i in range(n):
        meta = {"year": 1700 + i % 300, "lang": "en" if i % 2 else "fr", "share": i / 7,
                "listed": i % 3 == 0, "tags": ["mill", f"t{i % 5}"]}  # fmt: skip
        text = f"Town {i} keeps a mill built in {1700 + i % 300}. Its harbour faces the river."
        out.append(Document(f"d{i:05d}", f"Town {i}", text, "test", meta))
    return out


@pytest.fixture
def index_dir(tmp_path) -> Path:
    where = tmp_path / "index"
    ingest(_docs(300), where, Config(), embedder=HashEmbedder(), progress=False)
    return where


def test_reads_and_searches_return_each_chunk_as_indexed(index_dir) -> None:
    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        [chunk] = store.get(["d00007#0"])
        assert chunk.metadata == {"year": 1707, "lang": "en", "share": 1.0,
                                  "listed": False, "tags": ["mill", "t2"]}  # fmt: skip
        assert (chunk.doc_id, chunk.title, chunk.position) == ("d00007", "Town 7", 0)
        assert chunk.text == "Town 7 keeps a mill built in 1707. Its harbour faces the river."
        assert store.read_document("d00007") == [chunk]
        hit = store.bm25_search("Town 7 mill 1707", k=1)[0]
        assert hit.chunk == chunk
        assert store.grep(r"Town 7 keeps", limit=1).hits[0].chunk == chunk
        listed = {d.doc_id: d for d in store.list_documents()}
        assert listed["d00007"].metadata == chunk.metadata and len(listed) == 300


_WHERES = [
    {"lang": "en"},
    {"year": {"$gte": 1750}},
    {"year": {"$lt": 1710}},
    {"year": 1705.0},
    {"share": {"$gt": 10.5}},
    {"listed": True},
    {"listed": {"$ne": True}},
    {"lang": {"$in": ["fr"]}},
    {"lang": {"$nin": ["fr"]}},
    {"year": {"$in": [1701, 1702]}},
    {"$or": [{"lang": "fr"}, {"year": 1701}]},
    {"$and": [{"lang": "en"}, {"listed": False}, {"year": {"$lte": 1800}}]},
    {"missing": "x"},
    {"missing": {"$ne": "x"}},
    {"title": "Town 3"},
    {"doc_id": {"$in": ["d00003", "d00299"]}},
]


def test_a_where_selects_what_chromadbs_where_selects(index_dir, tmp_path) -> None:
    """The same chunk metadata in a chromadb collection: every ``where`` admits the same
    chunks (the reference thresher's filters were written against)."""
    import chromadb
    from chromadb.config import Settings

    with EmbeddedStore(index_dir, Config(), embedder=HashEmbedder()) as store:
        source = store._view().source
        ids = list(store._view().bm25.id_list)
        records = {r[0]: r for r in source.records.rows(ids)}  # type: ignore[attr-defined]
        client = chromadb.PersistentClient(
            path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
        )
        try:
            import json

            collection = client.create_collection("chunks", embedding_function=None)
            collection.add(ids=ids, embeddings=[[1.0, 0.0]] * len(ids),
                           metadatas=[json.loads(records[c][3]) for c in ids])  # fmt: skip
            for where in _WHERES:
                translated = DocFilter.parse(where, None).chroma_where()
                expected = set(collection.get(where=translated, include=[])["ids"])
                assert source.matching(translated) == expected, where
        finally:
            client.close()


_SEARCH = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(_HERE)!r})
    from hash_embedder import HashEmbedder
    import thresher
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.index.filters import DocFilter
    store = EmbeddedStore(sys.argv[1], Config(), embedder=HashEmbedder())
    result = thresher.search("Which town keeps a mill built in 1742?", index=store)
    assert result.documents, result.exit_reason
    assert store.read_document("d00042") and store.grep("harbour", limit=2).hits
    assert store.grep(r"\\d", limit=2).hits and store.list_documents()
    hits = store.hybrid_search("mill", k=3, where=DocFilter.parse('{{"lang": "fr"}}', None))
    assert hits and all(h.chunk.metadata["lang"] == "fr" for h in hits)
    print("chromadb" in sys.modules)
    store.close()
""")


def test_nothing_a_reader_does_imports_chromadb(index_dir) -> None:
    """An episode of the local policy, reads, greps, a listing and a filter."""
    done = subprocess.run([sys.executable, "-c", _SEARCH, str(index_dir)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
