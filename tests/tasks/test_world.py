"""A generated world's planted chains as evaluation tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.errors import InputError
from thresher.synth.world.generate import generate_world
from thresher.tasks import readers as tk
from thresher.tasks.corpus import task_documents
from thresher.tasks.readers import read_tasks, register_task_format
from thresher.tasks.task import Task
from thresher.tasks.world import world_root


def test_world_chains_are_tasks_whose_gold_docs_are_indexed_ids(tmp_path: Path) -> None:
    generate_world(3, "small", tmp_path / "w")
    chains = tmp_path / "w" / ".world" / "chains.jsonl"
    result = read_tasks(chains)
    assert result.format == "world_chains" and len(result.tasks) >= 5
    t = result.tasks[0]
    assert t.dataset == "thresher-world"
    assert len(t.hops) == t.metadata["n_hops"] == len(t.gold_doc_ids)
    assert t.final_doc_ids == t.hops[-1]
    assert t.bridge_doc_ids == [h[0] for h in t.hops[:-1]]
    assert world_root(chains) == (tmp_path / "w").resolve()
    doc_ids = {d.doc_id for d in task_documents([chains])}
    assert all(g in doc_ids for task in result.tasks for g in task.gold_doc_ids)
    with pytest.raises(InputError, match="DIR/.world/chains.jsonl"):
        world_root(tmp_path / "chains.jsonl")


def test_a_registered_format_is_detected_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tk, "_CONVERTERS", dict(tk._CONVERTERS))
    monkeypatch.setattr(tk, "_DETECTORS", list(tk._DETECTORS))
    monkeypatch.setattr(tk, "TASK_FORMATS", tk.TASK_FORMATS)

    def detect(record: object) -> bool:
        return isinstance(record, dict) and "synth_question" in record

    def convert(record: dict, where: str) -> Task:
        return Task(record["id"], record["synth_question"], "a", gold_doc_ids=["x"])

    register_task_format("synth_test", detect, convert)
    (tmp_path / "s.jsonl").write_text('{"id": "s1", "synth_question": "why?"}\n')
    result = read_tasks(tmp_path / "s.jsonl")
    assert result.format == "synth_test" and result.tasks[0].question == "why?"
