"""SearchEnv driven with hand-written replies on the harness tests' real index.

The replies are the replay server's scripted entries (``reply``/``tool_call``): the
same list drives a SearchEnv directly and an LLMPolicy over real HTTP, and the two
traces must match event for event.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from thresher.config import Config
from thresher.env import SearchEnv
from thresher.errors import InputError
from thresher.harness.episode import run_episode
from thresher.harness.trace import ProposalEvent, Refusal, ToolResult
from thresher.policies.llm import LLMPolicy
from thresher.tasks.task import Task
from thresher.testing.replay_server import ReplayServer, reply, tool_call
from thresher.train.rewards import reward

QUESTION = "In which province is the town where the Halvard Glassworks was founded?"
TASK = Task(
    task_id="t1",
    question=QUESTION,
    answer="Tessaly",
    gold_doc_ids=["glassworks", "marrowick"],
)
FINAL = (
    '<Document id="glassworks"><Justification>Founded in Marrowick.</Justification></Document>'
    '<Document id="marrowick"><Justification>Marrowick lies in Tessaly.</Justification>'
    "</Document>"
)
#: search, search, prune three distractors, answer citing two kept chunks' documents
SCRIPT = [
    reply(tool_call("search_corpus", {"query": "Halvard Glassworks founded"})),
    reply(tool_call("search_corpus", {"query": "Marrowick province"})),
    reply(tool_call("prune_chunks", {"chunk_ids": ["town-00#0", "town-04#0", "town-02#0"]})),
    reply(content=FINAL),
]
#: the same path with refused replies on the way: prose that is no action, arguments
#: that are not JSON, a call written as text (read, as the LLM policy reads it)
WITH_REFUSALS = [
    reply(content="Let me think about which town this is."),
    reply(tool_call("search_corpus", "{query: Halvard")),
    reply(
        content='<tool_call>{"name": "search_corpus", "arguments": '
        '{"query": "Halvard Glassworks founded"}}</tool_call>'
    ),
    *SCRIPT[1:],
]
#: fields that hold clock readings (event time, start date, reply and episode seconds)
CLOCK_FIELDS = ("t", "started_at", "elapsed_s", "wall_s")


def parity_config(config: Config) -> Config:
    """The replies read as SearchEnv reads them: no constrained first request."""
    return config.override({"llm.first_tool_choice": "auto", "llm.first_response_format": "none"})


def drive(env: SearchEnv, task: Any, script: list[dict[str, Any]]):
    """Reset ``env`` on ``task`` and answer each prompt with the script's next message."""
    steps = [env.reset(task)]
    for entry in script:
        if steps[-1].done:
            break
        steps.append(env.step(entry["message"], finish_reason=entry["finish_reason"]))
    return steps


def without_clock(trace) -> list[str]:
    out = []
    for event in trace:
        data = {k: v for k, v in event.to_dict().items() if k not in CLOCK_FIELDS}
        out.append(json.dumps(data, sort_keys=True))
    return out


def test_scripted_rollout_is_answered_with_the_rewards_reward(store, config):
    env = SearchEnv(store, config, model="scripted")
    steps = drive(env, TASK, SCRIPT)
    assert [s.done for s in steps] == [False] * 4 + [True]
    assert steps[0].messages[0]["role"] == "system" and steps[0].tools
    assert steps[-1].info["exit_reason"] == "answered"
    rollout = env.rollout()
    assert rollout.result.exit_reason.value == "answered"
    assert {d.doc_id for d in rollout.result.documents} == {"glassworks", "marrowick"}
    assert [t.reply for t in rollout.turns] == [e["message"] for e in SCRIPT]
    expected = reward(list(rollout.trace), TASK)
    assert rollout.reward == expected and steps[-1].reward == expected.total
    assert expected.recall == 1.0 and expected.answer_retrieved
    pruned = [e for e in rollout.trace if isinstance(e, ToolResult) and e.tool == "prune_chunks"]
    assert pruned[0].status == "ok" and len(pruned[0].pruned) == 3


def test_prefix_is_lost_only_on_the_turn_after_a_prune(store, config):
    steps = drive(SearchEnv(store, config), TASK, SCRIPT)
    assert [s.prefix_preserved for s in steps[:4]] == [True, True, True, False]
    # a search only appends: the assistant's call and its result
    assert [m["role"] for m in steps[1].appended] == ["assistant", "tool"]
    assert steps[1].messages[: len(steps[0].messages)] == steps[0].messages
    # after the prune the history was rewritten: the whole prompt is new
    assert steps[3].appended == steps[3].messages
    assert steps[3].messages[: len(steps[2].messages)] != steps[2].messages


@pytest.mark.server
@pytest.mark.parametrize("script", [SCRIPT, WITH_REFUSALS], ids=["clean", "refusals"])
def test_same_replies_same_trace_as_the_llm_policy(tmp_path, store, config, script):
    cfg = parity_config(config)
    env = SearchEnv(store, cfg, model="replay")
    drive(env, QUESTION, script)
    through_env = env.rollout().trace
    with ReplayServer(script, tmp_path / "replay") as server:
        policy = LLMPolicy(cfg, env={}, base_url=server.base_url, backoff_s=0.01, timeout_s=5.0)
        through_policy = run_episode(QUESTION, store, policy, cfg).trace
    assert without_clock(through_env) == without_clock(through_policy)
    assert through_env[-1].exit_reason == "answered"


def test_raw_text_and_malformed_replies_are_refused_as_the_llm_policy_refuses(store, config):
    steps = drive(SearchEnv(store, config), TASK, WITH_REFUSALS)
    assert [r["code"] for r in steps[1].info["refusals"]] == ["no_action"]
    assert [r["code"] for r in steps[2].info["refusals"]] == ["invalid_json_arguments"]
    assert steps[3].info["refusals"] == []  # the call written as text was read and run
    assert steps[-1].info["exit_reason"] == "answered"
    trace = SearchEnv(store, config)
    trace_events = drive(trace, TASK, WITH_REFUSALS) and trace.rollout().trace
    proposals = [e for e in trace_events if isinstance(e, ProposalEvent)]
    assert [p.valid for p in proposals] == [False, False, True, True, True, True]
    refused = [e for e in trace_events if isinstance(e, Refusal) and e.call_id is None]
    assert len(refused) == 2
    # a refused reply is answered in the next prompt, as the LLM policy sends it
    assert "Refused: " in json.dumps(steps[1].appended)


def test_too_many_refused_replies_end_the_episode_as_for_the_llm_policy(store, config):
    cfg = config.override({"llm.max_malformed": 2})
    steps = drive(SearchEnv(store, cfg), TASK, [reply(content="no idea")] * 4)
    assert steps[-1].done and steps[-1].info["exit_reason"] == "policy_error"
    assert steps[-1].reward is not None  # scored: the task has gold documents


def test_misuse_is_refused_with_what_to_do(store, config):
    env = SearchEnv(store, config)
    with pytest.raises(InputError, match="reset"):
        env.step("hello")
    with pytest.raises(InputError, match="step until"):
        env.reset(TASK) and env.rollout()
    with pytest.raises(InputError, match="edit, append"):
        SearchEnv(store, config, mode="graph")


#: a prune, a final answer citing only the pruned chunk (refused by the harness), then a
#: final answer citing kept ones
PRUNED_CITED = [
    *SCRIPT[:3],
    reply(content='<Document id="town-00"><Justification>Aldergate.</Justification></Document>'),
    reply(content=FINAL),
]


def text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def test_append_mode_only_grows_and_the_harness_still_evicts(store, config):
    edit, append = SearchEnv(store, config), SearchEnv(store, config, mode="append")
    edit_steps = drive(edit, TASK, PRUNED_CITED)
    steps = drive(append, TASK, PRUNED_CITED)
    assert all(s.prefix_preserved for s in steps)
    for before, after in zip(steps[:-1], steps[1:-1], strict=False):
        assert after.messages == before.messages + after.appended
    # the pruned chunk is still in the append prompt as it was shown; edit mode stubs it
    shown = '<chunk id="town-00#0"'
    assert shown in text(steps[3].messages) and shown not in text(edit_steps[3].messages)
    # ...and the harness evicted it all the same: citing it is refused, in both modes
    for run in (steps, edit_steps):
        assert [r["code"] for r in run[4].info["refusals"]] == ["final_cites_pruned"]
        assert run[-1].info["exit_reason"] == "answered"
    # a reply the harness refused on its own checks: the reply as given, then the refusal
    assert steps[4].appended[0] == PRUNED_CITED[3]["message"]
    assert steps[4].appended[1]["role"] == "user" and "pruned" in steps[4].appended[1]["content"]
    assert not edit_steps[4].prefix_preserved  # edit mode merges it into the last result
    # the same replies give the same episode: the mode changes only the prompt
    assert without_clock(append.rollout().trace) == without_clock(edit.rollout().trace)
    assert append.rollout().reward == edit.rollout().reward


def test_importing_the_environment_loads_no_trainer_stack():
    code = (
        "import sys; from thresher.env import SearchEnv; "
        "print(sorted(m for m in ('torch', 'trl', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_reset_starts_afresh_with_the_same_environment(store, config):
    env = SearchEnv(store, config, mode="append")
    env.reset(TASK)
    env.step(SCRIPT[0]["message"])  # an episode dropped mid-way
    steps = drive(env, TASK, SCRIPT)
    assert steps[0].messages[-1]["role"] == "user" and len(steps[0].messages) == 2
    assert steps[-1].info["exit_reason"] == "answered" and len(env.rollout().turns) == 4
