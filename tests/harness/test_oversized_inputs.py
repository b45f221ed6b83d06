"""Issue 23, low items: deep JSON and over-long numbers are typed errors (one line, no
traceback); a timed-out call names the limit that cut it."""

from __future__ import annotations

import pytest

from thresher.cli.main import main
from thresher.config import Config
from thresher.errors import ConfigError
from thresher.harness.tools import _timeout_text

DEEP = "[" * 100_000 + "]" * 100_000


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_deeply_nested_config_file_is_a_config_error(tmp_path, suffix):
    path = tmp_path / f"c{suffix}"
    path.write_text(DEEP if suffix == ".json" else "a = " + DEEP, encoding="utf-8")
    with pytest.raises(ConfigError, match="nests too deeply|not valid"):
        Config.load(path)


@pytest.mark.parametrize("action", ["show", "view", "replay"])
def test_trace_commands_refuse_deep_json_with_one_line(tmp_path, capsys, action):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type": "refusal", "message": ' + DEEP + "}\n", encoding="utf-8")
    code = main(["trace", action, str(path)])
    assert code != 0
    assert "too deeply" in _one_error_line(capsys)


def test_huge_numbers_in_settings_are_config_errors(index_dir, capsys):
    for value in ("9" * 400, 10**400, "1e400"):
        with pytest.raises(ConfigError):
            Config().override({"budget.total": value})
    code = main(["search", "q", "--index", str(index_dir), "--set", "budget.total=" + "9" * 400])
    assert code != 0 and "at most" in _one_error_line(capsys)
    assert Config().override({"budget.total": 10**15}).budget.total == 10**15


def test_a_timeout_names_the_limit_that_cut_it():
    cfg = Config().override({"episode.wall_time_s": 5, "episode.tool_timeout_s": 30})
    assert "wall time of 5s" in _timeout_text(cfg, 4.2) and "30" not in _timeout_text(cfg, 4.2)
    assert "after 30s (episode.tool_timeout_s)" in _timeout_text(cfg, 30.0)
