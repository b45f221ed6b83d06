"""``thresher synth world``: the command over generate_world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.cli.main import main
from thresher.synth.world import demo_question


def test_synth_world_writes_a_world(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w"
    assert main(["synth", "world", "--seed", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "wrote a fictional world (seed 2, small)" in text
    assert f"demo question: {demo_question(out)}" in text
    assert (out / ".world" / "chains.jsonl").is_file()


def test_synth_world_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w"
    assert main(["synth", "world", "--out", str(out), "--documents", "120", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seed"] == 0 and report["size"] == "120 documents"
    files = [p for p in out.rglob("*") if p.is_file() and ".world" not in p.parts]
    assert report["counts"]["documents"] == len(files)  # README.txt lives under .world/
    assert report["demo_question"] == demo_question(out)


def test_synth_without_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth"]) == 2
    assert "world" in capsys.readouterr().out


def test_size_and_documents_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["synth", "world", "--out", str(tmp_path), "--size", "small", "--documents", "80"])
    assert exc.value.code == 2


def test_non_empty_folder_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "keep.txt").write_text("x")
    assert main(["synth", "world", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("thresher synth: error:") and err.count("\n") == 1
