"""thresher.integrations.trl driven by hand, as TRL drives it, without TRL.

TRL calls ``reset(**row)``, then one tool method per parsed call with the call's arguments as
keywords, then the reward function with the rollouts' messages and environments. These tests
do the same on the harness tests' real index (the 2-hop Halvard Glassworks corpus).
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import pytest

from thresher.errors import InputError
from thresher.harness.state import replay
from thresher.harness.tools import TOOLS
from thresher.integrations.trl import (
    ThresherToolEnv,
    build_dataset,
    environment_factory,
    finish,
    task_from_row,
    thresher_reward,
    tool_docstring,
)
from thresher.tasks.task import Task
from thresher.train.curriculum import Curriculum, task_hops
from thresher.train.rewards import reward

QUESTION = "In which province is the town where the Halvard Glassworks was founded?"
TASK = Task(
    task_id="t1", question=QUESTION, answer="Tessaly", gold_doc_ids=["glassworks", "marrowick"]
)
FINAL = (
    '<Document id="glassworks"><Justification>Founded in Marrowick.</Justification></Document>'
    '<Document id="marrowick"><Justification>Marrowick lies in Tessaly.</Justification>'
    "</Document>"
)
#: the Python type each JSON Schema type of a tool argument stands for
JSON_TYPES = {"string": str, "array": list[str]}


class TrainerState:
    """What TRL passes reward functions as ``trainer_state`` (only the step is read)."""

    def __init__(self, global_step: int) -> None:
        self.global_step = global_step


def final(content: str = FINAL) -> list[dict[str, Any]]:
    """A rollout's messages as TRL hands them to the reward: ending with the final reply."""
    return [{"role": "assistant", "content": content}]


@pytest.fixture
def env(store, config) -> ThresherToolEnv:
    environment = environment_factory(store, config)()
    environment.reset(**build_dataset([TASK])[0])
    return environment


def google_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(description, {argument: description}) read as transformers reads a Google docstring."""
    description, _, args = doc.partition("\n\nArgs:\n")
    lines = [line.strip() for line in args.splitlines() if line.strip()]
    return description.strip(), dict(line.split(": ", 1) for line in lines)


def test_the_tool_methods_are_thresher_s_tools_as_its_schemas_describe_them(store, config):
    env = environment_factory(store, config)()
    public = {
        name
        for name, _ in inspect.getmembers(env, predicate=inspect.ismethod)
        if not name.startswith("_")
    }
    assert public == {spec.name for spec in TOOLS} | {"reset"}  # every public method is a tool
    for spec in TOOLS:
        schema = spec.schema(config)["function"]
        method = getattr(env, spec.name)
        assert method.__doc__ == tool_docstring(spec, config)
        description, arguments = google_docstring(method.__doc__)
        assert description == schema["description"]
        properties = schema["parameters"]["properties"]
        assert arguments == {name: p["description"] for name, p in properties.items()}
        signature = inspect.signature(method)
        assert list(signature.parameters) == schema["parameters"]["required"] == list(properties)
        for name, p in properties.items():
            assert signature.parameters[name].annotation == JSON_TYPES[p["type"]]
            assert method.__annotations__[name] == JSON_TYPES[p["type"]]
        # nothing in a description that a docstring parser would take for a new section
        for text in (description, *arguments.values()):
            assert not re.search(r"\n\s*\w+:", text) and "Args:" not in text


def test_reset_returns_the_first_user_text_and_the_row_carries_the_system_prompt(store, config):
    env = environment_factory(store, config)()
    row = build_dataset([TASK])[0]
    text = env.reset(**row)
    assert env.step is not None and env.step.messages[-1]["content"] == text
    assert text.startswith(QUESTION) and "[Token usage:" in text
    assert row["prompt"][:-1] == env.step.messages[:-1]  # TRL's prompt = the env's first one
    with pytest.raises(InputError, match="system prompt"):
        env.reset(**build_dataset([TASK], system_prompt="You are a helpful assistant.")[0])


def test_a_call_returns_what_the_harness_appends_after_it(env):
    text = env.search_corpus(query="Halvard Glassworks founded")
    assert text.startswith("search_corpus: ") and 'doc="glassworks"' in text
    assert "[Token usage:" in text
    assert env.step is not None and env.step.prefix_preserved and not env.step.done


def test_a_bad_argument_is_answered_with_the_harness_refusal_not_an_exception(env):
    text = env.search_corpus(qury="Halvard")  # the wrong name reaches the harness's validator
    assert text.startswith("Refused: search_corpus needs the argument 'query'")
    assert env.step is not None
    assert [r["code"] for r in env.step.info["refusals"]] == ["missing_argument"]
    assert env.prune_chunks(chunk_ids=7).startswith("Refused: 'chunk_ids' of prune_chunks")


def test_the_final_reply_ends_the_episode_with_the_rewards_reward(env):
    env.search_corpus(query="Halvard Glassworks founded")
    env.search_corpus(query="Marrowick province")
    env.prune_chunks(chunk_ids=["town-00#0"])
    (total,) = thresher_reward([final()], [env])
    rollout = env.search_env.rollout()
    assert rollout.result.exit_reason.value == "answered"
    expected = reward(list(rollout.trace), TASK, env.search_env.reward_beta)
    assert total == expected.total and rollout.reward == expected
    assert expected.recall == 1.0
    # the trace replays to the state the episode ended in
    state = replay(rollout.trace)
    assert state.exit_reason == "answered" and state.tool_calls == rollout.result.tool_calls
    assert [d["doc_id"] for d in state.final or []] == ["glassworks", "marrowick"]
    assert "town-00#0" in state.pruned and "town-00#0" not in state.context
    # a second reward call (TRL calls each reward function once; another one may follow) agrees
    assert thresher_reward([final()], [env]) == [total]


def test_a_final_reply_citing_a_pruned_chunk_ends_policy_error_and_is_scored(env):
    env.search_corpus(query="Halvard Glassworks founded")
    env.prune_chunks(chunk_ids=["glassworks#0"])
    (total,) = thresher_reward([final()], [env])
    rollout = env.search_env.rollout()
    assert rollout.result.exit_reason.value == "policy_error"
    assert "pruned" in rollout.result.message
    assert total is not None and total == reward(list(rollout.trace), TASK).total


@pytest.mark.parametrize(
    "completion",
    [
        [{"role": "tool", "name": "search_corpus", "content": "..."}],  # cut after a tool result
        final("I think it is Tessaly."),  # prose: no document named
    ],
    ids=["no-final-reply", "prose"],
)
def test_a_rollout_without_an_accepted_final_reply_is_the_policy_s_end(env, completion):
    env.search_corpus(query="Halvard Glassworks founded")
    step = finish(env, completion)
    assert step.done and step.info["exit_reason"] == "policy_error"
    assert step.reward is not None and step.info["unscorable"] is None


def test_an_episode_ended_by_a_cap_inside_a_call_keeps_its_reward(store, config):
    env = environment_factory(store, config.override({"episode.max_turns": 2}))()
    env.reset(**build_dataset([TASK])[0])
    env.search_corpus(query="Halvard Glassworks founded")
    ended = env.search_corpus(query="Marrowick province")
    assert ended.startswith("The episode has ended (max_turns")
    assert env.grep_corpus(pattern="Tessaly") == ended  # later calls are told the same
    (total,) = thresher_reward([final()], [env])
    assert total is not None and total == env.search_env.rollout().reward.total


def test_the_reward_s_beta_follows_the_trainer_s_step(store, config):
    curriculum = Curriculum(total_steps=10)
    make = environment_factory(store, config, curriculum=curriculum)
    envs = [make(), make()]
    for e in envs:
        e.reset(**build_dataset([TASK])[0])
        e.search_corpus(query="Halvard Glassworks founded")
    metrics: dict[str, list[float]] = {}
    extra: dict[str, list[Any]] = {}
    rewards = thresher_reward(
        [final(), final()],
        envs,
        trainer_state=TrainerState(5),
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
    )
    for e, total in zip(envs, rewards, strict=True):
        assert e.step is not None and e.step.info["beta"] == curriculum.beta(5) == 3.0
        assert total == reward(list(e.search_env.rollout().trace), TASK, 3.0).total
    assert extra["exit_reason"] == ["answered", "answered"]
    assert metrics["thresher/unscorable"] == [0.0] and "thresher/recall" in metrics


def test_a_step_callable_sets_the_step_at_reset(store, config):
    curriculum = Curriculum(total_steps=10)
    env = environment_factory(store, config, curriculum=curriculum, step=lambda: 10)()
    env.reset(**build_dataset([TASK])[0])
    env.search_corpus(query="Halvard Glassworks founded")
    (total,) = thresher_reward([final()], [env])  # no trainer_state: the step stays 10
    assert env.step is not None and env.step.info["beta"] == curriculum.beta(10) == 2.0


def test_other_environments_are_left_to_other_reward_functions(env):
    assert thresher_reward([final(), final()], [object(), env])[0] is None


def test_a_row_without_gold_documents_is_not_scored(store, config):
    env = environment_factory(store, config)()
    env.reset(question=QUESTION)
    env.search_corpus(query="Halvard Glassworks founded")
    assert thresher_reward([final()], [env]) == [None]
    with pytest.raises(InputError, match="'task'"):
        task_from_row({"prompt": []})


def test_only_append_mode_is_offered(store, config):
    with pytest.raises(InputError, match="append"):
        environment_factory(store, config, mode="edit")


def test_rows_are_json_tasks_in_order_or_by_the_curriculum_s_hops():
    tasks = [
        Task(
            f"t{h}-{i}",
            f"question {h} {i}",
            "a",
            [f"d{j}" for j in range(h)],
            hops=[[f"d{j}"] for j in range(h)],
        )
        for h in (2, 3, 4)
        for i in range(3)
    ]
    rows = build_dataset(tasks)
    assert [Task.from_dict(json.loads(r["task"])) for r in rows] == tasks
    assert json.loads(json.dumps(rows)) == rows  # plain JSON: datasets.Dataset.from_list takes it
    assert {task_from_row(r).task_id for r in rows} == {t.task_id for t in tasks}
    curriculum = Curriculum(total_steps=40)
    rows = build_dataset(tasks, curriculum=curriculum, prompts_per_step=2, seed=3)
    assert len(rows) == 80 and rows == build_dataset(
        tasks, curriculum=curriculum, prompts_per_step=2, seed=3
    )
    hops = [r["hops"] for r in rows]
    assert hops == [task_hops(task_from_row(r)) for r in rows]
    first, last = hops[:20], hops[-20:]
    assert sum(first) / len(first) < 2.6 and sum(last) / len(last) > 3.4
    with pytest.raises(InputError):
        build_dataset([])


def test_a_final_reply_in_content_parts_is_read_as_its_text(env):
    env.search_corpus(query="Halvard Glassworks founded")
    env.search_corpus(query="Marrowick province")
    step = finish(env, [{"role": "assistant", "content": [{"type": "text", "text": FINAL}]}])
    assert step.info["exit_reason"] == "answered"
