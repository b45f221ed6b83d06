"""Task loaders on tiny invented samples of every format, written to tmp_path.

Every dataset sample is also indexed by the real corpus loader, and each gold id
must be one of the document ids it produces.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from thresher.corpus.ids import join_sentences, paragraph_doc_id
from thresher.corpus.loaders import iter_documents
from thresher.errors import InputError
from thresher.tasks.readers import (
    detect_task_format,
    load_qrels,
    load_tasks,
    read_tasks,
    tasks_to_qrels,
    write_tasks,
)
from thresher.tasks.task import Task


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _assert_gold_indexed(path: Path, tasks: list[Task]) -> None:
    doc_ids = {d.doc_id for d in iter_documents([path])}
    for task in tasks:
        assert set(task.gold_doc_ids) <= doc_ids, task.task_id
        assert {d for hop in task.hops for d in hop} <= set(task.gold_doc_ids)
        assert set(task.final_doc_ids) <= set(task.gold_doc_ids)


def pid(title: str, sentences: list[str]) -> str:
    return paragraph_doc_id(title, join_sentences(sentences))


# --- HotpotQA ------------------------------------------------------------------------------------

LIGHTHOUSE = ["The Gull Light is a lighthouse on Pell Island.", " It was built by Ada Marsh."]
ADA = ["Ada Marsh was an engineer.", " She was born in Corvale."]
PELL = ["Pell Island lies in the Brin Sea."]
OTHER = ["Tomas Reed wrote novels.", " He lived in Oskar Bay."]


def _hf(qid: str, answer: str, titles: list[str], qtype: str = "bridge") -> dict[str, Any]:
    paragraphs = {"The Gull Light": LIGHTHOUSE, "Ada Marsh": ADA, "Pell Island": PELL,
                  "Tomas Reed": OTHER}  # fmt: skip
    return {
        "id": qid,
        "question": f"question {qid}?",
        "answer": answer,
        "type": qtype,
        "level": "medium",
        "supporting_facts": {"title": titles, "sent_id": [0] * len(titles)},
        "context": {"title": list(paragraphs), "sentences": list(paragraphs.values())},
    }


def test_hotpotqa_hf_schema(tmp_path: Path) -> None:
    records = [
        _hf("b1", "Corvale", ["The Gull Light", "Ada Marsh", "The Gull Light"]),
        _hf("b2", "Pell Island", ["The Gull Light", "Ada Marsh"]),  # answer only in hop 1
        _hf("c1", "yes", ["Ada Marsh", "Tomas Reed"], qtype="comparison"),
    ]
    path = _jsonl(tmp_path / "hotpot.jsonl", records)
    result = read_tasks(path)
    assert result.format == "hotpotqa" and result.records == 3 and result.skipped == {}
    b1, b2, c1 = result.tasks
    light, ada, tomas = (
        pid("The Gull Light", LIGHTHOUSE),
        pid("Ada Marsh", ADA),
        pid("Tomas Reed", OTHER),
    )
    assert b1.gold_doc_ids == [light, ada]
    assert b1.hops == [[light], [ada]] and b1.final_doc_ids == [ada]
    assert b1.bridge_doc_ids == [light]
    assert b1.dataset == "hotpotqa" and b1.metadata == {"type": "bridge", "level": "medium"}
    # the one paragraph holding the answer goes last
    assert b2.hops == [[ada], [light]] and b2.final_doc_ids == [light]
    assert b2.metadata["hop_order"] == "answer_last"
    assert c1.hops == [[ada, tomas]] and c1.final_doc_ids == [ada, tomas]
    assert c1.bridge_doc_ids == []
    _assert_gold_indexed(path, result.tasks)


def test_hotpotqa_original_json_array(tmp_path: Path) -> None:
    record = {
        "_id": "o1",
        "question": "Where was the builder of The Gull Light born?",
        "answer": "Corvale",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["The Gull Light", 1], ["Ada Marsh", 1]],
        "context": [["Pell Island", PELL], ["The Gull Light", LIGHTHOUSE], ["Ada Marsh", ADA]],
    }
    path = tmp_path / "hotpot_original.json"
    path.write_text(json.dumps([record], indent=2))
    (task,) = load_tasks(path)
    assert task.task_id == "o1"
    assert task.gold_doc_ids == [pid("The Gull Light", LIGHTHOUSE), pid("Ada Marsh", ADA)]
    _assert_gold_indexed(path, [task])


def test_hotpotqa_gold_missing_from_context_is_counted(tmp_path: Path) -> None:
    bad = _hf("m1", "x", ["Ada Marsh", "Nowhere"])
    path = _jsonl(tmp_path / "h.jsonl", [_hf("ok", "Corvale", ["Ada Marsh"]), bad])
    result = read_tasks(path)
    assert [t.task_id for t in result.tasks] == ["ok"]
    assert result.skipped == {"gold_not_in_context": 1}


# --- MuSiQue -------------------------------------------------------------------------------------


def _musique(qid: str, answerable: bool = True, support: tuple[int, int] = (7, 3)) -> dict:
    return {
        "id": qid,
        "question": "Who founded the company that makes the Vexa phone?",
        "answer": "Lina Orr",
        "answer_aliases": ["L. Orr"],
        "answerable": answerable,
        "paragraphs": [
            {
                "idx": 3,
                "title": "Corvo Ltd",
                "paragraph_text": "Corvo Ltd was founded by Lina Orr.",
                "is_supporting": True,
            },
            {
                "idx": 5,
                "title": "Tern",
                "paragraph_text": "Tern is a bird.",
                "is_supporting": False,
            },
            {
                "idx": 7,
                "title": "Vexa",
                "paragraph_text": "The Vexa phone is made by Corvo Ltd.",
                "is_supporting": True,
            },
        ],  # fmt: skip
        "question_decomposition": [
            {
                "id": 1,
                "question": "Vexa >> manufacturer",
                "answer": "Corvo Ltd",
                "paragraph_support_idx": support[0],
            },
            {
                "id": 2,
                "question": "who founded #1",
                "answer": "Lina Orr",
                "paragraph_support_idx": support[1],
            },
        ],  # fmt: skip
    }


def test_musique_hops_follow_decomposition_by_idx(tmp_path: Path) -> None:
    path = tmp_path / "musique.json"  # a JSON array named .json
    path.write_text(json.dumps([_musique("2hop__1_2"), _musique("2hop__3_4", answerable=False)]))
    result = read_tasks(path)
    assert result.format == "musique" and result.skipped == {"unanswerable": 1}
    (task,) = result.tasks
    vexa = paragraph_doc_id("Vexa", "The Vexa phone is made by Corvo Ltd.")
    corvo = paragraph_doc_id("Corvo Ltd", "Corvo Ltd was founded by Lina Orr.")
    assert task.hops == [[vexa], [corvo]]
    assert task.gold_doc_ids == [vexa, corvo]
    assert task.final_doc_ids == [corvo] and task.bridge_doc_ids == [vexa]
    assert task.answer_aliases == ["L. Orr"] and task.dataset == "musique"
    _assert_gold_indexed(path, result.tasks)


def test_musique_jsonl_and_bad_support_idx(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "m.jsonl", [_musique("a"), _musique("b", support=(7, 99))])
    with pytest.raises(InputError, match=r"m\.jsonl:2: .*paragraph_support_idx 99"):
        read_tasks(path)


# --- 2WikiMultihopQA -----------------------------------------------------------------------------

FILM_A = ["Night Harbor is a 1931 film directed by Vera Holm."]
FILM_B = ["Glass Road is a 1940 film directed by Ivo Stan."]
VERA = ["Vera Holm (born 3 May 1890) was a director."]
IVO = ["Ivo Stan (born 1 June 1885) was a director."]
NOISE = ["Nothing to see here."]


def _wiki(qid: str, qtype: str, facts: list[str], evidences: list[list[str]]) -> dict[str, Any]:
    return {
        "_id": qid,
        "type": qtype,
        "question": f"question {qid}?",
        "context": [
            ["Night Harbor (film)", FILM_A],
            ["Noise", NOISE],
            ["Glass Road", FILM_B],
            ["Vera Holm", VERA],
            ["Ivo Stan", IVO],
        ],  # fmt: skip
        "supporting_facts": [[t, 0] for t in facts],
        "evidences": evidences,
        "answer": "Glass Road",
    }


def test_twowiki_hops_from_evidences(tmp_path: Path) -> None:
    records = [
        _wiki("bc", "bridge_comparison",
              ["Night Harbor (film)", "Glass Road", "Vera Holm", "Ivo Stan"],
              [["Night Harbor", "director", "Vera Holm"], ["Glass Road", "director", "Ivo Stan"],
               ["Vera Holm", "date of birth", "3 May 1890"],
               ["Ivo Stan", "date of birth", "1 June 1885"]]),
        _wiki("co", "compositional", ["Vera Holm", "Night Harbor (film)"],
              [["Night Harbor", "director", "Vera Holm"],
               ["Vera Holm", "date of birth", "3 May 1890"]]),
        _wiki("cmp", "comparison", ["Night Harbor (film)", "Glass Road"],
              [["Night Harbor", "publication date", "1931"],
               ["Glass Road", "publication date", "1940"]]),
        _wiki("fb", "inference", ["Vera Holm", "Ivo Stan"], [["Someone", "x", "y"]]),
        {"_id": "nc", "type": "comparison", "question": "q?", "answer": "a",
         "supporting_facts": [["A", 0]], "evidences": []},
    ]  # fmt: skip
    path = _jsonl(tmp_path / "wiki.jsonl", records)
    result = read_tasks(path)
    assert result.format == "2wikimultihopqa" and result.skipped == {"no_context": 1}
    bc, co, cmp_, fb = result.tasks
    na, gr = pid("Night Harbor (film)", FILM_A), pid("Glass Road", FILM_B)
    vh, ist = pid("Vera Holm", VERA), pid("Ivo Stan", IVO)
    assert bc.hops == [[na, gr], [vh, ist]] and bc.final_doc_ids == [vh, ist]
    assert bc.bridge_doc_ids == [na, gr]
    # supporting_facts listed the director first; the evidences put the film first
    assert co.hops == [[na], [vh]] and co.final_doc_ids == [vh]
    assert cmp_.hops == [[na, gr]]
    # triples that do not name the titles: supporting_facts order, one per hop
    assert fb.hops == [[vh], [ist]]
    assert bc.metadata == {"type": "bridge_comparison"} and bc.dataset == "2wikimultihopqa"
    _assert_gold_indexed(path, result.tasks)


# --- {query_id, query, answer, document_ids} -----------------------------------------------------


def test_query_format_ids_and_facts(tmp_path: Path) -> None:
    records = [
        {"query_id": "q1", "query": "Who?", "answer": "Ann", "document_ids": ["docA", "docB"]},
        {"query_id": "q2", "query": "Where?", "answer": ["Oslo", "Christiania"],
         "document_ids": [
             {"fact": "X moved to Y.", "chunk_ids": ["notes/a.md#0", "notes/a.md#2"],
              "is_final_answer": False},
             {"fact": "Y is in Oslo.", "chunk_ids": ["b.txt#1"], "is_final_answer": True},
         ]},
        {"query_id": 3, "query": "None?", "answer": "", "document_ids": []},
    ]  # fmt: skip
    result = read_tasks(_jsonl(tmp_path / "tasks.jsonl", records))
    assert result.format == "query" and result.skipped == {"no_gold": 1}
    q1, q2 = result.tasks
    assert q1.gold_doc_ids == ["docA", "docB"] and q1.hops == [] and q1.final_doc_ids == []
    assert q1.bridge_doc_ids == [] and q1.dataset == "custom"
    assert q2.gold_doc_ids == ["notes/a.md", "b.txt"]
    assert q2.final_doc_ids == ["b.txt"] and q2.bridge_doc_ids == ["notes/a.md"]
    assert q2.answer == "Oslo" and q2.answer_aliases == ["Christiania"]
    assert q2.metadata["facts"][0]["chunk_ids"] == ["notes/a.md#0", "notes/a.md#2"]


def test_write_and_load_tasks_round_trip(tmp_path: Path) -> None:
    tasks = [
        Task("t1", "Q?", "A", ["a"], ["d1", "d2"], [["d1"], ["d2"]], ["d2"], "synth", {"n": 1}),
        Task("t2", "Q2?", "B"),
    ]
    path = write_tasks(tmp_path / "out" / "tasks.jsonl", tasks)
    result = read_tasks(path)
    assert result.format == "thresher" and result.tasks == tasks
    assert tasks_to_qrels(tasks) == {"t1": {"d1": 1, "d2": 1}, "t2": {}}


# --- detection and errors ------------------------------------------------------------------------


def test_detect_task_format() -> None:
    assert detect_task_format({"query_id": 1, "query": "q"}) == "query"
    assert detect_task_format({"task_id": "t", "question": "q", "gold_doc_ids": []}) == "thresher"
    assert detect_task_format(_hf("x", "y", ["Ada Marsh"])) == "hotpotqa"
    assert detect_task_format(_musique("m")) == "musique"
    assert detect_task_format({"title": "T", "text": "x"}) is None
    assert detect_task_format([1, 2]) is None


def test_load_tasks_logs_skips(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _jsonl(tmp_path / "m.jsonl", [_musique("a", answerable=False)])
    with caplog.at_level(logging.WARNING):
        assert load_tasks(path) == []
    assert "unanswerable" in caplog.text


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("", "no records"),
        ("q1 0 doc1 1\n", "TREC qrels file; read it with load_qrels"),
        ("q1 Q0 doc1 1 0.5 run\n", "TREC run file"),
        ("hello\n", r":1: not JSON"),
        ('[{"title": "T", "text": "x"}]', r"\[0\]: not a task record \(it is a corpus"),
        ('{"id": 1, "text": "plain"}\n', r":1: not a task record \(it looks like a corpus of doc"),
        ('{"name": 1}\n', r":1: not a task record \(expected one of"),
        ('{"query_id": "a", "query": "q", "document_ids": ["d"]}\n{bad\n', r":2: not valid JSON"),
        ('{"query_id": "a", "query": "q", "document_ids": ["d"]}\n'
         '{"query_id": "a", "query": "q", "document_ids": ["e"]}\n', r":2: task id 'a' repeats"),
        ('{"query_id": "a", "query": "q", "document_ids": "d"}\n', r":1: 'document_ids' must be"),
        ('{"query_id": "a", "query": ["q"], "document_ids": []}\n', r":1: field 'query' must"),
        ('{"query_id": "a", "query": "q", "document_ids": ["d"]}\n[1]\n', r":2: expected a JSON"),
    ],
)  # fmt: skip
def test_bad_input_names_file_and_line(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        read_tasks(path)


def test_bad_dataset_record_and_encoding(tmp_path: Path) -> None:
    broken = _hf("x", "y", ["Ada Marsh"])
    broken["context"] = {"title": ["Ada Marsh"], "sentences": []}
    path = _jsonl(tmp_path / "h.jsonl", [_hf("ok", "y", ["Ada Marsh"]), broken])
    with pytest.raises(InputError, match=r"h\.jsonl:2: not a hotpotqa record"):
        read_tasks(path)
    raw = tmp_path / "latin1.jsonl"
    raw.write_bytes(b'{"query_id": "a", "query": "caf\xe9"}\n')
    with pytest.raises(InputError, match="invalid UTF-8"):
        read_tasks(raw)
    with pytest.raises(InputError, match="no such task file"):
        read_tasks(tmp_path / "missing.jsonl")


def test_load_qrels(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    assert load_qrels(tmp_path / "q.txt") == {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
