"""The embedded index's vectors: saved in corpus order, an HNSW graph (``ann.faiss``)
above ``retrieval.exact_dense_max_chunks`` that answers as the exact scan does on a small
index, and a folder of the previous format rebuilt by the next ingest.

Vectors come from the hashing embedder (no model).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.errors import IndexVersionError
from thresher.index.backends import ingest
from thresher.index.embedded import layout
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.embedded.vectors import ANN, Vectors

from .hash_embedder import HashEmbedder

_GRAPH = Config().override({"retrieval.exact_dense_max_chunks": 0})


def _docs(n: int) -> list[Document]:
    return [
        Document(f"d{i:04d}", f"Town {i}", f"Town {i} keeps a mill built in {1700 + i}.", "test")
        for i in range(n)
    ]


def test_vectors_are_saved_in_corpus_order(tmp_path) -> None:
    ingest(_docs(50), tmp_path, Config(), embedder=HashEmbedder(), progress=False)
    generation = layout.current_generation(tmp_path)
    assert not (generation / ANN).exists()  # small: the exact scan needs no graph
    ids = layout.read_manifest(generation).chunk_ids()
    with EmbeddedStore(tmp_path, Config(), embedder=HashEmbedder()) as store:
        texts = [c.title + "\n" + c.text for c in store.get(ids)]
    assert np.array_equal(Vectors(generation).matrix, HashEmbedder().embed(texts))


def test_above_the_bound_dense_search_reads_the_graph_as_the_scan_would(tmp_path) -> None:
    ingest(_docs(400), tmp_path, _GRAPH, embedder=HashEmbedder(), progress=False)
    assert (layout.current_generation(tmp_path) / ANN).is_file()
    queries = ["Town 12 mill", "a mill built in 1999", "Town 377"]
    with EmbeddedStore(tmp_path, Config(), embedder=HashEmbedder()) as exact:
        expected = [[(h.chunk.chunk_id, round(h.score, 5)) for h in exact.dense_search(q, k=5)]
                    for q in queries]  # fmt: skip
    with EmbeddedStore(tmp_path, _GRAPH, embedder=HashEmbedder()) as graph:
        got = [[(h.chunk.chunk_id, round(h.score, 5)) for h in graph.dense_search(q, k=5)]
               for q in queries]  # fmt: skip
        assert graph.hybrid_search("Town 12 mill", k=3, exclude={"d0012#0"})
    assert got == expected
    ingest(_docs(390), tmp_path, _GRAPH, embedder=HashEmbedder(), progress=False)  # a deletion
    assert (layout.current_generation(tmp_path) / ANN).is_file()


def test_a_folder_of_the_previous_format_is_refused_then_rebuilt(tmp_path) -> None:
    ingest(_docs(20), tmp_path, Config(), embedder=HashEmbedder(), progress=False)
    manifest = layout.current_generation(tmp_path) / layout.MANIFEST
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["format_version"] = 1  # as a thresher that kept a chromadb folder wrote it
    manifest.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(IndexVersionError, match=r"format 1.*thresher index PATH --index"):
        EmbeddedStore(tmp_path, Config(), embedder=HashEmbedder())
    report = ingest(_docs(21), tmp_path, Config(), embedder=HashEmbedder(), progress=False)
    assert report.documents_added == 21  # built anew, not read
    with EmbeddedStore(tmp_path, Config(), embedder=HashEmbedder()) as store:
        assert store.stats().documents == 21 and store.stats().format_version == 2
    assert [p.name for p in Path(tmp_path).glob("gen-*")] == [
        layout.current_generation(tmp_path).name
    ]


_GRAPH_THEN_ONNX = """
import sys
sys.path.insert(0, sys.argv[2])
from hash_embedder import HashEmbedder
from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore
config = Config().override({"retrieval.exact_dense_max_chunks": 0})
docs = [Document(f"d{i}", f"Town {i}", f"Town {i} keeps a mill.", "test") for i in range(50)]
ingest(docs, sys.argv[1], config, embedder=HashEmbedder(), progress=False)  # writes the graph
with EmbeddedStore(sys.argv[1], config, embedder=HashEmbedder()) as store:
    assert store.dense_search("Town 7 mill", k=3)  # reads it
import onnxruntime  # the embedder's runtime, loaded after the graph library
print("ok")
"""


def test_the_graph_library_loads_before_the_embedders_runtime(tmp_path) -> None:
    """An ingest or a search may load the graph library before onnxruntime (a deletion,
    a search with a cached query vector): the process must survive the second load
    (usearch 2.26.6 crashed it there)."""
    import subprocess
    import sys

    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", _GRAPH_THEN_ONNX, str(tmp_path / "i"), here],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0 and done.stdout.split() == ["ok"], done.stderr[-2000:]
