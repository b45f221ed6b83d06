"""``bench/synthetic.py``'s scale-index build writes an index the embedded store opens,
holding the vectors it was given, and a second build of a complete folder keeps it.
Times nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.embedded import layout
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.embedded.vectors import Vectors

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _synthetic():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_synthetic", BENCH / "synthetic.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


class _Fixed:
    """An 8-d query embedder (any fixed vector will do: the test reads, not ranks)."""

    name, dimension = "minilm-int8", 8

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return np.ones((len(texts), 8), dtype=np.float32)


def test_a_synthetic_build_is_an_index_holding_its_vectors(tmp_path):
    syn = _synthetic()
    docs = [Document(f"p{i}", f"Place {i}", f"Place {i} has a bridge built in {1800 + i}.", "test")
            for i in range(40)]  # fmt: skip
    target = tmp_path / "syn"
    phases = syn.build_synthetic(target, docs, 250, {}, 8, batch=100)
    assert phases["chunks"] == 250 and syn.holds_count(target, 250)
    chunks = [syn._synthetic_chunk(docs, i) for i in range(250)]
    expected = np.vstack([syn._synthetic_vectors(chunks[i : i + 100], i, {}, 8)
                          for i in range(0, 250, 100)])  # fmt: skip
    matrix = np.asarray(Vectors(layout.current_generation(target)).matrix)
    assert np.array_equal(matrix, expected)
    with EmbeddedStore(target, Config(), embedder=_Fixed()) as store:  # type: ignore[arg-type]
        assert store.stats().chunks == 250
        assert store.get(["syn-000007#0"])[0].text == chunks[7].text
        assert store.grep("bridge built in 1807", limit=3).hits
    assert syn.build_synthetic(target, docs, 250, {}, 8) == phases  # kept, not rebuilt
