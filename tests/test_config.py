"""Config validation: every bad value is a ConfigError naming the setting, never a crash later."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from thresher.config import BudgetConfig, Config, GrepConfig, coerce_setting
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


def test_a_section_is_checked_however_it_is_built():
    with pytest.raises(ConfigError, match="'budget.total' expects int, got 'many'"):
        BudgetConfig(total="many")
    with pytest.raises(ConfigError, match="'grep.timeout_s' must not be negative"):
        dataclasses.replace(GrepConfig(), timeout_s=-1)
    with pytest.raises(ConfigError, match="unknown setting 'grep.bogus'; grep has: limit"):
        GrepConfig(bogus=1)  # type: ignore[call-arg]
    assert dataclasses.replace(GrepConfig(), timeout_s="3").timeout_s == 3.0
    with pytest.raises(ConfigError, match="not valid Unicode"):
        Config().override({"retrieval.embedder": "\ud800"})
    with pytest.raises(ConfigError, match="must be at most 1e"):
        Config().override({"budget.total": "9" * 5000})


def test_the_defaults_and_a_round_trip_through_a_file(tmp_path: Path) -> None:
    """Every default as it reaches the harness, and a file of them reads back equal."""
    assert Config().to_dict() == _DEFAULTS
    assert list(Config().to_dict()) == list(_DEFAULTS)  # the sections' order too
    path = tmp_path / "c.json"
    path.write_text(json.dumps(Config().to_dict()))
    assert Config.load(path) == Config() and Config.load(path).to_dict() == _DEFAULTS
    assert all(type(v) is type(_DEFAULTS[s][k]) for s, d in Config().to_dict().items()
               for k, v in d.items())  # fmt: skip


@pytest.mark.parametrize(
    ("value", "kind", "says"),
    [(True, int, "boolean"), ("-1", int, "negative"), ("x", int, "expects int"),
     ("nan", float, "finite"), ("2.5", int, "expects int")],
)  # fmt: skip
def test_policy_settings_are_checked_as_sections_are(value, kind, says):
    assert coerce_setting("policy.keep_docs", "8", int) == 8
    assert coerce_setting("policy.grep", "false", bool) is False
    assert coerce_setting("policy.prune_below", "0.25", float) == 0.25
    with pytest.raises(ConfigError, match=f"'policy.x' {says}|'policy.x' .*{says}"):
        coerce_setting("policy.x", value, kind)


_DEFAULTS = {
    "chunking": {"max_tokens": 512, "tokenizer": "o200k_base"},
    "retrieval": {
        "rrf_k": 60,
        "candidates": 50,
        "per_retriever": 100,
        "embedder": "minilm-int8-dq-w128",
        "mode": "hybrid",
        "exact_dense_max_chunks": 20000,
        "where": "",
        "path": "",
        "fitted_fusion": True,
    },
    "grep": {
        "limit": 5,
        "max_pattern_chars": 256,
        "max_repeat": 1000,
        "timeout_s": 2.0,
        "count_cap": 1000,
    },  # fmt: skip
    "budget": {
        "total": 32768,
        "soft_fraction": 0.5,
        "hard_fraction": 0.85,
        "per_call_tokens": 4096,
        "reply_reserve": 1024,
    },  # fmt: skip
    "episode": {
        "max_turns": 24,
        "max_calls_per_turn": 8,
        "max_calls": 96,
        "wall_time_s": 300.0,
        "tool_timeout_s": 30.0,
        "search_results": 10,
        "max_final_documents": 10,
        "max_refused_in_a_row": 3,
        "max_hard_refused_turns": 3,
        "k": 0,
    },
    "llm": {
        "base_url": "",
        "model": "",
        "api_key_env": "THRESHER_LLM_API_KEY",
        "temperature": 1.0,
        "max_tokens": 4096,
        "timeout_s": 120.0,
        "max_retries": 4,
        "backoff_s": 1.0,
        "max_malformed": 6,
        "reasoning_effort": "",
        "first_tool_choice": "required",
        "first_response_format": "json_schema",
        "return_tokens": False,
    },
    "policy": {},
}
