"""Pooled-corpus index (cached by content) and the per-question restriction."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.tiny_hotpot import write_tiny_hotpot
from thresher.config import Config
from thresher.errors import InputError, UnknownIdError
from thresher.index.backends import open_store
from thresher.index.filtered import FilteredStore
from thresher.index.filters import DocFilter
from thresher.tasks.corpus import (
    corpus_key,
    pooled_index,
    task_corpora,
    task_documents,
)
from thresher.tasks.readers import load_tasks, write_tasks


def test_pooled_corpus_holds_every_question_paragraph_once(tiny_hotpot) -> None:
    tasks_file, _, _ = tiny_hotpot
    docs = list(task_documents([tasks_file]))
    assert len(docs) == 10  # 12 paragraphs, two repeated across questions
    ids = {d.doc_id for d in docs}
    assert all(g in ids for t in load_tasks(tasks_file) for g in t.gold_doc_ids)


def test_pooled_index_is_cached_by_content_and_settings(tiny_hotpot, tmp_path: Path) -> None:
    tasks_file, cache, index = tiny_hotpot
    assert index.parent == cache and index.name == corpus_key([tasks_file])
    assert pooled_index([tasks_file], cache) == index  # reused, not rebuilt
    copy = write_tiny_hotpot(tmp_path / "same.jsonl")
    assert corpus_key([copy]) == corpus_key([tasks_file])  # content, not the path
    assert corpus_key([tasks_file], Config().override({"chunking.max_tokens": 128})) != index.name
    copy.write_text(copy.read_text().replace("glassblower", "potter"))
    assert corpus_key([copy]) != index.name


def test_task_files_without_paragraphs_need_an_index(tmp_path: Path, tiny_hotpot) -> None:
    own = write_tasks(tmp_path / "own.jsonl", load_tasks(tiny_hotpot[0]))
    with pytest.raises(InputError, match="--index"):
        list(task_documents([own]))


def test_per_question_view_shows_only_the_task_paragraphs(tiny_hotpot) -> None:
    tasks_file, _, index = tiny_hotpot
    corpora = task_corpora(tasks_file)
    assert sorted(corpora) == ["q1", "q2", "q3"] and all(len(v) == 4 for v in corpora.values())
    store = open_store(index)
    try:
        view = FilteredStore(store, DocFilter.only(corpora["q2"]))
        hits = view.hybrid_search("Where did the founder of Quill Press study law?", k=10)
        assert {h.chunk.doc_id for h in hits} <= corpora["q2"]
        assert len(hits) == 4  # dense ranks every allowed chunk
        assert hits[0].chunk.doc_id in set(load_tasks(tasks_file)[1].gold_doc_ids)
        assert all(h.bm25_rank is None or h.bm25_score > 0 for h in hits)
        bm25 = view.bm25_search("rowing club Halbeck", k=5)
        assert bm25 == [] or {h.chunk.doc_id for h in bm25} <= corpora["q2"]
        excluded = view.hybrid_search("Quill Press", k=10, exclude=[hits[0].chunk.chunk_id])
        assert hits[0].chunk.chunk_id not in {h.chunk.chunk_id for h in excluded}
        outside = next(iter(corpora["q3"] - corpora["q2"]))
        with pytest.raises(UnknownIdError):
            view.read_document(outside)
        with pytest.raises(UnknownIdError):
            view.get([f"{outside}#0"])
        assert view.grep("rowing").total == 0  # the Halbeck page belongs to q3 only
        assert store.grep("rowing").total > 0
        assert len(view.grep("Halbeck").hits) == 1  # Dana Mohr's page mentions it
        poetry = view.grep("poetry", limit=1)
        assert len(poetry.hits) == 1 and poetry.total == 2 and poetry.cut  # allowed matches
        assert view.stats().documents == 4
        view.close()
        assert store.stats().documents == 10  # the wrapped store stays open
    finally:
        store.close()


def test_per_question_view_fuses_with_the_configured_k(tiny_hotpot) -> None:
    from thresher.index.fusion import rrf_score

    tasks_file, _, index = tiny_hotpot
    corpora = task_corpora(tasks_file)
    for k in (60, 7):  # RetrievalConfig's default, and another
        store = open_store(index, Config().override({"retrieval.rrf_k": k}))
        try:
            view = FilteredStore(store, DocFilter.only(corpora["q2"]))
            hits = view.hybrid_search("Quill Press founder law", k=10)
            assert hits
            for h in hits:
                assert h.score == pytest.approx(rrf_score([h.bm25_rank, h.dense_rank], k))
        finally:
            store.close()


def test_per_question_view_takes_a_filter_inside_its_corpus(tiny_hotpot) -> None:
    """A document filter narrows the per-question view further: searches, grep and
    reads see only the view's documents the filter admits."""
    tasks_file, _, index = tiny_hotpot
    corpora = task_corpora(tasks_file)
    store = open_store(index)
    try:
        view = FilteredStore(store, DocFilter.only(corpora["q2"]))
        keep = sorted(corpora["q2"])[:2]
        only = DocFilter.parse({"doc_id": {"$in": keep}}, None)
        for search in (view.hybrid_search, view.bm25_search, view.dense_search):
            assert {h.chunk.doc_id for h in search("Quill Press poetry", k=20, where=only)} <= set(
                keep
            )
        assert {h.chunk.doc_id for h in view.hybrid_search("Quill Press", k=20, where=only)}
        assert {h.chunk.doc_id for h in view.grep("[a-z]", limit=50, where=only).hits} == set(keep)
        assert view.read_document(keep[0], where=only)
        other = sorted(corpora["q2"])[2]
        with pytest.raises(UnknownIdError):
            view.read_document(other, where=only)
    finally:
        store.close()


def test_ensure_index_never_reuses_a_stale_index(tmp_path: Path, monkeypatch) -> None:
    """train/local's ensure_index keys its index by content and settings, as pooled_index."""
    from thresher.tasks import corpus as corpus_module
    from thresher.train.local.data import ensure_index

    data = write_tiny_hotpot(tmp_path / "tiny_hotpot.jsonl")
    cache = tmp_path / "indexes"
    first = ensure_index([data], cache)
    data.write_text(data.read_text().replace("glassblower", "potter"))
    changed = ensure_index([data], cache)
    store = open_store(changed)
    try:  # the changed data, never the folder built from the old one
        assert store.grep("potter").total > 0 and store.grep("glassblower").total == 0
    finally:
        store.close()
    assert changed != first and changed.parent == first.parent == cache
    assert changed.name == corpus_key([data])
    assert ensure_index([data], cache) == changed  # same data, same settings: reused

    smaller = Config().override({"chunking.max_tokens": 64})
    rechunked = ensure_index([data], cache, smaller)
    assert rechunked not in (first, changed)
    store = open_store(rechunked)
    try:
        assert store.stats().extra["chunking"]["max_tokens"] == 64
    finally:
        store.close()

    def no_build(*args, **kwargs):
        raise AssertionError("an index for this content and these settings exists")

    monkeypatch.setattr(corpus_module, "task_documents", no_build)
    assert ensure_index([data], cache, smaller) == rechunked


def test_pooled_index_of_some_tasks_embeds_only_their_paragraphs(
    tiny_hotpot, tmp_path: Path
) -> None:
    tasks_file, _, _ = tiny_hotpot
    first = load_tasks(tasks_file)[0]
    cache = tmp_path / "cache"
    index = pooled_index([tasks_file], cache, tasks=[first.task_id])
    assert index.name.startswith(corpus_key([tasks_file]) + "-")
    with open_store(index) as store:
        assert store.stats().documents == len(task_corpora(tasks_file)[first.task_id])
    assert pooled_index([tasks_file], cache, tasks=[first.task_id]) == index  # cached
    every = [t.task_id for t in load_tasks(tasks_file)]
    full = pooled_index([tasks_file], cache, tasks=every)  # nothing to leave out
    assert full.name == corpus_key([tasks_file])
    assert pooled_index([tasks_file], cache, tasks=[first.task_id]) == full  # full one preferred
