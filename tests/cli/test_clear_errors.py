"""Inputs a careful user tried: each ends in one clear error line and a typed exit code,
never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.cli.main import main


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("errors")
    (root / "a.md").write_text("# Alder\n\nThe alder grows by the river.\n", encoding="utf-8")
    assert main(["index", str(root / "a.md"), "--index", str(root / "index"), "--no-progress"]) == 0
    return root / "index"


def _one_error_line(capsys, code: int, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == code, argv
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.slow
def test_a_pattern_too_large_for_the_engine_is_refused(index, capsys):
    err = _one_error_line(capsys, 2, ["grep", r"\w{300}", "--index", str(index)])
    assert "refused" in err and "repetitions" in err


def test_a_malformed_server_url_is_an_input_error(capsys):
    err = _one_error_line(capsys, 2, ["stats", "--index", "http://[::1"])
    assert "not a server location" in err


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00",
        b"\xff\xfe garbage",
        b'{"type": "episode_start", "config": []}\n',
        b'{"type": "episode_start"}\n{"type": "final", "documents": [1]}\n',
        b'{"type": "episode_start"}\n{"type": "tool_result", "status": 3, "header": 5}\n',
    ],
)
def test_trace_show_on_a_file_that_is_no_trace(tmp_path, capsys, content):
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    _one_error_line(capsys, 2, ["trace", "show", str(path)])
    capsys.readouterr()
    code = main(["trace", "replay", str(path)])  # replay may rebuild an empty state
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err and len(err.splitlines()) <= 1


@pytest.mark.parametrize(
    "setting",
    ["budget.soft_fraction=nan", "budget.soft_fraction=inf", "budget.hard_fraction=2",
     "budget.total=true", "retrieval.mode=bogus"],
)  # fmt: skip
def test_bad_settings_are_refused_before_anything_runs(index, capsys, setting):
    err = _one_error_line(capsys, 2, ["search", "q", "--index", str(index), "--set", setting])
    assert setting.split("=")[0] in err


def test_a_json_config_that_is_an_array_is_refused(index, tmp_path, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps([1, 2]))
    err = _one_error_line(
        capsys, 2, ["search", "q", "--index", str(index), "--config", str(config)]
    )
    assert "tables of settings" in err
