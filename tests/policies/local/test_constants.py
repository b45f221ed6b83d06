"""The weights file's constants section: read, written, checked, and driving the policy."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from thresher.errors import ConfigError
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.memo import cued_spans
from thresher.policies.local.models import DEFAULT_WEIGHTS, load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy


def test_the_shipped_file_carries_every_constant_with_its_meaning():
    section = json.loads(DEFAULT_WEIGHTS.read_text(encoding="utf-8"))["constants"]
    assert set(section["values"]) == set(DEFAULT_CONSTANTS.values())
    for name, entry in section["values"].items():
        assert entry["meaning"] and "\n" not in entry["meaning"], name
    assert load_weights().constants.values() == DEFAULT_CONSTANTS.values()


def test_constants_round_trip_and_a_file_without_them_takes_the_defaults(tmp_path):
    weights = replace(load_weights(), constants=replace(DEFAULT_CONSTANTS, cue_bonus=0.7))
    path = weights.save(tmp_path / "w.json")
    assert load_weights(path).constants.cue_bonus == 0.7
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["constants"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_weights(path).constants == Constants()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"temperature": {"value": 1}}, "unknown constants temperature"),
        ({"cue_bonus": {"value": "high"}}, "must be a number"),
        ({"cue_before": {"value": 2.5}}, "whole number"),
    ],
)
def test_bad_constants_are_refused_with_the_file_named(tmp_path, values, message):
    data = json.loads(DEFAULT_WEIGHTS.read_text(encoding="utf-8"))
    data["constants"] = {"values": values}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as err:
        load_weights(path)
    assert str(path) in str(err.value)


def test_the_policy_hands_its_weights_constants_to_its_parts():
    constants = replace(DEFAULT_CONSTANTS, hop_anchors=2, rule_stop_p=0.7, chain_depth=1)
    policy = LocalPolicy(LocalOptions(weights=replace(load_weights(), constants=constants)))
    session = policy.start("Who directed Big Eyes?")
    assert session.planner.constants is constants
    assert session.scorer.constants is constants
    assert session.answer.constants is constants
    assert session.planner.stop.constants is constants
    assert session.memory.chain().depth == 1


def test_a_constant_changes_what_the_policy_reads():
    sent = "big eyes is a 2014 film directed by tim burton and starring amy adams"
    spans = ["Tim Burton", "Amy Adams"]
    relation = frozenset({"direct"})
    assert set(cued_spans(sent, spans, relation)) == {"tim burton"}
    assert cued_spans(sent, spans, relation, before=0, after=0) == {}
