"""A config's ``[policy]`` section and ``episode.k`` reach the policy a name builds."""

from __future__ import annotations

import pytest

from thresher.config import Config
from thresher.errors import ConfigError
from thresher.policies import build_policy, count_settings, policy_settings


def test_set_strings_become_the_factorys_types():
    got = policy_settings(
        "local",
        {"keep_docs": "8", "max_hops": "2", "prune_below": "0.25", "grep": "false"},
    )
    assert got == {"keep_docs": 8, "max_hops": 2, "prune_below": 0.25, "grep": False}
    policy = build_policy("local", Config().override({"policy.keep_docs": "8"}))
    assert policy.keep_docs == 8


def test_unknown_and_ill_typed_settings_are_refused():
    with pytest.raises(ConfigError, match=r"no setting 'keep_doc'.*keep_docs"):
        build_policy("local", Config().override({"policy.keep_doc": 8}))
    with pytest.raises(ConfigError, match="policy.keep_docs"):
        build_policy("local", Config().override({"policy.keep_docs": "many"}))
    with pytest.raises(ConfigError, match="its settings: top_k"):
        build_policy("single-shot", Config().override({"policy.config": 1}))


def test_a_config_file_policy_section(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"policy": {"keep_docs": 3}, "budget": {"total": 8000}}')
    config = Config.load(path)
    assert config.policy_options == {"keep_docs": 3}
    assert config.to_dict()["policy"] == {"keep_docs": 3}
    assert build_policy("local", config).keep_docs == 3


def test_k_sets_the_count_settings_a_policy_takes_and_options_still_win():
    assert count_settings("local", 8) == {"final_k": 8, "keep_docs": 8}
    assert count_settings("local", 2) == {"final_k": 2, "keep_docs": 5}
    assert count_settings("single-shot", 3) == {"top_k": 3}
    assert count_settings("llm", 3) == {}
    config = Config().override({"episode.k": 7})
    assert build_policy("single-shot", config).top_k == 7
    assert build_policy("single-shot", config, {"top_k": 2}).top_k == 2
    with pytest.raises(ConfigError, match="max_final_documents"):
        Config().override({"episode.k": 11})
