"""On the real development files: every gold id is a document id of the index.

The corpus loader indexes the same file (and, for MuSiQue, the HippoRAG corpus
file of the same questions); every gold document of every task must be among
the ids it produces. Skips when the development data is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devdata import dev_file
from thresher.tasks.readers import read_tasks

loaders = pytest.importorskip("thresher.corpus.loaders")

pytestmark = pytest.mark.dev_data

CASES = [
    # (question file, files to index, expected tasks)
    ("hotpotqa_rpt_dev.jsonl", ["hotpotqa_rpt_dev.jsonl"], 300),
    ("hotpotqa_rpt_train.jsonl", ["hotpotqa_rpt_train.jsonl"], 300),
    ("musique_train_hipporag.json", ["musique_train_hipporag.json"], 100),
    ("musique_train_hipporag.json", ["musique_train_hipporag_corpus.json"], 100),
]


def _doc_ids(files: list[Path]) -> set[str]:
    return {doc.doc_id for doc in loaders.iter_documents(files)}


@pytest.mark.parametrize(("questions", "corpus", "n_tasks"), CASES)
def test_every_gold_id_is_indexed(questions: str, corpus: list[str], n_tasks: int) -> None:
    result = read_tasks(dev_file(questions))
    assert len(result.tasks) == n_tasks and result.skipped == {}
    doc_ids = _doc_ids([dev_file(name) for name in corpus])
    missing = [(t.task_id, g) for t in result.tasks for g in t.gold_doc_ids if g not in doc_ids]
    assert missing == []


def test_dev_task_shapes() -> None:
    hotpot = read_tasks(dev_file("hotpotqa_rpt_dev.jsonl")).tasks
    assert all(len(t.gold_doc_ids) == 2 for t in hotpot)
    for t in hotpot:
        expected_hops = 1 if t.metadata["type"] == "comparison" else 2
        assert len(t.hops) == expected_hops and t.final_doc_ids
    musique = read_tasks(dev_file("musique_train_hipporag.json")).tasks
    hop_counts = sorted(len(t.hops) for t in musique)
    assert (hop_counts.count(2), hop_counts.count(3), hop_counts.count(4)) == (68, 27, 5)
    assert all(len(t.final_doc_ids) == 1 and t.final_doc_ids == t.hops[-1] for t in musique)
