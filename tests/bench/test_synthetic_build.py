"""``bench/synthetic.py``'s scale-index build: a build stopped part way resumes from the
chunks its collection holds and ends as an uninterrupted build does. Times nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from thresher.corpus.document import Document
from thresher.index.embedded import layout
from thresher.index.embedded.collection import open_client
from thresher.index.manifest import COLLECTION

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


def _vectors(index: Path) -> dict[str, list[float]]:
    client = open_client(layout.current_generation(index) / "chroma")
    try:
        got = client.get_collection(COLLECTION).get(include=["embeddings"])
        return {
            i: np.asarray(v).tolist() for i, v in zip(got["ids"], got["embeddings"], strict=True)
        }
    finally:
        client.close()


def test_a_stopped_build_resumes_and_matches_an_uninterrupted_one(tmp_path, monkeypatch):
    monkeypatch.setenv("THRESHER_READ_COPIES", str(tmp_path / "copies"))
    syn = _synthetic()
    docs = [Document(f"p{i}", f"Place {i}", f"Place {i} has a bridge built in {1800 + i}.", "test")
            for i in range(40)]  # fmt: skip
    straight = tmp_path / "straight"
    syn.build_synthetic(straight, docs, 250, {}, 8, batch=100)

    stopped = tmp_path / "stopped"
    real = syn._synthetic_vectors
    calls = []

    def dies_on_the_third_batch(chunks, start, known, dim):
        calls.append(start)
        if len(calls) == 3:
            raise KeyboardInterrupt("stopped")
        return real(chunks, start, known, dim)

    monkeypatch.setattr(syn, "_synthetic_vectors", dies_on_the_third_batch)
    with pytest.raises(KeyboardInterrupt):
        syn.build_synthetic(stopped, docs, 250, {}, 8, batch=100)
    assert (stopped / "building.json").is_file() and not (stopped / "CURRENT").exists()
    monkeypatch.setattr(syn, "_synthetic_vectors", real)
    phases = syn.build_synthetic(stopped, docs, 250, {}, 8, batch=100)
    assert phases["chunks"] == 250 and not (stopped / "building.json").exists()
    assert syn.holds_count(stopped, 250)
    assert _vectors(stopped) == _vectors(straight)
