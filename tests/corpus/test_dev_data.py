"""The real development datasets load, pool and chunk (skipped when the data is absent)."""

from __future__ import annotations

import json

import pytest

from devdata import dev_file
from thresher.corpus.chunking import chunk_document
from thresher.corpus.ids import join_sentences, paragraph_doc_id
from thresher.corpus.load_stats import LoadStats
from thresher.corpus.loaders import iter_documents
from thresher.tokens import get_counter

pytestmark = pytest.mark.dev_data


@pytest.mark.parametrize(
    ("name", "dataset", "documents", "questions", "duplicates"),
    [
        ("hotpotqa_rpt_dev.jsonl", "hotpotqa", 2966, 300, 21),
        ("hotpotqa_rpt_train.jsonl", "hotpotqa", 2958, 300, 22),
        ("musique_train_hipporag.json", "musique", 1890, 100, 110),
        ("musique_train_hipporag_corpus.json", "paragraph_corpus", 1890, 0, 0),
    ],
)
def test_dev_file_loads(
    name: str, dataset: str, documents: int, questions: int, duplicates: int
) -> None:
    stats = LoadStats()
    docs = list(iter_documents([dev_file(name)], stats))
    assert len(docs) == documents == stats.documents
    assert stats.questions == questions
    assert stats.skipped.get("duplicate", 0) == duplicates
    assert {d.metadata["dataset"] for d in docs} == {dataset}
    assert {d.source for d in docs} == {name}
    assert len({d.doc_id for d in docs}) == len(docs)


def test_musique_questions_and_hipporag_corpus_share_ids() -> None:
    questions = dev_file("musique_train_hipporag.json")
    corpus = dev_file("musique_train_hipporag_corpus.json")
    corpus_ids = {d.doc_id for d in iter_documents([corpus])}
    stats = LoadStats()
    pooled = list(iter_documents([questions, corpus], stats))
    assert {d.doc_id for d in pooled} == corpus_ids
    assert stats.skipped["duplicate"] == 110 + 1890
    records = json.loads(questions.read_text(encoding="utf-8"))
    gold = [
        paragraph_doc_id(p["title"], p["paragraph_text"])
        for r in records
        for p in r["paragraphs"]
        if p["is_supporting"]
    ]
    assert len(gold) == 237 and all(g in corpus_ids for g in gold)


def test_hotpotqa_gold_paragraphs_map_to_loaded_ids() -> None:
    path = dev_file("hotpotqa_rpt_dev.jsonl")
    ids = {d.doc_id for d in iter_documents([path])}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            context = dict(
                zip(record["context"]["title"], record["context"]["sentences"], strict=True)
            )
            for title in record["supporting_facts"]["title"]:
                assert paragraph_doc_id(title, join_sentences(context[title])) in ids


def test_hotpotqa_pool_chunks_within_budget() -> None:
    counter = get_counter()
    docs = list(iter_documents([dev_file("hotpotqa_rpt_dev.jsonl")]))
    chunks = [c for d in docs for c in chunk_document(d, 128, counter)]
    assert len(chunks) >= len(docs)
    by_id = {d.doc_id: d for d in docs}
    for c in chunks:
        assert by_id[c.doc_id].text[c.start : c.end] == c.text
        assert counter.count(c.text) <= 128
