"""``thresher export-sft`` over real traces (the SFT test module's scripted episodes)."""

from __future__ import annotations

import json
from pathlib import Path

from test_sft import TASK, good_actions, run, store  # noqa: F401  (fixture re-exported)

from thresher.cli.main import main
from thresher.tasks.readers import write_tasks


def test_export_sft_cli(store, tmp_path: Path, capsys) -> None:  # noqa: F811
    trace = run(store, good_actions(), tmp_path / "trace.jsonl")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("nope\n")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [TASK])
    out = tmp_path / "sft.jsonl"
    code = main(
        ["export-sft", str(trace), str(garbage), "--tasks", str(tasks), "--out", str(out),
         "--layout", "episode", "--json"]
    )  # fmt: skip
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kept_whole"] == 1 and report["dropped"] == {"unreadable": 1}
    assert report["records"] == 1 and len(out.read_text().splitlines()) == 1
    code = main(["export-sft", str(trace), "--tasks", str(tasks), "--out", str(out)])
    assert code == 0
    assert "kept 1 whole" in capsys.readouterr().out
