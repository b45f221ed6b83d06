"""Token ids and log-probabilities kept as ``sample`` trace events, and the step-wise rows.

The LLM policy asks the replay server (a real HTTP process answering as vLLM does,
with a toy prefix-preserving chat template) for each reply's ids; a SearchEnv is
handed the same ids by its trainer. Both record the same events; replay ignores
them; the exporter cuts an edit-mode rollout at its prune and keeps an append-mode
one whole.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from env.test_search_env import QUESTION, SCRIPT, TASK, drive, parity_config, without_clock
from thresher.env import SearchEnv
from thresher.errors import InputError
from thresher.harness.actions import Sample
from thresher.harness.episode import run_episode
from thresher.harness.render import render_messages
from thresher.harness.state import replay
from thresher.harness.trace import ProposalEvent, Refusal, SampleEvent
from thresher.policies.llm import LLMPolicy
from thresher.testing.replay_server import (
    ReplayServer,
    reply,
    toy_completion_ids,
    toy_logprobs,
    toy_prompt_ids,
)
from thresher.train.stepwise import rollout_rows, stepwise_rows


def policy_for(server: ReplayServer, cfg: Any, **llm: Any) -> LLMPolicy:
    return LLMPolicy(cfg, env={}, base_url=server.base_url, backoff_s=0.01, timeout_s=5.0, **llm)


def toy_sample(step: Any, message: dict[str, Any]) -> dict[str, Any]:
    """The ids a server with the toy template would report for ``message`` sent to ``step``."""
    completion = toy_completion_ids(message)
    return {
        "prompt_ids": toy_prompt_ids({"messages": step.messages, "tools": step.tools}),
        "completion_ids": completion,
        "logprobs": toy_logprobs(completion),
    }


def drive_with_samples(env: SearchEnv, task: Any, script: list[dict[str, Any]]):
    step = env.reset(task)
    for entry in script:
        if step.done:
            break
        message = entry["message"]
        sample = toy_sample(step, message)
        step = env.step(message, finish_reason=entry["finish_reason"], sample=sample)
    return env.rollout()


def check_rows(rows, samples: list[SampleEvent]) -> None:
    """Every mask-1 token is a completion token of a merged turn, in order; every mask-0
    token is what a prompt appended; weights sum to 1."""
    by_turn = {s.turn: s for s in samples}
    assert sum(r.weight for r in rows) == pytest.approx(1.0)
    for row in rows:
        assert len(row.loss_mask) == len(row.completion_ids) == len(row.logprobs)
        masked_in = [t for t, m in zip(row.completion_ids, row.loss_mask, strict=True) if m]
        assert masked_in == [i for t in row.turns for i in by_turn[t].completion_ids]
        assert row.prompt_ids == by_turn[row.turns[0]].prompt_ids
        # the last turn's prompt is the row's ids up to its completion
        last = by_turn[row.turns[-1]]
        full = row.prompt_ids + row.completion_ids
        assert full == last.prompt_ids + last.completion_ids
        lps = [lp for lp, m in zip(row.logprobs, row.loss_mask, strict=True) if m]
        assert lps == [lp for t in row.turns for lp in by_turn[t].logprobs]


@pytest.mark.server
def test_llm_policy_asks_vllm_for_tokens_and_records_them(tmp_path, store, config):
    cfg = parity_config(config).override({"llm.return_tokens": True})
    with ReplayServer(SCRIPT, tmp_path / "replay", tokens=True) as server:
        trace = run_episode(QUESTION, store, policy_for(server, cfg), cfg).trace
        bodies = server.chat_requests()
    assert trace[-1].exit_reason == "answered"
    assert all(b["return_token_ids"] is True and b["logprobs"] is True for b in bodies)
    samples = [e for e in trace if isinstance(e, SampleEvent)]
    assert [s.turn for s in samples] == [0, 1, 2, 3]
    for sample, body, entry in zip(samples, bodies, SCRIPT, strict=True):
        assert sample.prompt_ids == toy_prompt_ids(body)
        assert sample.completion_ids == toy_completion_ids(entry["message"])
        assert sample.logprobs == toy_logprobs(sample.completion_ids)
        assert sample.model == "replay"
        before = trace[sample.seq - 1]
        assert isinstance(before, ProposalEvent) and before.turn == sample.turn
    # but for the samples (and the setting's value) the trace is the one asked without
    with ReplayServer(SCRIPT, tmp_path / "plain") as server:
        plain_cfg = parity_config(config)
        plain = run_episode(QUESTION, store, policy_for(server, plain_cfg), plain_cfg).trace
    bare = [e for e in trace if not isinstance(e, SampleEvent)]

    def unsequenced(events) -> list[str]:
        lines = without_clock(events)
        out = []
        for line in lines:
            data = json.loads(line)
            data.pop("seq")
            data.get("config", {}).get("llm", {}).pop("return_tokens", None)
            out.append(json.dumps(data, sort_keys=True))
        return out

    assert unsequenced(bare) == unsequenced(plain)
    # the trace replays to the same state as without the samples
    for turn in (None, 1, 3):
        full, stripped = replay(trace, turn), replay(bare, turn)
        assert render_messages(full) == render_messages(stripped)
        for f in dataclasses.fields(full):
            if f.name != "trace":
                assert getattr(full, f.name) == getattr(stripped, f.name), f.name
    # from the trace alone the prune's rewrite shows in the ids: two rows
    rows = stepwise_rows(trace, 0.5)
    assert [r.turns for r in rows] == [(0, 1, 2), (3,)]
    assert [r.starts for r in rows] == ["first", "tokens"]
    assert all(r.advantage == 0.5 for r in rows)
    check_rows(rows, samples)


@pytest.mark.server
def test_off_by_default_nothing_is_asked_nor_recorded(tmp_path, store, config):
    cfg = parity_config(config)
    with ReplayServer(SCRIPT, tmp_path / "tok", tokens=True) as server:
        with_tokens = run_episode(QUESTION, store, policy_for(server, cfg), cfg).trace
        bodies = server.chat_requests()
    with ReplayServer(SCRIPT, tmp_path / "plain") as server:
        plain = run_episode(QUESTION, store, policy_for(server, cfg), cfg).trace
    assert not any("return_token_ids" in b or "logprobs" in b for b in bodies)
    assert not any(isinstance(e, SampleEvent) for e in with_tokens)
    assert without_clock(with_tokens) == without_clock(plain)


@pytest.mark.server
def test_ids_a_server_sends_unasked_are_recorded_even_for_a_refused_reply(tmp_path, store, config):
    cfg = parity_config(config)
    script = [
        reply(content="Let me think.", prompt_token_ids=[5, 6, 7], token_ids=[8, 9]),
        reply(content="Still thinking.", prompt_token_ids=[1], token_ids=[2], logprobs=[0.5]),
        *SCRIPT,
    ]
    with ReplayServer(script, tmp_path / "replay") as server:
        trace = run_episode(QUESTION, store, policy_for(server, cfg), cfg).trace
    first, second = [e for e in trace if isinstance(e, SampleEvent)]
    assert (first.prompt_ids, first.completion_ids, first.logprobs) == ([5, 6, 7], [8, 9], None)
    assert (second.completion_ids, second.logprobs) == ([2], [0.5])
    kinds = [type(e).__name__ for e in trace if e.turn == 0]
    assert kinds[kinds.index("ProposalEvent") :][:3] == ["ProposalEvent", "SampleEvent", "Refusal"]
    assert isinstance(trace[first.seq + 1], Refusal)


@pytest.mark.server
def test_search_env_records_a_trainers_ids_as_the_llm_policy_records_the_servers(
    tmp_path, store, config
):
    cfg = parity_config(config).override({"llm.return_tokens": True})
    with ReplayServer(SCRIPT, tmp_path / "replay", tokens=True) as server:
        through_policy = run_episode(QUESTION, store, policy_for(server, cfg), cfg).trace
    rollout = drive_with_samples(SearchEnv(store, cfg, model="replay"), QUESTION, SCRIPT)
    assert without_clock(rollout.trace) == without_clock(through_policy)


def test_edit_rollout_with_a_prune_gives_two_rows_and_append_one(store, config):
    edit = drive_with_samples(SearchEnv(store, config), TASK, SCRIPT)
    samples = [e for e in edit.trace if isinstance(e, SampleEvent)]
    rows = rollout_rows(edit, 1.25)
    assert [r.turns for r in rows] == [(0, 1, 2), (3,)]
    assert [r.starts for r in rows] == ["first", "rewrite"]
    assert [r.weight for r in rows] == [0.5, 0.5]
    assert {r.advantage for r in rows} == {1.25}
    check_rows(rows, samples)
    # the mask is 0 on exactly what the prompts appended: the tool results
    first = rows[0]
    assert first.loss_mask.count(0) == len(samples[2].prompt_ids) - len(samples[0].prompt_ids) - (
        len(samples[0].completion_ids) + len(samples[1].completion_ids)
    )

    append = drive_with_samples(SearchEnv(store, config, mode="append"), TASK, SCRIPT)
    (row,) = rollout_rows(append, -0.5)
    assert row.turns == (0, 1, 2, 3) and row.weight == 1.0 and row.starts == "first"
    check_rows([row], [e for e in append.trace if isinstance(e, SampleEvent)])
    # the same replies: the same trace but for the samples, and the same reward
    assert append.reward == edit.reward


def test_a_turn_without_ids_breaks_the_row_and_a_trace_without_any_is_refused(store, config):
    env = SearchEnv(store, config, mode="append")
    step = env.reset(TASK)
    for i, entry in enumerate(SCRIPT):
        sample = None if i == 1 else toy_sample(step, entry["message"])
        step = env.step(entry["message"], sample=sample)
    rows = rollout_rows(env.rollout(), 0.0)
    assert [(r.turns, r.starts) for r in rows] == [((0,), "first"), ((2, 3), "gap")]

    bare = SearchEnv(store, config)
    drive(bare, TASK, SCRIPT)
    with pytest.raises(InputError, match="no sample events.*llm.return_tokens"):
        rollout_rows(bare.rollout(), 0.0)


def test_a_sample_of_the_wrong_shape_is_refused_before_the_reply_is_taken(store, config):
    env = SearchEnv(store, config)
    env.reset(TASK)
    message = SCRIPT[0]["message"]
    bad: list[Any] = [
        {"prompt_ids": [1, -2], "completion_ids": [3]},
        {"prompt_ids": [1], "completion_ids": [3, 4], "logprobs": [-0.1]},
        {"prompt_ids": [1], "completion_ids": [True]},
        {"prompt_ids": [1], "completion_ids": [3], "logprobs": [float("nan")]},
        [1, 2, 3],
    ]
    for sample in bad:
        with pytest.raises(InputError, match="sample"):
            env.step(message, sample=sample)
    step = env.step(message, sample=Sample.of([1, 2], [3], [-0.25]))
    assert not step.done and not step.info["refusals"]
    (event,) = [e for e in env._events if isinstance(e, SampleEvent)]
    assert (event.prompt_ids, event.completion_ids, event.logprobs) == ([1, 2], [3], [-0.25])
