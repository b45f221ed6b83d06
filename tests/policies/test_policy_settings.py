"""A config's ``[policy]`` section and ``episode.k`` reach the policy a name builds."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from thresher.config import Config
from thresher.errors import ConfigError
from thresher.harness.policy import BasePolicy
from thresher.policies import (
    POLICIES,
    PolicyFactory,
    build_policy,
    count_settings,
    policy_factory,
    policy_settings,
    register_policy,
)
from thresher.policies.factory import Factory
from thresher.policies.single_shot import SingleShotPolicy


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


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_registered_factory_is_a_policy_factory(name):
    """(config, seed, options) builds each built-in policy; its options are a dataclass."""
    factory = policy_factory(name)
    assert isinstance(factory, PolicyFactory) and dataclasses.is_dataclass(factory.defaults)
    policy = factory(Config(), 7, factory.defaults)
    assert isinstance(policy, BasePolicy)
    assert build_policy(name, Config(), seed=3).name == policy.name


def test_config_and_seed_reach_every_factory_and_options_are_checked():
    seen: list[tuple[Config, int | None, Any]] = []

    def build(config: Config, seed: int | None, options: _Options) -> SingleShotPolicy:
        seen.append((config, seed, options))
        return SingleShotPolicy(options.top_k)

    probe = Factory(build, _Options(), seeded=True)
    _FACTORIES["probe"] = probe
    register_policy("probe", f"{__name__}:_FACTORIES.probe")
    try:
        config = Config().override({"policy.top_k": "4"})
        assert build_policy("probe", config, seed=11).top_k == 4
        assert seen == [(config, 11, _Options(top_k=4))]
        with pytest.raises(ConfigError, match=r"no option 'depth'; its options: top_k"):
            build_policy("probe", None, {"depth": 2})
    finally:
        POLICIES.pop("probe")
        _FACTORIES.pop("probe")


def test_the_registry_reads_no_signature():
    """Options come from the declared record, never from a factory's parameters."""
    import thresher.policies as registry
    import thresher.policies.factory as factories

    for module in (registry, factories):
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "inspect" not in imported, module.__name__


@dataclasses.dataclass(frozen=True)
class _Options:
    top_k: int = 10


class _Namespace(dict):  # ``module:_FACTORIES.probe`` resolves by attribute
    __getattr__ = dict.__getitem__


_FACTORIES: _Namespace = _Namespace()
