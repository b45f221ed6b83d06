"""The whole pipeline over a real index of a small generated world."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.errors import InputError
from thresher.tasks.generate.pipeline import synthesize_tasks
from thresher.tasks.generate.text import contains, normalize
from thresher.tasks.generate.verify import REASONS
from thresher.tasks.readers import load_tasks
from thresher.tasks.synthetic import write_synth_tasks


@pytest.fixture(scope="module")
def report(world_store, world_view):
    return synthesize_tasks(world_store, 12, seed=0, view=world_view)


def test_kept_tasks_pass_every_check(report, world_store) -> None:
    assert report.kept >= 8
    for task in report.tasks:
        assert 2 <= task.hops <= 4 and task.hops == len(task.evidence)
        docs = [e.doc_id for e in task.evidence]
        assert len(set(docs)) == len(docs)
        chunks = {c.chunk_id: c for c in world_store.get([e.chunk_ids[0] for e in task.evidence])}
        for e in task.evidence:
            assert e.fact in chunks[e.chunk_ids[0]].text  # quoted verbatim
        final = chunks[task.final_chunk_id].text
        first = chunks[task.evidence[0].chunk_ids[0]].text
        assert contains(normalize(final), task.answer)
        assert not contains(normalize(first), task.answer)
        question = normalize(task.question)
        assert not contains(question, task.answer)
        assert not any(contains(question, b) for b in task.bridges)
        assert contains(question, task.anchor)
        # measured: single-shot hybrid top-5 misses some evidence
        top = {h.chunk.chunk_id for h in world_store.hybrid_search(task.question, k=5)}
        assert not set(task.evidence_chunk_ids) <= top
        assert task.checks["single_shot_found@5"] == len(set(task.evidence_chunk_ids) & top)
        # distractors: other documents, naming neither the answer nor a bridge
        assert len(task.distractor_ids) >= 2
        for chunk in world_store.get(list(task.distractor_ids)):
            assert chunk.doc_id not in docs
            text = normalize(chunk.text)
            assert not any(contains(text, s) for s in [task.answer, *task.bridges])


def test_counts_add_up(report) -> None:
    assert set(report.rejected) == set(REASONS) == set(report.passed)
    assert report.candidates == report.kept + sum(report.rejected.values())
    assert sum(report.by_hops.values()) == report.kept
    assert 0 <= report.single_shot_recall < 1
    summary = report.to_dict()
    assert summary["kept"] == report.kept and "single_shot_recall@5" in summary
    assert 0 < report.search["fact_sentences"] < report.search["sentences"]


def test_same_seed_same_tasks(report, world_store, world_view) -> None:
    again = synthesize_tasks(world_store, 12, seed=0, view=world_view)
    assert [t.to_dict() for t in again.tasks] == [t.to_dict() for t in report.tasks]
    other = synthesize_tasks(world_store, 12, seed=1, view=world_view)
    assert [t.question for t in other.tasks] != [t.question for t in report.tasks]


def test_written_tasks_load_as_eval_tasks(report, tmp_path: Path) -> None:
    path = write_synth_tasks(tmp_path / "tasks.jsonl", report.tasks)
    tasks = load_tasks(path)
    assert [t.task_id for t in tasks] == [t.task_id for t in report.tasks]
    for eval_task, task in zip(tasks, report.tasks, strict=True):
        assert eval_task.gold_doc_ids == task.gold_doc_ids
        assert eval_task.final_doc_ids == [task.evidence[-1].doc_id]
        assert len(eval_task.hops) == task.hops


def test_hop_weights_and_bad_arguments(world_store, world_view) -> None:
    only_two = synthesize_tasks(world_store, 3, seed=0, hop_weights={2: 1.0}, view=world_view)
    assert {t.hops for t in only_two.tasks} == {2}
    with pytest.raises(InputError):
        synthesize_tasks(world_store, 0, view=world_view)
    with pytest.raises(InputError):
        synthesize_tasks(world_store, 1, mode="magic", view=world_view)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        synthesize_tasks(world_store, 1, hop_weights={1: 1.0}, view=world_view)


def test_strict_hops_fill_a_quota_per_hop_count(world_store, world_view) -> None:
    report = synthesize_tasks(
        world_store, 4, seed=0, hop_weights={2: 1.0, 3: 1.0}, strict_hops=True, view=world_view
    )
    assert report.by_hops == {2: 2, 3: 2}
    assert sorted(t.hops for t in report.tasks) == [2, 2, 3, 3]


def test_salient_phrasing_keeps_verified_tasks_named_by_a_few_words(
    world_store, world_view
) -> None:
    report = synthesize_tasks(world_store, 3, seed=0, view=world_view, phrasing="salient")
    assert report.phrasing == "salient" and report.kept >= 1
    for task in report.tasks:
        assert "that " in task.question and "[" not in task.question  # no letters, no quotes
    with pytest.raises(InputError):
        synthesize_tasks(world_store, 1, view=world_view, phrasing="poem")  # type: ignore[arg-type]
