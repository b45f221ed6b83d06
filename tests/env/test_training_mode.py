"""SearchEnv's training mode: no wall-time cut, infrastructure failures unscorable,
the reward's parts at the end, the curriculum's beta at the trainer's step.

Time is a fake clock the test moves by hand (no test reads the real clock).
"""

from __future__ import annotations

from typing import Any

import pytest

from thresher.env import SearchEnv, WorkClock
from thresher.errors import BackendUnavailableError, InputError
from thresher.harness import episode as harness_episode
from thresher.tasks.task import Task
from thresher.testing.replay_server import reply
from thresher.train.curriculum import Curriculum
from thresher.train.rewards import reward

from .test_search_env import SCRIPT, TASK, drive


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def drive_slowly(env: SearchEnv, clock: FakeClock, gap: float):
    """``drive`` with ``gap`` seconds passing between a Step and the next reply."""
    steps = [env.reset(TASK)]
    for entry in SCRIPT:
        if steps[-1].done:
            break
        clock.now += gap
        steps.append(env.step(entry["message"], finish_reason=entry["finish_reason"]))
    return steps


@pytest.mark.parametrize(("training", "exit_reason"), [(True, "answered"), (False, "timeout")])
def test_a_slow_trainer_times_out_only_outside_training(store, config, training, exit_reason):
    clock = FakeClock()
    env = SearchEnv(store, config, clock=clock, training=training)
    steps = drive_slowly(env, clock, gap=config.episode.wall_time_s + 1)
    assert steps[-1].done and steps[-1].info["exit_reason"] == exit_reason
    assert steps[-1].reward is not None  # a timeout is the policy's: scored
    if training:  # the trace's times are the harness's own: the gaps are not in them
        assert max(e.t for e in env.rollout().trace) < config.episode.wall_time_s


def test_the_work_clock_advances_only_while_running():
    clock = FakeClock()
    work = WorkClock(clock)
    start = work()
    clock.now += 50  # paused from the start
    assert work() == start
    work.resume()
    clock.now += 2
    assert work() == start + 2
    work.pause()
    clock.now += 50
    work.resume()
    assert work() == start + 2


class FlakyStore:
    """The real store, whose searches fail with a backend error from the ``fail_from``-th
    on (as a Chroma server that went down mid-rollout)."""

    def __init__(self, store: Any, fail_from: int) -> None:
        self.store, self.fail_from, self.searches = store, fail_from, 0

    def __getattr__(self, name: str) -> Any:
        if name == "pinned":  # not pinned through to the healthy store
            raise AttributeError(name)
        return getattr(self.store, name)

    def _search(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        if self.searches >= self.fail_from:
            raise BackendUnavailableError("the vector store at 127.0.0.1:8000 is down")
        return getattr(self.store, method)(*args, **kwargs)

    def hybrid_search(self, *args: Any, **kwargs: Any) -> Any:
        return self._search("hybrid_search", *args, **kwargs)

    def bm25_search(self, *args: Any, **kwargs: Any) -> Any:
        return self._search("bm25_search", *args, **kwargs)


@pytest.mark.parametrize("training", [True, False])
def test_a_store_failing_mid_rollout_makes_it_unscorable_in_training(store, config, training):
    flaky = FlakyStore(store, fail_from=2)
    env = SearchEnv(flaky, config, training=training)
    steps = drive(env, TASK, SCRIPT)
    assert flaky.searches >= 2
    assert steps[-1].done and steps[-1].info["exit_reason"] == "answered"
    if training:
        assert steps[-1].reward is None and env.rollout().reward is None
        why = steps[-1].info["unscorable"]
        assert "tool_error" in why and "down" in why and env.rollout().unscorable == why
        assert steps[-1].info["reward_parts"] is None
    else:  # as before: every ended episode is scored
        assert steps[-1].reward is not None and "unscorable" not in steps[-1].info


def test_an_endpoint_down_is_unscorable_in_training(store, config):
    env = SearchEnv(store, config, training=True)
    env.reset(TASK)
    env.step(SCRIPT[0]["message"])
    end = env.fail(ConnectionError("the model endpoint refused the connection"))
    assert end.done and end.info["exit_reason"] == "endpoint_unavailable"
    assert end.reward is None and "refused the connection" in end.info["unscorable"]


def test_a_harness_error_mid_step_is_unscorable_in_training(store, config, monkeypatch):
    def broken(self: Any, asked: Any) -> Any:
        raise RuntimeError("a bug in the harness")

    env = SearchEnv(store, config, training=True)
    env.reset(TASK)
    monkeypatch.setattr(harness_episode._Episode, "take", broken)
    end = env.step(SCRIPT[0]["message"])
    assert end.done and end.info["exit_reason"] == "error" and end.reward is None
    assert "a bug in the harness" in end.info["unscorable"]
    assert env.rollout().trace  # the trace so far
    outside = SearchEnv(store, config)
    outside.reset(TASK)
    with pytest.raises(RuntimeError, match="a bug in the harness"):  # as before
        outside.step(SCRIPT[0]["message"])


def test_policy_side_failures_are_still_scored_in_training(store, config):
    env = SearchEnv(store, config, training=True)
    step = env.reset(TASK)
    while not step.done:
        step = env.step(reply(content="I am not sure what to do.")["message"])
    assert step.info["exit_reason"] == "policy_error" and step.info["unscorable"] is None
    assert step.reward == reward(list(env.rollout().trace), TASK).total


def test_every_reward_part_is_in_info_at_done(store, config):
    env = SearchEnv(store, config, training=True)
    steps = drive(env, TASK, SCRIPT)
    rollout = env.rollout()
    assert steps[-1].info["reward_parts"] == rollout.reward.to_dict()
    assert set(steps[-1].info["reward_parts"]) >= {"total", "f_beta", "beta", "turn_penalty"}
    assert all("reward_parts" not in s.info for s in steps[:-1])


#: a gold document never retrieved: recall 2/3 at precision 1, so beta moves F-beta
PARTIAL = Task(
    task_id="t2",
    question=TASK.question,
    answer=TASK.answer,
    gold_doc_ids=["glassworks", "marrowick", "unreached"],
)


def test_the_rewards_beta_follows_the_trainers_step(store, config):
    curriculum = Curriculum(total_steps=10)
    env = SearchEnv(store, config, training=True, curriculum=curriculum)
    totals = {}
    for step_no in (0, 10):
        env.set_step(step_no)
        end = drive(env, PARTIAL, SCRIPT)[-1]
        expected = reward(list(env.rollout().trace), PARTIAL, beta=curriculum.beta(step_no))
        assert end.info["beta"] == curriculum.beta(step_no) == expected.beta
        assert end.reward == expected.total and env.rollout().reward == expected
        totals[step_no] = end.reward
    assert totals[0] != totals[10]  # beta 4 then 2
    env.reset(PARTIAL, step=5)
    assert env.reward_beta == curriculum.beta(5) == 3.0


def test_a_driver_with_no_further_reply_ends_the_episode_policy_error_scored(store, config):
    env = SearchEnv(store, config, mode="append", training=True)
    drive(env, TASK, SCRIPT[:1])
    step = env.stop("the trainer's rollout ended on a refused final reply")
    assert step.done and step.info["exit_reason"] == "policy_error"
    assert step.info["unscorable"] is None  # the policy's end, not the infrastructure's
    rollout = env.rollout()
    assert "refused final reply" in rollout.result.message
    assert step.reward == reward(list(rollout.trace), TASK).total
    with pytest.raises(InputError):
        env.stop("again")
