"""Tuning the local policy's constants: the steps tried and when one is taken (pure)."""

from __future__ import annotations

import re

import pytest

from thresher.errors import InputError
from thresher.policies.local.models import load_weights
from thresher.train.local.tune_constants import DEFAULT_TUNED, _better, candidates, tune_constants


def test_candidates_step_floats_by_factor_and_integers_by_one():
    assert candidates(1.2) == [0.6, 1.8]
    assert candidates(4) == [3, 5]
    assert candidates(0) == [1]  # never below zero


def test_a_step_is_taken_only_past_the_noise():
    base = [1.0, 1.0, 1.0, 1.0]
    assert _better([1.2, 1.2, 1.2, 1.2], base, margin=1.0)  # clear gain, no spread
    assert not _better([1.4, 0.8, 1.3, 0.7], base, margin=1.0)  # a gain within the noise
    assert not _better(base, base, margin=0.0)  # a tie is no step


def test_default_tuned_are_constants_and_unknown_names_are_refused(world_index):
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.tasks.readers import load_tasks
    from thresher.train.local.tune_runs import LocalEpisodes

    known = load_weights().constants.values()
    assert set(DEFAULT_TUNED) <= set(known)
    tasks = load_tasks(world_index.parent / "corpus" / ".world" / "chains.jsonl")[:1]
    with EmbeddedStore(world_index, Config()) as store:
        episodes = LocalEpisodes([(tasks, store)], Config())
        with pytest.raises(InputError, match="unknown constants"):
            tune_constants(episodes, load_weights(), names=["temperature"])


def test_a_coordinate_search_names_its_data_and_keeps_a_value_nothing_beats(world_index):
    """Two constants on two tasks: every trial recorded, the data named in ``tuned_on``."""
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.tasks.readers import load_tasks
    from thresher.train.local.tune_runs import LocalEpisodes

    tasks = load_tasks(world_index.parent / "corpus" / ".world" / "chains.jsonl")[:2]
    seen: list[tuple[int, int]] = []
    with EmbeddedStore(world_index, Config()) as store:
        report = tune_constants(
            LocalEpisodes([(tasks, store)], Config()),
            load_weights(),
            names=["cue_bonus", "hop_anchors"],
            source="world/chains.jsonl (2)",
            margin=1000.0,  # no step can win by that much: the values stay
            progress=lambda done, total: seen.append((done, total)),
        )
    assert seen[-1] == (10, 10)  # (1 + 2 + 2) settings x 2 tasks
    assert [(t.name, t.value) for t in report.trials] == [
        ("cue_bonus", 1.2), ("cue_bonus", 0.6), ("cue_bonus", 1.8),
        ("hop_anchors", 3), ("hop_anchors", 2), ("hop_anchors", 4),
    ]  # fmt: skip
    assert report.constants.values() == load_weights().constants.values()
    assert report.constants.tuned_on.startswith("coordinate search on world/chains.jsonl (2)")
    assert report.to_dict()["changed"] == {} and report.tasks == 2


def test_the_shipped_constants_name_their_tuning_data_and_every_trial():
    """The shipped file's constants come from a coordinate search on generated worlds
    (never a dev pool), each task file named with its count, every trial kept."""
    shipped = load_weights()
    tuned_on = shipped.constants.tuned_on
    assert tuned_on.startswith("coordinate search on worlds/")
    assert "hotpot" not in tuned_on and "musique" not in tuned_on and "2wiki" not in tuned_on
    search = shipped.meta["tuned_constants"]
    assert {t["name"] for t in search["trials"]} == set(DEFAULT_TUNED)
    assert search["tasks"] == sum(int(n) for n in re.findall(r"\((\d+)\)", tuned_on))
