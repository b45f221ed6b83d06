"""Config validation: every bad value is a ConfigError naming the setting, never a crash later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.config import BudgetConfig, Config
from thresher.errors import ConfigError


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("budget.soft_fraction", "nan", "finite"),
        ("budget.soft_fraction", "inf", "finite"),
        ("budget.hard_fraction", float("-inf"), "finite"),
        ("budget.hard_fraction", 2, "(0, 1]"),
        ("budget.soft_fraction", 0, "(0, 1]"),
        ("budget.soft_fraction", 0.9, "must not exceed"),
        ("budget.total", True, "boolean"),
        ("budget.total", "true", "expects int"),
        ("budget.total", 1e400, "expects int"),
        ("budget.total", 2.5, "whole number"),
        ("budget.total", 0, "positive"),
        ("grep.timeout_s", "nan", "finite"),
        ("retrieval.mode", "bogus", "one of"),
    ],
)
def test_bad_values_are_refused_with_the_setting_named(key, value, says):
    with pytest.raises(ConfigError, match=key.split(".")[1]) as caught:
        Config().override({key: value})
    assert says in str(caught.value)


def test_shares_are_checked_together_whatever_the_order():
    both = Config().override({"budget.soft_fraction": 0.9, "budget.hard_fraction": 0.95})
    assert (both.budget.soft_fraction, both.budget.hard_fraction) == (0.9, 0.95)
    assert Config().override({"budget.total": 4000.0}).budget.total == 4000
    with pytest.raises(ConfigError):
        BudgetConfig(soft_fraction=0.9, hard_fraction=0.5)


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        '"budget"',
        '{"budget": {"total": 1e400}}',
        '{"budget": {"soft_fraction": NaN}}',
        '{"budget": {"total": true}}',
        '{"budget": {"hard_fraction": 2}}',
    ],
)
def test_bad_json_config_files_are_config_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ConfigError):
        Config.load(path)


def test_a_good_json_config_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"budget": {"total": 16384, "soft_fraction": 0.4}}))
    assert Config.load(path).budget.total == 16384


def test_a_config_remembers_which_settings_were_given(tmp_path: Path) -> None:
    assert not Config().is_given("budget.total")
    given = Config().override({"budget.total": 32768})  # the default's value, but given
    assert given.is_given("budget.total") and not given.is_given("llm.max_tokens")
    path = tmp_path / "c.toml"
    path.write_text("[llm]\nmax_tokens = 2048\n", encoding="utf-8")
    loaded = Config.load(path).override({"episode.k": 3})
    assert loaded.given == {"llm.max_tokens", "episode.k"}
    # what the library fits itself is not given; the marker is no setting
    fitted = loaded.fitted({"budget.total": 8000})
    assert fitted.budget.total == 8000 and not fitted.is_given("budget.total")
    assert "given" not in fitted.to_dict() and fitted == loaded.override({"budget.total": 8000})
