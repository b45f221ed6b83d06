"""The synthetic task record: JSONL, the query form, eval tasks and TREC qrels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.errors import InputError
from thresher.tasks.readers import load_qrels, load_tasks, read_tasks
from thresher.tasks.synthetic import (
    SCHEMA,
    Evidence,
    SynthTask,
    from_query_record,
    read_synth_tasks,
    to_eval_task,
    to_qrels,
    to_query_record,
    write_qrels,
    write_synth_tasks,
)


def task(i: int = 0) -> SynthTask:
    return SynthTask(
        task_id=f"synth-0-{i:05d}",
        question="Clues: (1) Patent QX-1 names [A]. (2) [A] lives in [?]. What name is [?]?",
        answer="Marrowick",
        evidence=(
            Evidence(
                1, ("patents/QX-1.txt#1",), "patents/QX-1.txt", "Patent QX-1 names Orvel.", "Orvel"
            ),
            Evidence(
                2,
                ("web/orvel.html#0", "web/orvel.html#1"),
                "web/orvel.html",
                "Orvel lives in Marrowick.",
                None,
            ),
        ),  # fmt: skip
        final_chunk_id="web/orvel.html#0",
        answer_aliases=("Marrowick town",),
        distractor_ids=("web/caddow.html#0", "web/other.html#2"),
        difficulty=0.25,
        anchor="QX-1",
        seed=0,
        checks={"single_shot_found@5": 1},
    )


def test_dict_round_trip_and_documented_fields() -> None:
    t = task()
    data = t.to_dict()
    assert data["schema"] == SCHEMA
    assert data["hops"] == 2
    assert set(data) >= {
        "question", "answer", "evidence", "final_chunk_id", "distractor_ids", "hops", "difficulty",
    }  # fmt: skip
    assert data["evidence"][0] == {
        "hop": 1,
        "chunk_ids": ["patents/QX-1.txt#1"],
        "doc_id": "patents/QX-1.txt",
        "fact": "Patent QX-1 names Orvel.",
        "bridge": "Orvel",
    }
    assert SynthTask.from_dict(json.loads(json.dumps(data))) == t


def test_jsonl_file_round_trip(tmp_path: Path) -> None:
    tasks = [task(0), task(1)]
    path = write_synth_tasks(tmp_path / "t.jsonl", tasks)
    assert read_synth_tasks(path) == tasks


def test_query_form_round_trip_is_exact() -> None:
    t = task()
    record = to_query_record(t)
    assert record["query_id"] == t.task_id and record["query"] == t.question
    assert record["document_ids"] == [
        {"fact": "Patent QX-1 names Orvel.", "chunk_ids": ["patents/QX-1.txt#1"], "is_final_answer": False},
        {"fact": "Orvel lives in Marrowick.", "chunk_ids": ["web/orvel.html#0", "web/orvel.html#1"], "is_final_answer": True},
    ]  # fmt: skip
    assert from_query_record(json.loads(json.dumps(record))) == t


def test_foreign_query_records_become_tasks() -> None:
    t = from_query_record(
        {"query_id": "q1", "query": "Q?", "answer": ["A", "a2"], "document_ids": ["d1#0", "d2#3"]}
    )
    assert t.answer == "A" and t.answer_aliases == ("a2",)
    assert [e.doc_id for e in t.evidence] == ["d1", "d2"]
    assert t.final_chunk_id == "d2#3"


def test_load_tasks_reads_both_forms_with_the_same_gold(tmp_path: Path) -> None:
    tasks = [task(0), task(1)]
    native = write_synth_tasks(tmp_path / "native.jsonl", tasks)
    query = tmp_path / "query.jsonl"
    query.write_text("".join(json.dumps(to_query_record(t)) + "\n" for t in tasks))
    got = read_tasks(native)
    assert got.format == "synth"
    a, b = got.tasks, load_tasks(query)
    assert [t.task_id for t in a] == [t.task_id for t in b] == ["synth-0-00000", "synth-0-00001"]
    for x, y in zip(a, b, strict=True):
        assert x.gold_doc_ids == y.gold_doc_ids == ["patents/QX-1.txt", "web/orvel.html"]
        assert x.final_doc_ids == y.final_doc_ids == ["web/orvel.html"]
        assert x.answer == y.answer == "Marrowick"
    assert a[0].hops == [["patents/QX-1.txt"], ["web/orvel.html"]]
    assert a[0].metadata["distractor_ids"] == ["web/caddow.html#0", "web/other.html#2"]
    assert to_eval_task(task()) == a[0]


def test_qrels_grade_the_final_answer_higher(tmp_path: Path) -> None:
    assert to_qrels([task()]) == {"synth-0-00000": {"patents/QX-1.txt": 1, "web/orvel.html": 2}}
    assert to_qrels([task()], level="chunk")["synth-0-00000"] == {
        "patents/QX-1.txt#1": 1,
        "web/orvel.html#0": 2,
        "web/orvel.html#1": 1,
    }
    path = write_qrels(tmp_path / "q.txt", [task()])
    assert load_qrels(path) == {"synth-0-00000": {"patents/QX-1.txt": 1, "web/orvel.html": 2}}


def test_bad_records_name_the_problem(tmp_path: Path) -> None:
    data = task().to_dict()
    with pytest.raises(InputError, match="evidence"):
        SynthTask.from_dict({**data, "evidence": []}, "f:1")
    with pytest.raises(InputError, match="'hops' is 3"):
        SynthTask.from_dict({**data, "hops": 3}, "f:1")
    with pytest.raises(InputError, match="schema"):
        SynthTask.from_dict({**data, "schema": "thresher.synth-task/9"}, "f:1")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(InputError, match="bad.jsonl:1"):
        read_synth_tasks(bad)


def test_task_file_with_a_byte_order_mark_or_bad_bytes(tmp_path: Path) -> None:
    path = write_synth_tasks(tmp_path / "t.jsonl", [task()])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # as some editors save it
    assert [t.task_id for t in read_synth_tasks(path)] == ["synth-0-00000"]
    path.write_bytes(path.read_bytes() + b'{"schema": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"t\.jsonl:2: invalid UTF-8"):
        read_synth_tasks(path)
