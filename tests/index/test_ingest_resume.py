"""A long ingest commits as it goes: an interrupted first ingest resumes, never from zero."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.index.backends import ingest
from thresher.index.embedded import ingest as ingest_module
from thresher.index.embedded import layout
from thresher.index.embedded.ingest import commit_parts

from .helpers import InterruptingEmbedder, numbered_docs


def test_commit_parts_grow_with_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_module, "COMMIT_CHUNKS", 4)
    assert commit_parts([1] * 10) == [(0, 4), (4, 8), (8, 10)]
    assert commit_parts([1] * 10, indexed=40) == [(0, 10)]  # a quarter of 40: one part
    assert commit_parts([5, 5, 5]) == [(0, 1), (1, 2), (2, 3)]
    assert commit_parts([]) == [(0, 0)]


def test_an_interrupted_first_ingest_resumes_from_its_last_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_module, "COMMIT_CHUNKS", 4)
    index = tmp_path / "index"
    docs = numbered_docs(20)
    with pytest.raises(KeyboardInterrupt):  # 2 texts per call: stopped in the 5th part
        ingest(docs, index, Config(), embedder=InterruptingEmbedder(stop_at=9), progress=False)
    kept = layout.read_manifest(layout.current_generation(index)).documents
    assert list(kept) == [d.doc_id for d in docs[:16]]  # four parts of 4 committed
    again = InterruptingEmbedder()
    report = ingest(docs, index, Config(), embedder=again, progress=False)
    assert again.texts == 4  # only what the last commit lacked
    assert (report.documents_added, report.documents_unchanged) == (4, 16)
    manifest = layout.read_manifest(layout.current_generation(index))
    assert list(manifest.documents) == [d.doc_id for d in docs]
    assert len([p for p in index.iterdir() if p.name.startswith("gen-")]) == 1


def test_a_change_of_chunking_is_committed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    docs = numbered_docs(12)
    ingest(docs, index, Config(), embedder=InterruptingEmbedder(), progress=False)
    monkeypatch.setattr(ingest_module, "COMMIT_CHUNKS", 4)
    smaller = Config().override({"chunking.max_tokens": 128})
    edited = [Document(d.doc_id, d.title, d.text + " Edited.", source="t") for d in docs]
    with pytest.raises(KeyboardInterrupt):  # parts would have committed after 2 calls
        ingest(edited, index, smaller, embedder=InterruptingEmbedder(stop_at=5), progress=False)
    manifest = layout.read_manifest(layout.current_generation(index))
    assert manifest.chunking["max_tokens"] == Config().chunking.max_tokens  # all or nothing
