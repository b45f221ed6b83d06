"""``thresher synth tasks`` end to end over a real index."""

from __future__ import annotations

import json
from pathlib import Path

from thresher.cli.main import main
from thresher.tasks.readers import load_qrels, load_tasks, read_tasks


def test_synth_tasks_writes_tasks_query_form_qrels_and_counts(
    world_index: Path, tmp_path: Path, capsys
) -> None:
    out, query, qrels, counts = (tmp_path / n for n in ("t.jsonl", "q.jsonl", "q.qrels", "c.json"))
    code = main(
        ["synth", "tasks", "--index", str(world_index), "--out", str(out), "--n", "4",
         "--hops", "2:1,3:1", "--query-out", str(query), "--qrels", str(qrels),
         "--report", str(counts), "--json"]
    )  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kept"] == 4 and summary["out"] == str(out)
    assert set(summary["by_hops"]) <= {"2", "3"}
    assert json.loads(counts.read_text())["rejected"] == summary["rejected"]
    native, converted = read_tasks(out), load_tasks(query)
    assert native.format == "synth" and len(native.tasks) == 4
    assert [t.gold_doc_ids for t in native.tasks] == [t.gold_doc_ids for t in converted]
    assert set(load_qrels(qrels)) == {t.task_id for t in native.tasks}


def test_synth_tasks_text_output(world_index: Path, tmp_path: Path, capsys) -> None:
    code = main(
        ["synth", "tasks", "--index", str(world_index), "--out", str(tmp_path / "t.jsonl"),
         "--n", "2", "--no-progress"]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0
    assert "kept 2 of 2 tasks" in text and "single-shot hybrid recall@5" in text
    assert "single_shot_solvable" in text


def test_bad_hops_spec_is_a_usage_error(world_index: Path, tmp_path: Path, capsys) -> None:
    try:
        main(["synth", "tasks", "--index", str(world_index), "--out", "x", "--hops", "two"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "--hops expects" in capsys.readouterr().err
