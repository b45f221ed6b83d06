"""SearchEnv: one search episode driven from outside, reply by reply.

The harness's loop (:func:`~thresher.harness.episode.episode_loop`) is the
environment; :class:`SearchEnv` is its second driver (``run_episode`` with a
policy object is the first). It asks no model: :meth:`SearchEnv.reset` opens the
episode and returns the first :class:`Step` (the prompt an LLM policy would send),
:meth:`SearchEnv.step` takes the model's reply, reads it with the LLM policy's own
reader (:func:`~thresher.policies.llm.policy.read_completion`: the same Proposal,
or the same refusal, as :class:`~thresher.policies.llm.LLMPolicy` makes of it)
and runs the harness until the next prompt or the end.

A Step's ``messages`` are the chat messages the LLM policy would send
(:func:`~thresher.policies.llm.messages.chat_messages` of the rendered
transcript), ``tools`` its tool schemas. ``prefix_preserved`` says whether the
previous prompt is a prefix of this one: False on the turn after a prune or a
recall rewrote the history (``edit`` mode, as the harness runs). ``appended`` is
what this prompt adds to the previous one (the whole prompt when the prefix is
not preserved). Once ``done``, ``reward`` is ``train.rewards.reward``'s total on
the episode's trace (None when the task gives no gold documents, or before).

*Modes.* In ``edit`` mode (the default) a Step's prompt is the harness's transcript
as the LLM policy sends it: a prune or a recall rewrites earlier messages. In
``append`` mode the prompt only grows: each Step's prompt is the previous one
plus the tail of the harness's transcript from the reply just taken (the reply
as the harness renders it, its tool results and the next notices), so a pruned
chunk stays in the prompt as it was shown, while the harness (unchanged: the same
trace as ``edit`` for the same replies) still evicts it: it no longer counts
towards the budget, and a final answer citing only it is refused. A reply's
reported ``prompt_tokens`` are not passed on in ``append`` mode (they count a
prompt the harness does not count); ``prefix_preserved`` is always True there.

Replies are read as sent with ``tool_choice`` ``auto`` and no ``response_format``:
the environment does not constrain decoding. The wall time
(``episode.wall_time_s``) counts the time between steps.

*Training.* With ``training=True`` the episode runs on a :class:`WorkClock`, which
advances only while the harness works (inside :meth:`SearchEnv.reset` and
:meth:`SearchEnv.step`): a trainer slow between steps never ends a rollout
``timeout`` (the turn, call and token caps still bound it), and the trace's times
stay finite, harness-only readings. A rollout that failed for infrastructure is
*unscorable*: its reward is None and ``info["unscorable"]`` says why (see
:func:`infrastructure_failure`); the trainer's own outage is reported with
:meth:`SearchEnv.fail`; a harness error during a step ends the episode ``error``
instead of propagating. A policy-side end (refused replies, budget, turn or call
caps) is scored as ever. Outside training those rollouts are scored and a harness
error propagates, as before. Once done, ``info["reward_parts"]`` holds the
reward's parts and ``info["beta"]`` the F-beta weight: ``beta``, or with a
``curriculum`` its :meth:`~thresher.train.curriculum.Curriculum.beta` at the
trainer's step (:meth:`SearchEnv.set_step`, or ``reset(task, step=...)``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from thresher.config import Config
from thresher.errors import InputError
from thresher.harness.actions import MalformedReply, Proposal
from thresher.harness.episode import Asked, Exit, NoReply, episode_loop, policy_failed
from thresher.harness.observation import Observation
from thresher.harness.policy import BasePolicy
from thresher.harness.result import ExitReason, Result, Usage
from thresher.harness.trace import Refusal, ToolResult, TraceEvent
from thresher.index.store import Store
from thresher.policies.llm.messages import NOTICE_SEPARATOR, chat_messages
from thresher.policies.llm.policy import check_refused, read_completion
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.policies.llm.schemas import tool_schemas
from thresher.tokens import CHATML_TOOLS_COST, PromptCost, get_counter
from thresher.train.curriculum import Curriculum
from thresher.train.rewards import RewardBreakdown, RewardConfig, reward

__all__ = [
    "SearchEnv",
    "Step",
    "Turn",
    "Rollout",
    "Mode",
    "MODES",
    "ENV_PARAMS",
    "WorkClock",
    "infrastructure_failure",
    "INFRA_EXITS",
    "INFRA_TOOL_CODES",
]

#: how the prompt follows the episode: ``edit`` (a prune rewrites it) or ``append`` (it only grows)
Mode = Literal["edit", "append"]
MODES: tuple[Mode, ...] = ("edit", "append")
#: the request fields a reply is read as sent with (the environment constrains nothing)
ENV_PARAMS: dict[str, Any] = {"tool_choice": "auto"}
#: exits that say the infrastructure failed, not the policy: a training rollout ending
#: so is unscorable (``tools_failed``: an answer after every retrieval call failed)
INFRA_EXITS: frozenset[ExitReason] = frozenset(
    {
        ExitReason.ENDPOINT_UNAVAILABLE,
        ExitReason.ERROR,
        ExitReason.CANCELLED,
        ExitReason.TOOLS_FAILED,
    }
)
#: codes of a tool result with status ``error`` that the store or the tool's machinery
#: caused (a backend error, an unexpected exception, a tool past its timeout); a
#: refused pattern or an unknown id is the policy's and is scored
INFRA_TOOL_CODES: frozenset[str] = frozenset({"tool_error", "tool_failed", "timeout"})


def infrastructure_failure(result: Result) -> str | None:
    """Why ``result``'s episode failed for infrastructure (its reward would say nothing
    of the policy), or None when it is scorable: an exit in :data:`INFRA_EXITS`, or a
    tool call that failed with a code in :data:`INFRA_TOOL_CODES`."""
    if result.exit_reason in INFRA_EXITS:
        return f"{result.exit_reason.value}: {result.message}".rstrip(": ")
    for event in result.trace:
        if (
            isinstance(event, ToolResult)
            and event.status == "error"
            and event.code in INFRA_TOOL_CODES
        ):
            return f"{event.tool} failed ({event.code}): {event.header}"[:2000]
    return None


class WorkClock:
    """A monotonic clock that advances only while running (between :meth:`resume` and
    :meth:`pause`): the harness's working time, without the time its driver spends
    between steps. Starts paused."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._paused_at: float | None = clock()
        self._offset = 0.0

    def __call__(self) -> float:
        now = self._clock() if self._paused_at is None else self._paused_at
        return now - self._offset

    def resume(self) -> None:
        """Run again (a no-op when running)."""
        if self._paused_at is not None:
            self._offset += self._clock() - self._paused_at
            self._paused_at = None

    def pause(self) -> None:
        """Stop advancing (a no-op when paused)."""
        if self._paused_at is None:
            self._paused_at = self._clock()


@dataclass(frozen=True)
class Step:
    """What the model is to answer next, or how the episode ended.

    messages: the next prompt as chat messages ([] once done); tools: the tool schemas
    sent with it; appended: the messages this prompt adds to the previous one (all of
    them on the first step and when the prefix is not preserved); prefix_preserved:
    whether the previous prompt is a prefix of this one; done: the episode has ended;
    reward: the reward's total once done (None before, with no gold documents, or
    unscorable in training); info: ``exit_reason`` (once done), ``turn``, ``usage``
    (of the prompt), ``refusals`` (of the last reply: ``{"call_id", "code",
    "message"}``); once done also ``beta``, ``reward_parts`` (the
    :class:`~thresher.train.rewards.RewardBreakdown` as a dict, or None) and, in
    training, ``unscorable`` (why the infrastructure failed the rollout, or None).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    appended: list[dict[str, Any]]
    prefix_preserved: bool
    done: bool
    reward: float | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One prompt and the reply given to it (as given: a message dict or raw text)."""

    messages: list[dict[str, Any]]
    reply: dict[str, Any] | str
    prefix_preserved: bool


@dataclass(frozen=True)
class Rollout:
    """A finished episode: its turns, trace, Result and reward (None: no gold documents,
    or unscorable); ``unscorable``: in training, why the infrastructure failed it."""

    turns: tuple[Turn, ...]
    trace: tuple[TraceEvent, ...]
    result: Result
    reward: RewardBreakdown | None
    unscorable: str | None = None


class _Outside(BasePolicy):
    """What the episode records as its policy: the LLM policy's name, prompt, tools and
    prompt cost; asked by no one (the environment's caller replies)."""

    name = "llm"

    def __init__(self, config: Config, system_prompt: str, cost: PromptCost) -> None:
        self.config = config
        self.system_prompt = system_prompt
        self.prompt_cost = cost

    def tool_schemas(self) -> list[dict[str, Any]]:
        return tool_schemas(self.config)

    def propose(self, observation: Observation) -> Proposal | MalformedReply:
        raise RuntimeError("a SearchEnv episode is driven by SearchEnv.step, not proposed")


def _body(
    reply: dict[str, Any] | str, finish_reason: str | None, usage: dict[str, int] | None
) -> dict[str, Any]:
    """The chat completion a reply stands for (what the LLM policy's endpoint returns)."""
    message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
    finish = finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
    body: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return body


class SearchEnv:
    """One episode at a time over ``store``, driven by :meth:`reset` and :meth:`step`.

    Args:
        store: the index, through the Store protocol.
        config: settings (``budget``, ``episode``, ``llm.max_tokens`` and
            ``llm.max_malformed`` as the LLM policy reads them).
        mode: ``edit`` or ``append`` (see the module docstring).
        system_prompt: replaces the LLM policy's :data:`SYSTEM_PROMPT`.
        model: the model name recorded with each reply (default ``llm.model``).
        prompt_cost: the chat template's cost (default: the LLM policy's).
        beta, reward_config: the reward's F-beta weight and weights.
        clock: the episode's monotonic clock (in training, the clock the
            :class:`WorkClock` reads).
        training: training mode (see the module docstring): no wall-time cut,
            infrastructure failures unscorable (reward None).
        curriculum: when given, the reward's beta is ``curriculum.beta(step)`` at the
            trainer's step (:meth:`set_step`), not ``beta``.
        step: the trainer's step to start at.

    Raises:
        InputError: an unknown mode.
    """

    def __init__(
        self,
        store: Store,
        config: Config | None = None,
        mode: Mode = "edit",
        *,
        system_prompt: str | None = None,
        model: str | None = None,
        prompt_cost: PromptCost | None = None,
        beta: float = 4.0,
        reward_config: RewardConfig | None = None,
        clock: Callable[[], float] = time.perf_counter,
        training: bool = False,
        curriculum: Curriculum | None = None,
        step: int = 0,
    ) -> None:
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        self.store = store
        self.config = config or Config()
        self.mode = mode
        self.model = self.config.llm.model if model is None else model
        self.beta, self.reward_config = beta, reward_config
        self.training, self.curriculum, self.train_step = training, curriculum, step
        self._work = WorkClock(clock) if training else None
        self.clock: Callable[[], float] = self._work or clock
        self._policy = _Outside(
            self.config,
            SYSTEM_PROMPT if system_prompt is None else system_prompt,
            prompt_cost or CHATML_TOOLS_COST,
        )
        self._count = get_counter(self.config.chunking.tokenizer).count
        self._loop: Generator[TraceEvent | Observation, Asked | None, Result] | None = None
        self._task: Any = None
        self._observation: Observation | None = None
        self._prompt: list[dict[str, Any]] = []
        self._rendered: list[dict[str, Any]] = []  # the harness's last prompt (edit mode's)
        self._asked_at = 0.0
        self._turns: list[Turn] = []
        self._events: list[TraceEvent] = []
        self._result: Result | None = None
        self._reward: RewardBreakdown | None = None
        self._preserved = True
        self._unscorable: str | None = None

    # -- the driver --------------------------------------------------------------------
    def set_step(self, step: int) -> None:
        """The trainer's step: with a ``curriculum``, the beta of episodes that end from
        now on is ``curriculum.beta(step)``."""
        self.train_step = step

    @property
    def reward_beta(self) -> float:
        """The F-beta weight an episode ending now is scored with."""
        if self.curriculum is None:
            return self.beta
        return self.curriculum.beta(self.train_step)

    def reset(self, task: Any, *, step: int | None = None) -> Step:
        """Open an episode of ``task`` (a question, or a task with ``question`` and
        ``gold_doc_ids``) and return its first Step (an episode already running is
        dropped). ``step``: the trainer's step (as :meth:`set_step`)."""
        if step is not None:
            self.set_step(step)
        if self._loop is not None:
            self._loop.close()
        question = task if isinstance(task, str) else str(task.question)
        self._task = task
        self._turns, self._events, self._prompt, self._rendered = [], [], [], []
        self._result, self._reward, self._observation = None, None, None
        self._preserved = True
        self._unscorable = None
        if self._work is not None:
            self._work = WorkClock(self._work._clock)  # each episode from zero
            self.clock = self._work
        self._loop = episode_loop(question, self.store, self._policy, self.config, clock=self.clock)
        return self._advance(None)

    def step(
        self,
        reply: dict[str, Any] | str,
        *,
        finish_reason: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> Step:
        """Answer the current prompt with ``reply`` and run the episode to the next one.

        Args:
            reply: the assistant message (OpenAI shape: ``content``, ``tool_calls``) or
                its raw text, read as the LLM policy reads a completion.
            finish_reason: the completion's (default ``tool_calls`` when the message has
                tool calls, else ``stop``; ``length`` marks a reply cut off).
            usage: the completion's usage (``prompt_tokens``...), reconciled with the count.

        Raises:
            InputError: no episode is running (call :meth:`reset`), or it has ended.

        A harness error (a bug, not a reply's fault) propagates, as from
        :func:`~thresher.harness.episode.episode_loop`; :meth:`reset` starts afresh.
        """
        if self._loop is None or self._observation is None:
            raise InputError("no episode is waiting for a reply: call reset(task) first")
        observation = self._observation
        self._turns.append(Turn(self._prompt, reply, self._preserved))
        asked: Asked
        try:
            check_refused(observation.messages, self.config)
            if usage is not None and self.mode == "append":  # counts the grown prompt
                usage = {k: v for k, v in usage.items() if k != "prompt_tokens"}
            read = read_completion(
                _body(reply, finish_reason, usage),
                observation,
                self.config,
                self._count,
                ENV_PARAMS,
            )
            asked = (_as_sent(read, self.model), round(self.clock() - self._asked_at, 6))
        except Exception as exc:  # as the harness takes an LLM policy's failure
            asked = policy_failed(exc)
        return self._advance(asked)

    def fail(self, reason: str | Exception) -> Step:
        """End the running episode because no reply could be had (the model endpoint is
        down, generation failed): it ends ``endpoint_unavailable``, and in training its
        reward is None (unscorable) with ``reason`` in ``info["unscorable"]``.

        Raises:
            InputError: no episode is running.
        """
        if self._loop is None or self._observation is None:
            raise InputError("no episode is waiting for a reply: call reset(task) first")
        text = (f"{type(reason).__name__}: {reason}" if isinstance(reason, Exception) else reason)[
            :2000
        ]
        end = Exit(ExitReason.ENDPOINT_UNAVAILABLE, text)
        return self._advance(NoReply(text, "endpoint_unavailable", text, end))

    def stop(self, reason: str) -> Step:
        """End the running episode because the policy gives no further reply (a trainer
        whose rollout ended on a reply the harness refused, or was cut at its own turn
        or length limit): it ends ``policy_error`` and is scored, the policy's end, not
        the infrastructure's.

        Raises:
            InputError: no episode is running.
        """
        if self._loop is None or self._observation is None:
            raise InputError("no episode is waiting for a reply: call reset(task) first")
        text = reason[:2000]
        end = Exit(ExitReason.POLICY_ERROR, text)
        return self._advance(NoReply(text, "no_reply", text, end))

    def rollout(self) -> Rollout:
        """The finished episode.

        Raises:
            InputError: the episode has not ended yet.
        """
        if self._result is None:
            raise InputError("the episode has not ended: step until Step.done")
        return Rollout(
            tuple(self._turns), self._result.trace, self._result, self._reward, self._unscorable
        )

    # -- inside ------------------------------------------------------------------------
    def _advance(self, asked: Asked | None) -> Step:
        """Run the loop until it hands out an observation or returns its Result."""
        assert self._loop is not None
        start = len(self._events)
        if self._work is not None:
            self._work.resume()
        try:
            item = self._loop.send(asked)
            while not isinstance(item, Observation):
                self._events.append(item)
                item = self._loop.send(None)
        except StopIteration as done:
            return self._ended(done.value, start)
        except Exception as exc:
            if not self.training:
                raise
            return self._ended(self._broken(exc), start)  # the harness's bug: unscorable
        finally:
            if self._work is not None:
                self._work.pause()
        self._observation = item
        return self._next_step(item, start)

    def _broken(self, exc: Exception) -> Result:
        """The Result of an episode a harness error ended mid-step (``error``), with the
        trace so far."""
        usage = self._observation.usage if self._observation is not None else None
        used = usage.used if usage is not None else 0
        return Result(
            question=getattr(self._task, "question", self._task),
            documents=(),
            exit_reason=ExitReason.ERROR,
            partial=True,
            usage=Usage(used, used, self.config.budget.total),
            turns=len(self._turns),
            tool_calls={},
            wall_s=0.0,
            trace=tuple(self._events),
            message=f"internal error: {type(exc).__name__}: {exc}",
        )

    def _next_step(self, observation: Observation, start: int) -> Step:
        messages = rendered = chat_messages(observation.messages)
        previous = self._prompt
        if self.mode == "append" and previous:
            assert self._turns  # a prompt after the first follows a reply
            messages = previous + _since_reply(self._rendered, rendered, self._turns[-1].reply)
        self._rendered = rendered
        preserved = messages[: len(previous)] == previous
        appended = messages[len(previous) :] if preserved else list(messages)
        self._prompt, self._preserved = messages, preserved
        self._asked_at = self.clock()
        return Step(
            messages,
            self._policy.tool_schemas(),
            appended,
            preserved,
            False,
            None,
            {
                "turn": observation.turn,
                "usage": asdict(observation.usage),
                "refusals": self._refusals(start),
            },
        )

    def _ended(self, result: Result, start: int) -> Step:
        self._result, self._observation, self._loop = result, None, None
        gold = getattr(self._task, "gold_doc_ids", None)
        if self.training:
            self._unscorable = infrastructure_failure(result)
        if gold and self._unscorable is None:
            self._reward = reward(result, self._task, self.reward_beta, self.reward_config)
        info: dict[str, Any] = {
            "exit_reason": result.exit_reason.value,
            "turns": result.turns,
            "usage": result.usage.to_dict(),
            "refusals": self._refusals(start),
            "beta": self.reward_beta,
            "reward_parts": None if self._reward is None else self._reward.to_dict(),
        }
        if self.training:
            info["unscorable"] = self._unscorable
        return Step(
            [],
            self._policy.tool_schemas(),
            [],
            True,
            True,
            None if self._reward is None else self._reward.total,
            info,
        )

    def _refusals(self, start: int) -> list[dict[str, Any]]:
        return [
            {"call_id": e.call_id, "code": e.code, "message": e.message}
            for e in self._events[start:]
            if isinstance(e, Refusal)
        ]


def _as_sent(read: Proposal | MalformedReply, model: str) -> Proposal | MalformedReply:
    """``read`` marked with the model that wrote it, its usage None when empty (as the
    LLM policy hands its replies to the harness)."""
    return replace(read, usage=dict(read.usage or {}) or None, model=model)


def _since_reply(
    before: list[dict[str, Any]], after: list[dict[str, Any]], reply: dict[str, Any] | str
) -> list[dict[str, Any]]:
    """What the harness's prompt ``after`` adds to ``before`` (edit mode's prompts around
    ``reply``), as messages that follow ``before`` unchanged.

    A reply taken or refused with what it sent adds messages (the reply as rendered,
    its results or the refusal, the next notices merged into the last): those. A reply
    the harness refused on its own checks (a final answer naming no known document)
    adds none: the refusal is merged into the last message, so the reply as given and
    that added text (as a user message) stand for it.
    """
    if len(after) > len(before):
        return after[len(before) :]
    old = str(before[-1].get("content") or "")
    new = str(after[-1].get("content") or "")
    added = new[len(old) :] if new.startswith(old) else new
    message = {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)
    return [message, {"role": "user", "content": added.removeprefix(NOTICE_SEPARATOR)}]
