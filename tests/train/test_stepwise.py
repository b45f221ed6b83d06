"""The step-wise exporter on hand-made sample events, and GRPO's group advantages.

(The exporter on real rollouts, edit and append mode, is in tests/env/test_samples.py.)
"""

from __future__ import annotations

import pytest

from thresher.errors import InputError
from thresher.harness.trace import ProposalEvent, SampleEvent
from thresher.train.stepwise import NoSamplesError, group_advantages, stepwise_rows


def sample(turn: int, prompt: list[int], completion: list[int], logprobs=None) -> SampleEvent:
    return SampleEvent(turn=turn, prompt_ids=prompt, completion_ids=completion, logprobs=logprobs)


def test_turns_that_extend_the_row_merge_with_the_appended_ids_masked_out():
    trace = [
        ProposalEvent(turn=0),
        sample(0, [1, 2], [3, 4], [-0.1, -0.2]),
        sample(1, [1, 2, 3, 4, 9, 9], [5], [-0.3]),
        sample(2, [1, 2, 3, 4, 9, 9, 5, 8], [6, 7], [-0.4, -0.5]),
    ]
    (row,) = stepwise_rows(trace, 2.0)
    assert row.prompt_ids == [1, 2]
    assert row.completion_ids == [3, 4, 9, 9, 5, 8, 6, 7]
    assert row.loss_mask == [1, 1, 0, 0, 1, 0, 1, 1]
    assert row.logprobs == [-0.1, -0.2, 0.0, 0.0, -0.3, 0.0, -0.4, -0.5]
    assert (row.weight, row.advantage, row.turns, row.starts) == (1.0, 2.0, (0, 1, 2), "first")
    assert row.to_dict()["loss_mask"] == row.loss_mask


def test_a_rewrite_drifted_ids_or_a_gap_start_a_new_row_each_weighing_a_share():
    trace = [
        sample(0, [1], [2]),
        sample(1, [1, 2, 3], [4]),  # extends: merged
        sample(2, [1, 2, 3, 4, 5], [6]),  # extends, but the history was rewritten
        sample(3, [1, 2, 3, 4, 5, 7], [8]),  # the ids drifted (6 re-rendered as 7)
        sample(5, [1, 2, 3, 4, 5, 7, 8, 9], [10]),  # turn 4 has no sample
    ]
    rows = stepwise_rows(trace, -1.0, prefix_preserved=[True, True, False, True, True, True])
    assert [(r.turns, r.starts) for r in rows] == [
        ((0, 1), "first"),
        ((2,), "rewrite"),
        ((3,), "tokens"),
        ((5,), "gap"),
    ]
    assert [r.weight for r in rows] == [0.25] * 4 and sum(r.weight for r in rows) == 1.0
    assert all(r.logprobs is None for r in rows)
    assert rows[1].prompt_ids == [1, 2, 3, 4, 5] and rows[1].loss_mask == [1]
    # the ids alone: the rewrite that kept the ids merges
    assert [r.turns for r in stepwise_rows(trace, 0.0)] == [(0, 1, 2), (3,), (5,)]


def test_a_turn_without_logprobs_leaves_its_row_without():
    rows = stepwise_rows([sample(0, [1], [2], [-1.0]), sample(1, [1, 2], [3])], 0.0)
    assert rows[0].logprobs is None and rows[0].loss_mask == [1, 1]


def test_a_trace_without_samples_is_refused_with_what_to_do():
    with pytest.raises(NoSamplesError, match="llm.return_tokens=true.*sample=") as caught:
        stepwise_rows([ProposalEvent(turn=0)], 1.0)
    assert isinstance(caught.value, InputError)


def test_group_advantages_centre_and_scale_the_scorable_rewards():
    adv = group_advantages([1.0, 0.0, None, 0.5])
    assert adv[2] == 0.0
    assert adv[0] == pytest.approx(0.5 / (0.5 + 1e-4)) and adv[1] == pytest.approx(-adv[0])
    assert adv[3] == pytest.approx(0.0)
    assert group_advantages([1.0, 0.0], scale=False) == [0.5, -0.5]
    # no signal: all equal, one scorable, or none
    assert group_advantages([0.7, 0.7, None]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.7, None]) == [0.0, 0.0]
    assert group_advantages([]) == []
    for bad in (float("nan"), True, "1"):
        with pytest.raises(InputError, match="finite number or None"):
            group_advantages([1.0, bad])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "fields",
    [
        {"prompt_ids": "abc", "completion_ids": [1]},
        {"prompt_ids": [1], "completion_ids": [1, 2], "logprobs": [-1.0]},
        {"prompt_ids": [1], "completion_ids": [{"id": 1}]},
        {"prompt_ids": [1], "completion_ids": [1], "turn": "0"},
    ],
    ids=["text-ids", "logprobs-short", "object-ids", "text-turn"],
)
def test_a_sample_event_of_the_wrong_shape_is_an_input_error_naming_it(fields):
    event = SampleEvent(seq=4, **{"turn": 0, **fields})
    with pytest.raises(InputError, match=r"trace event 4 \(sample of turn"):
        stepwise_rows([event], 0.0)
