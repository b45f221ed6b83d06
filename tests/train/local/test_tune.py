"""Tuning the local policy's controls by reward: selection (pure), grids, and a real run."""

from __future__ import annotations

import pytest

from thresher.config import Config
from thresher.errors import InputError
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.models import load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import DEFAULT_CONTROLS, LocalPolicy
from thresher.tasks.readers import load_tasks
from thresher.train.local.tune import ControlScore, grid_points, select, tune_controls


def score(stop_at: float, rewards: list[float], tokens: int) -> ControlScore:
    return ControlScore({"stop_at": stop_at}, tuple(rewards), tuple([tokens] * len(rewards)))


def test_select_prefers_the_cheapest_setting_the_reward_cannot_tell_from_the_best():
    best = score(0.9, [1.0, 1.2, 0.8, 1.0], 2000)
    # paired gaps 0.1, -0.1, 0.1, 0.0: mean 0.025, se ~0.048 -> within one se
    close = score(0.8, [0.9, 1.3, 0.7, 1.0], 1500)
    # gaps 0.5 each: mean 0.5, se 0 -> clearly worse, even though cheapest
    worse = score(0.7, [0.5, 0.7, 0.3, 0.5], 1000)
    chosen, top = select([best, close, worse])
    assert top is best and chosen is close
    assert select([best, close, worse], margin=0.0)[0] is best  # no slack: the best only


def test_select_ties_and_empty():
    a, b = score(0.9, [1.0, 1.0], 1000), score(0.8, [1.0, 1.0], 1000)
    assert select([a, b]) == (a, a)
    with pytest.raises(InputError):
        select([])


def test_grid_points_cross_product_and_bad_grids():
    points = grid_points({"stop_at": (0.9, 0.8), "hop_k": (3, 2)})
    assert points[0] == {"stop_at": 0.9, "hop_k": 3} and len(points) == 4
    for bad in ({}, {"stop_at": ()}, {"temperature": (1,)}):
        with pytest.raises(InputError):
            grid_points(bad)


def test_weights_controls_round_trip_and_drive_the_policy(tmp_path):
    from dataclasses import replace

    w = replace(load_weights(), controls={"stop_at": 0.7, "hop_k": 2})
    loaded = load_weights(w.save(tmp_path / "w.json"))
    assert loaded.controls == {"stop_at": 0.7, "hop_k": 2}
    p = LocalPolicy(LocalOptions(weights=loaded))
    assert (p.stop_at, p.hop_k, p.max_hops) == (0.7, 2, DEFAULT_CONTROLS["max_hops"])
    assert (
        LocalPolicy(LocalOptions(weights=loaded, stop_at=0.95)).stop_at == 0.95
    )  # an explicit value wins
    from thresher.train.local.trainer import prior_weights

    assert (
        LocalPolicy(LocalOptions(weights=prior_weights())).stop_at == DEFAULT_CONTROLS["stop_at"]
    )  # no controls
    shipped = load_weights()
    assert LocalPolicy().stop_at == shipped.controls.get("stop_at", DEFAULT_CONTROLS["stop_at"])


def test_tune_controls_on_world_chains(world_index):
    from dataclasses import replace

    from thresher.train.local.tune_runs import LocalEpisodes

    config = Config()
    tasks = load_tasks(world_index.parent / "corpus" / ".world" / "chains.jsonl")[:4]
    seen = []
    # a control the grid does not name keeps the weights' value (here max_hops=1)
    weights = replace(load_weights(), controls={"max_hops": 1})
    with EmbeddedStore(world_index, config) as store:
        report = tune_controls(
            LocalEpisodes([(tasks, store)], config),
            weights,
            grid={"stop_at": (0.9, 0.5)},
            progress=lambda done, total: seen.append((done, total)),
        )
    assert seen[-1] == (8, 8)
    assert [s.controls for s in report.scores] == [{"stop_at": 0.9}, {"stop_at": 0.5}]
    for s in report.scores:
        assert len(s.rewards) == len(s.tokens) == 4
        assert all(-1.0 <= r <= 2.0 for r in s.rewards)
    assert report.chosen in report.scores and report.best.reward >= report.chosen.reward
    assert report.to_dict()["chosen"]["controls"] == report.chosen.controls
    with pytest.raises(InputError):
        LocalEpisodes([([], store)], config)
