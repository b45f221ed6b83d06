"""``thresher eval``: the paired protocol from the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from thresher.cli.main import main

# two invented questions in the original HotpotQA JSON schema
_RECORDS = [
    {"_id": "h1", "question": "Which river runs through the city where Pell Arno was born?",
     "answer": "Ossa", "type": "bridge", "level": "easy",
     "supporting_facts": [["Pell Arno", 0], ["Brenmouth", 1]],
     "context": [["Pell Arno", ["Pell Arno is a sculptor born in Brenmouth."]],
                 ["Brenmouth", ["Brenmouth is a mill city.", " The river Ossa runs through it."]],
                 ["Gale Fort", ["Gale Fort guards a mountain pass."]]]},
    {"_id": "h2", "question": "What does the company founded by Tova Reyes make?",
     "answer": "bicycles", "type": "bridge", "level": "easy",
     "supporting_facts": [["Tova Reyes", 0], ["Reyes Works", 0]],
     "context": [["Tova Reyes", ["Tova Reyes founded Reyes Works in 1971."]],
                 ["Reyes Works", ["Reyes Works makes bicycles in a brick factory."]],
                 ["Gale Fort", ["Gale Fort guards a mountain pass."]]]},
]  # fmt: skip


def test_eval_command_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tiny.json"
    tasks.write_text(json.dumps(_RECORDS), encoding="utf-8")
    (tmp_path / "b.toml").write_text('[policy]\nname = "single-shot"\ntop_k = 1\n')
    out = tmp_path / "out"
    argv = ["eval", "--a", "single-shot", "--b", str(tmp_path / "b.toml"), str(tasks),
            "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--workers", "2",
            "--resamples", "500", "--json"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["n_tasks"] == 2 and result["summary"]["b"]["label"] == "b"
    assert result["summary"]["means"]["a"]["recall@5"]["mean"] == 1.0  # 5 paragraphs in all
    for name in ("tasks", "run_a", "run_b", "summary_md", "html"):
        assert Path(result["files"][name]).is_file()
    assert len(list((tmp_path / "cache").iterdir())) == 1  # the pooled index, cached
    # per-question corpus, one task, markdown output; the cached index is reused
    argv = ["eval", "--a", "single-shot", "--b", "single-shot", str(tasks), "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--corpus", "question", "--limit", "1",
            "--resamples", "500"]  # fmt: skip
    assert main(argv) == 0
    text, err = capsys.readouterr()
    assert "1 tasks; rollouts 1; corpus question" in text and "report:" in text
    assert "\r" not in err  # stderr is no terminal here: no progress bar
    row = json.loads((out / "tasks.jsonl").read_text().splitlines()[0])
    from thresher.tasks.corpus import task_corpora

    assert set(row["a"]["retrieved_docids"]) == task_corpora(tasks)["h1"]  # h1's own only


def test_eval_json_draws_no_progress_bar_on_a_terminal(
    tmp_path: Path, as_terminal: Callable[[], None], capsys: pytest.CaptureFixture[str]
) -> None:
    as_terminal()
    tasks = tmp_path / "tiny.json"
    tasks.write_text(json.dumps(_RECORDS), encoding="utf-8")
    argv = ["eval", "--a", "single-shot", "--b", "single-shot", str(tasks), "--out",
            str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--resamples", "200",
            "--json"]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["summary"]["n_tasks"] == 2


def test_eval_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tiny.json"
    tasks.write_text(json.dumps(_RECORDS), encoding="utf-8")
    assert main(["eval", "--a", "nope", "--b", "single-shot", str(tasks)]) == 2
    assert "neither a config file nor a policy" in capsys.readouterr().err
    assert main(["eval", "--a", "single-shot", "--b", "single-shot", str(tmp_path / "x.json")]) == 2


def test_eval_with_whitespace_in_ids_writes_every_output(tmp_path: Path, capsys) -> None:
    """A task id holding whitespace (TREC cannot) used to fail after every episode ran."""
    records = [dict(r, _id=f"task {r['_id']}") for r in _RECORDS]
    tasks = tmp_path / "spaced.json"
    tasks.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["eval", "--a", "single-shot", "--b", "single-shot", str(tasks), "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--resamples", "200", "--json"]  # fmt: skip
    assert main(argv) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    for name in ("tasks", "summary_json", "summary_md", "html", "run_a", "run_b", "qrels"):
        assert Path(files[name]).is_file(), name
    from thresher.tasks.trec import read_qrels, read_run

    assert set(read_run(files["run_a"], decode_ids=True)) == {"task h1", "task h2"}
    assert set(read_qrels(files["qrels"], decode_ids=True)) == {"task h1", "task h2"}


def test_eval_limit_and_sample_index_only_their_tasks_paragraphs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tiny.json"
    tasks.write_text(json.dumps(_RECORDS), encoding="utf-8")
    cache = tmp_path / "cache"
    argv = ["eval", "--a", "single-shot", "--b", "single-shot", str(tasks), "--out",
            str(tmp_path / "out"), "--cache-dir", str(cache), "--resamples", "200", "--json"]  # fmt: skip
    assert main([*argv, "--sample", "1", "--seed", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["n_tasks"] == 1
    (index,) = cache.iterdir()
    from thresher.index.embedded.layout import current_generation, read_manifest

    assert len(read_manifest(current_generation(index)).documents) == 3  # not 5
    assert main([*argv, "--limit", "1", "--sample", "1"]) == 2
    assert "not both" in capsys.readouterr().err
