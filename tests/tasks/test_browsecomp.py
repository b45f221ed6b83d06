"""BrowseComp-Plus loaders on an invented sample in the dataset's public format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.errors import InputError
from thresher.tasks.browsecomp import (
    iter_browsecomp_corpus,
    iter_query_documents,
    load_browsecomp_tsv,
)
from thresher.tasks.corpus import task_corpora
from thresher.tasks.readers import read_tasks

QUERIES = [
    {
        "query_id": "101",
        "query": "Which lighthouse keeper later wrote a cookbook?",
        "answer": "Mira Olsen",
        "evidence_docs": [{"docid": "d-1", "text": "The keeper was Mira Olsen.", "url": "http://a"},
                          {"docid": "d-2", "text": "Olsen's cookbook appeared in 1990."}],
        "gold_docs": [{"docid": "d-2", "text": "Olsen's cookbook appeared in 1990."}],
        "negative_docs": [{"docid": "d-9", "text": "A different lighthouse."}],
    },
    {
        "query_id": "102",
        "query": "Who painted the blue barn?",
        "answer": "T. Ek",
        "evidence_docs": [{"docid": "d-3", "text": "T. Ek painted a barn blue."}],
        "gold_docs": [{"docid": "d-3", "text": "T. Ek painted a barn blue."}],
        "negative_docs": [],
    },
]  # fmt: skip


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_decrypted_query_file_reads_as_tasks(tmp_path: Path) -> None:
    result = read_tasks(_write_jsonl(tmp_path / "bc.jsonl", QUERIES))
    assert result.format == "browsecomp"
    t = result.tasks[0]
    assert (t.task_id, t.answer, t.dataset) == ("101", "Mira Olsen", "browsecomp-plus")
    assert t.gold_doc_ids == ["d-1", "d-2"]
    assert t.final_doc_ids == ["d-2"]
    assert t.hops == []
    assert t.metadata["negative_doc_ids"] == ["d-9"]
    assert task_corpora(tmp_path / "bc.jsonl") == {
        "101": frozenset({"d-1", "d-2", "d-9"}),
        "102": frozenset({"d-3"}),
    }


def test_query_documents_pool_every_listed_document_once(tmp_path: Path) -> None:
    docs = list(iter_query_documents(_write_jsonl(tmp_path / "bc.jsonl", QUERIES)))
    assert [d.doc_id for d in docs] == ["d-1", "d-2", "d-9", "d-3"]
    assert docs[0].metadata["url"] == "http://a" and docs[0].title == "http://a"


def test_corpus_jsonl(tmp_path: Path) -> None:
    rows = [{"docid": "d-1", "text": "one", "url": "http://x"}, {"docid": "d-2", "text": "two"},
            {"docid": "d-1", "text": "one"}]  # fmt: skip
    docs = list(iter_browsecomp_corpus(_write_jsonl(tmp_path / "corpus.jsonl", rows)))
    assert [(d.doc_id, d.text) for d in docs] == [("d-1", "one"), ("d-2", "two")]
    _write_jsonl(tmp_path / "bad.jsonl", [{"text": "no id"}])
    with pytest.raises(InputError, match=r"bad.jsonl:1: .*docid"):
        list(iter_browsecomp_corpus(tmp_path / "bad.jsonl"))


def test_tsv_and_qrels(tmp_path: Path) -> None:
    (tmp_path / "queries.tsv").write_text(
        "101\tWhich keeper?\n102\tWho painted?\n103\tNo judgments\n"
    )
    (tmp_path / "qrel_evidence.txt").write_text("101 0 d-1 1\n101 0 d-2 1\n102 0 d-3 1\n")
    (tmp_path / "qrel_golds.txt").write_text("101 0 d-2 1\n102 0 d-3 1\n")
    tasks = load_browsecomp_tsv(
        tmp_path / "queries.tsv", tmp_path / "qrel_evidence.txt", tmp_path / "qrel_golds.txt",
        {"101": "Mira Olsen"},
    )  # fmt: skip
    assert [t.task_id for t in tasks] == ["101", "102"]
    assert tasks[0].gold_doc_ids == ["d-1", "d-2"] and tasks[0].final_doc_ids == ["d-2"]
    assert tasks[0].answer == "Mira Olsen" and tasks[1].answer == ""
    (tmp_path / "bad.tsv").write_text("101 no tab\n")
    with pytest.raises(InputError, match=r"bad.tsv:1"):
        load_browsecomp_tsv(tmp_path / "bad.tsv", tmp_path / "qrel_evidence.txt")


def test_record_without_docid_is_refused(tmp_path: Path) -> None:
    rows = [{**QUERIES[0], "evidence_docs": [{"text": "x"}]}]
    with pytest.raises(InputError, match=r"evidence_docs\[0\]"):
        read_tasks(_write_jsonl(tmp_path / "bc.jsonl", rows))


def test_corpus_lines_with_bad_bytes_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"docid": "1", "text": "ok"}\n{"docid": "2", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: invalid UTF-8 at byte offset"):
        list(iter_browsecomp_corpus(path))
