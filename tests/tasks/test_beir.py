"""BEIR dataset folders as tasks, on a tiny invented dataset written to tmp_path.

The corpus is indexed for real (the default embedder), and every gold id of every
task must be a document id of that index.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from thresher.config import Config
from thresher.corpus.loaders import iter_documents
from thresher.errors import InputError
from thresher.tasks.beir import beir_source, read_beir_qrels
from thresher.tasks.readers import load_tasks, read_tasks

CORPUS = [
    {"_id": "kelp-1", "title": "Kelp farming", "text": "Kelp farms on the Kessel coast grow "
     "sugar kelp on ropes.", "metadata": {"year": 2019}},
    {"_id": "kelp-2", "title": "Kelp drying", "text": "Dried kelp from Tarrow is sold as feed."},
    {"_id": "pier-7", "title": "Kessel Pier", "text": "Kessel Pier was built in 1881 from oak."},
    {"_id": "lake", "title": "", "text": "Sable Lake freezes every winter."},
    {"_id": "5", "title": "Numbers", "text": "A document whose id looks like a number."},
]  # fmt: skip
QUERIES = [
    {"_id": "q1", "text": "Where is sugar kelp farmed?", "metadata": {"topic": "kelp"}},
    {"_id": "q2", "text": "When was Kessel Pier built?"},
    {"_id": "q3", "text": "Does Sable Lake freeze?"},  # judged, but not relevant
    {"_id": "q4", "text": "Which lake has skaters?"},  # not judged at all
    {"_id": "5", "text": "A query whose id is also a document id."},
]
TEST_QRELS = [("q1", "kelp-2", 1), ("q1", "kelp-1", 2), ("q2", "pier-7", 1),
              ("q3", "lake", 0), ("5", "5", 1)]  # fmt: skip
DEV_QRELS = [("q3", "lake", 1)]


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _qrels(path: Path, rows: list[tuple[str, str, int]], header: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["query-id\tcorpus-id\tscore"] if header else []
    lines += [f"{q}\t{d}\t{s}" for q, d, s in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_beir(root: Path) -> Path:
    """The invented BEIR dataset: corpus, queries, a test and a dev split."""
    _jsonl(root / "corpus.jsonl", CORPUS)
    _jsonl(root / "queries.jsonl", QUERIES)
    _qrels(root / "qrels" / "test.tsv", TEST_QRELS)
    _qrels(root / "qrels" / "dev.tsv", DEV_QRELS)
    return root


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tinyset")


def test_folder_reads_the_test_split(beir: Path) -> None:
    result = read_tasks(beir)
    assert result.format == "beir" and result.records == 5
    assert result.skipped == {"no_gold": 2}  # q3 (score 0) and q4 (no row)
    q1, q2, q5 = result.tasks
    assert (q1.task_id, q1.question, q1.answer) == ("q1", "Where is sugar kelp farmed?", "")
    assert q1.gold_doc_ids == ["kelp-1", "kelp-2"]  # higher score first
    assert (q1.hops, q1.final_doc_ids, q1.bridge_doc_ids) == ([], [], [])
    assert q1.dataset == "beir/tinyset"
    assert q1.metadata == {
        "split": "test",
        "relevance": {"kelp-1": 2, "kelp-2": 1},
        "query_metadata": {"topic": "kelp"},
    }
    assert (q2.gold_doc_ids, q5.task_id, q5.gold_doc_ids) == (["pier-7"], "5", ["5"])


def test_every_way_to_name_a_split(beir: Path) -> None:
    test_ids = ["q1", "q2", "5"]
    assert [t.task_id for t in load_tasks(beir / "queries.jsonl")] == test_ids
    assert [t.task_id for t in load_tasks(beir / "qrels" / "test.tsv")] == test_ids
    for dev in (f"{beir}::dev", beir / "qrels" / "dev.tsv"):
        (task,) = load_tasks(dev)
        assert (task.task_id, task.gold_doc_ids, task.metadata["split"]) == ("q3", ["lake"], "dev")
    source = beir_source(f"{beir}::dev")
    assert source is not None and source.corpus == beir / "corpus.jsonl"
    assert beir_source(beir.parent) is None and beir_source(beir / "corpus.jsonl") is None


@pytest.mark.slow
def test_gold_ids_are_the_ids_of_the_indexed_corpus(beir: Path, tmp_path: Path) -> None:
    from thresher.index.backends import ingest, open_store
    from thresher.tasks.corpus import task_documents

    index = tmp_path / "index"
    ingest(iter_documents([beir / "corpus.jsonl"]), index, Config(), progress=False)
    store = open_store(index)
    try:
        assert store.stats().documents == len(CORPUS)
        for task in load_tasks(beir) + load_tasks(f"{beir}::dev"):
            for gold in task.gold_doc_ids:
                chunks = store.read_document(gold)
                assert chunks and chunks[0].doc_id == gold
        (hit, *_) = store.hybrid_search("Kessel Pier oak 1881", k=3)
        assert hit.chunk.doc_id == "pier-7" and hit.chunk.title == "Kessel Pier"
    finally:
        store.close()
    # the pooled corpus of the folder: corpus.jsonl only, never the queries
    assert sorted(d.doc_id for d in task_documents([beir])) == sorted(r["_id"] for r in CORPUS)


def test_qrels_header_is_optional_and_bad_rows_name_the_line(tmp_path: Path) -> None:
    plain = _qrels(tmp_path / "a.tsv", [("q", "d", 1), ("q", "e", 0)], header=False)
    assert read_beir_qrels(plain) == {"q": {"d": 1, "e": 0}}
    spaced = tmp_path / "b.tsv"
    spaced.write_text("query-id corpus-id score\n\nq d 2\n", encoding="utf-8")
    assert read_beir_qrels(spaced) == {"q": {"d": 2}}
    bad = tmp_path / "c.tsv"
    bad.write_text("query-id\tcorpus-id\tscore\nq\td\thigh\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.tsv:2: score 'high' is not an integer"):
        read_beir_qrels(bad)
    bad.write_text("q\td\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.tsv:1: expected 3 fields"):
        read_beir_qrels(bad)


def test_bad_paths_and_queries_say_what_to_do(beir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no qrels/train\.tsv \(splits: dev, test\)"):
        load_tasks(f"{beir}::train")
    with pytest.raises(InputError, match="not a BEIR dataset folder"):
        load_tasks(f"{tmp_path}::dev")
    with pytest.raises(InputError, match="a folder, not a task file"):
        load_tasks(tmp_path)
    (beir / "qrels" / "test.tsv").unlink()
    with pytest.raises(InputError, match=r"no qrels/test\.tsv \(splits: dev\); name one as"):
        load_tasks(beir)
    _qrels(beir / "qrels" / "test.tsv", TEST_QRELS)
    _jsonl(beir / "queries.jsonl", [*QUERIES, {"_id": "q1", "text": "again"}])
    with pytest.raises(InputError, match=r"queries\.jsonl:6: query id 'q1' repeats .*:1"):
        load_tasks(beir)
    _jsonl(beir / "queries.jsonl", [{"text": "no id"}])
    with pytest.raises(InputError, match=r"queries\.jsonl:1: BEIR query has no '_id'"):
        load_tasks(beir)


def test_queries_without_their_folder_are_explained(beir: Path, tmp_path: Path) -> None:
    alone = _jsonl(tmp_path / "queries.jsonl", QUERIES)
    with pytest.raises(InputError, match=r"queries\.jsonl:1: not a task record .*BEIR"):
        load_tasks(alone)


def test_unjudged_qrels_queries_are_logged(beir: Path, caplog: pytest.LogCaptureFixture) -> None:
    _qrels(beir / "qrels" / "test.tsv", [*TEST_QRELS, ("q9", "lake", 1)])
    with caplog.at_level(logging.WARNING):
        assert len(load_tasks(beir)) == 3
    assert "1 judged query id(s) are not in" in caplog.text and "no_gold" in caplog.text


def test_corpus_helpers_explain_what_a_beir_split_needs(beir: Path) -> None:
    from thresher.tasks.corpus import task_corpora, task_documents

    with pytest.raises(InputError, match="no per-question documents"):
        task_corpora(beir)
    # every way of naming a split pools the folder's corpus.jsonl
    for named in (beir, f"{beir}::dev", beir / "qrels" / "dev.tsv", beir / "queries.jsonl"):
        assert sorted(d.doc_id for d in task_documents([named])) == sorted(r["_id"] for r in CORPUS)


def test_eval_on_a_beir_folder_leaves_answer_metrics_undefined(
    beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """BEIR queries have no answer string: answer metrics are left out, not scored 0."""
    from thresher.cli.main import main

    out = tmp_path / "out"
    argv = ["eval", "--a", "bm25", "--b", "single-shot", f"{beir}::test", "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--resamples", "200", "--json"]  # fmt: skip
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["n_tasks"] == 3
    assert "answer_found" not in summary["means"]["a"]
    assert summary["means"]["a"]["recall@5"]["mean"] > 0.5
    rows = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert all(r["a"]["metrics"]["answer_found"] is None for r in rows)
