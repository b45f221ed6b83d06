"""thresher's harness as an environment for TRL's ``GRPOTrainer`` (``environment_factory``).

TRL owns the rollout loop: it renders the prompt, generates, parses the reply's tool calls,
calls one method of the environment per call, appends each result as a tool message and
generates again, until a reply calls no tool. Its ``environment_factory`` is called with no
arguments for each rollout slot; each instance is ``reset(**row)`` with a dataset row and its
public methods are the tools (transformers turns their annotations and Google docstrings into
the schemas the model is shown). So:

* :func:`environment_factory` returns that callable. Each instance holds one
  :class:`~thresher.env.SearchEnv` in ``append`` mode and training mode (one token sequence per
  rollout is what TRL trains on; ``edit`` mode's rewritten history cannot be one).
  ``reset(**row)`` opens the row's task and returns the first user text (the question and the
  usage line); the row's ``prompt`` carries the system prompt (:func:`build_dataset`).
* Its tool methods, one per thresher tool, are built from the tools' :class:`ToolSpec` s
  (:data:`~thresher.harness.tools.TOOLS`): name, description, arguments and their
  descriptions, for the configuration given (:func:`tool_docstring`), so TRL's schemas say what
  thresher's do. A method accepts any keyword arguments and hands the call to the harness as a
  reply of that one call: the harness's own validator checks it, and a bad argument comes back
  as the harness's refusal text (``Refused: ...``) as the tool result, never an exception (TRL
  counts no failure for it; the harness counts it towards ``llm.max_malformed``). The result is
  what the harness appends after the call: the tool message and the notices after it.
* TRL calls a reply's tools one at a time and needs each result at once, so a reply with several
  calls runs as that many harness turns of one call each (the trace has one reply per call; the
  turn count and its penalty count calls). A call to a tool that does not exist never reaches
  the harness: TRL answers it itself (``Tool X not found.``) and counts a failure.
* TRL's loop ends on a reply without tool calls; nothing in the environment sees it.
  :func:`thresher_reward` (the reward function) feeds each rollout's last message to its
  environment as the final reply (:func:`finish`), ends the episode and returns thresher's
  reward (``train.rewards.reward`` on the trace): None when it cannot be scored (no gold
  documents, or an infrastructure failure in training mode). A final reply the harness refuses
  (a document never shown, pruned evidence, prose) or a rollout TRL cut before any final reply
  ends the episode ``policy_error``, scored (:meth:`~thresher.env.SearchEnv.stop`).
* The curriculum's beta follows the trainer's step. TRL gives an environment no step, but gives
  reward functions ``trainer_state``: :func:`thresher_reward` sets each environment's step from
  ``trainer_state.global_step`` before it ends the episode, so an episode ended by its final
  reply is scored at the current step. One that ended inside a tool call (a turn, call or
  budget cap) is scored at the step its environment knew then: the one the previous batch's
  reward set, or, when the factory has ``step=`` (a callable a trainer callback or a closure
  over the trainer keeps current, e.g. ``lambda: trainer.state.global_step``), the one it
  returns at ``reset``.
* :func:`build_dataset` makes the rows: each a ``prompt`` (the system prompt and an empty user
  message, which TRL extends with ``reset``'s text), the task as JSON (``task``), its id and hop
  count; with a curriculum, the rows follow its hop schedule step by step (train with
  ``shuffle_dataset=False``).

Neither trl nor torch is imported here: the module is usable (and tested) without them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.env import SearchEnv, Step
from thresher.env.search_env import Mode
from thresher.errors import InputError
from thresher.harness.tools import TOOLS
from thresher.harness.toolspec import ArgumentKind, ToolSpec
from thresher.index.store import Store
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.tasks.synthetic import SynthTask, to_eval_task
from thresher.tasks.task import Task
from thresher.train.curriculum import Curriculum, CurriculumSampler, task_hops
from thresher.train.rewards import RewardConfig

__all__ = [
    "ThresherToolEnv",
    "environment_factory",
    "tool_env_class",
    "tool_docstring",
    "thresher_reward",
    "finish",
    "build_dataset",
    "task_from_row",
    "ENDED",
]

#: the Python type of an argument kind (transformers derives the schema's type from it)
ARGUMENT_TYPES: dict[ArgumentKind, Any] = {"text": str, "ids": list[str]}
#: a tool's result once the episode has ended (the model should reply without a tool call)
ENDED = "The episode has ended ({reason}){message}. Reply with your final answer and no tool call."
#: the reward parts logged as TRL metrics (``thresher/<part>``, the mean over scored rollouts)
LOGGED_PARTS = ("f_beta", "precision", "recall", "trajectory_recall", "answer_retrieved")


def tool_docstring(spec: ToolSpec, config: Config) -> str:
    """The Google-style docstring of ``spec``'s tool method: its description for ``config``
    and one ``Args`` line per argument a model is offered (the schema's texts)."""
    lines = [spec.describe(config), "", "Args:"]
    lines += [f"    {a.name}: {a.description}" for a in spec.arguments if a.offered]
    return "\n".join(lines)


def _tool_method(spec: ToolSpec, config: Config) -> Callable[..., str]:
    """The method TRL calls for ``spec``: its signature, annotations and docstring from the
    spec; any keyword arguments reach the harness, whose validator judges them."""
    offered = [a for a in spec.arguments if a.offered]

    def tool(self: ThresherToolEnv, **arguments: Any) -> str:
        return self._call(spec.name, arguments)

    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = tool_docstring(spec, config)
    tool.__annotations__ = {a.name: ARGUMENT_TYPES[a.kind] for a in offered} | {"return": str}
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [
        inspect.Parameter(a.name, inspect.Parameter.KEYWORD_ONLY, annotation=ARGUMENT_TYPES[a.kind])
        for a in offered
    ]
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return tool


class ThresherToolEnv:
    """One rollout slot of TRL's ``environment_factory``: a :class:`SearchEnv` behind
    ``reset(**row)`` and one method per tool (those come with :func:`tool_env_class`).

    Every other public member is an attribute, not a method (TRL would make a method a tool):
    ``search_env`` (the SearchEnv: ``search_env.rollout()`` once the episode ended), ``step``
    (the last :class:`~thresher.env.Step`), ``task`` (the row's Task, or None before a reset).

    Args:
        search_env: the environment, in ``append`` mode.
        trainer_step: returns the trainer's step at each ``reset`` (None: the step is set by
            :func:`thresher_reward`).
    """

    def __init__(
        self, search_env: SearchEnv, trainer_step: Callable[[], int] | None = None
    ) -> None:
        self.search_env = search_env
        self.step: Step | None = None
        self.task: Task | None = None
        self._trainer_step = trainer_step
        self._calls = 0

    def reset(self, **row: Any) -> str:
        """Open the row's task (see :func:`task_from_row`); return the first user text.

        Raises:
            InputError: the row has no task, or its prompt's messages before the user's are
                not the environment's (build the rows with :func:`build_dataset` and the same
                system prompt).
        """
        self.task = task_from_row(row)
        step = None if self._trainer_step is None else self._trainer_step()
        self.step = self.search_env.reset(self.task, step=step)
        self._calls = 0
        first = self.step.messages
        prompt = row.get("prompt")
        if prompt is not None and list(prompt[:-1]) != first[:-1]:
            raise InputError(
                "the row's prompt does not carry the environment's system prompt; build the rows "
                "with build_dataset(system_prompt=...) matching environment_factory's"
            )
        return str(first[-1]["content"])

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one tool call as a reply of its own; the text the harness appends after it."""
        if self.step is None:
            raise InputError("no episode: TRL calls reset(**row) before any tool")
        if self.step.done:
            return _ended_text(self.search_env)
        self._calls += 1
        call = {
            "id": f"call_{self._calls}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        self.step = self.search_env.step({"role": "assistant", "content": "", "tool_calls": [call]})
        if self.step.done:
            return _ended_text(self.search_env)
        return "\n\n".join(
            str(m.get("content") or "") for m in self.step.appended if m["role"] != "assistant"
        )


def _ended_text(env: SearchEnv) -> str:
    result = env.rollout().result
    message = f": {result.message}" if result.message else ""
    return ENDED.format(reason=result.exit_reason.value, message=message)


def tool_env_class(config: Config | None = None) -> type[ThresherToolEnv]:
    """A :class:`ThresherToolEnv` subclass with one method per tool of
    :data:`~thresher.harness.tools.TOOLS`, described for ``config``."""
    cfg = config or Config()
    methods = {spec.name: _tool_method(spec, cfg) for spec in TOOLS}
    return type("ThresherSearchEnv", (ThresherToolEnv,), methods)


def environment_factory(
    index: Store | str | Path,
    config: Config | None = None,
    *,
    curriculum: Curriculum | None = None,
    mode: Mode = "append",
    step: Callable[[], int] | None = None,
    system_prompt: str | None = None,
    beta: float = 4.0,
    reward_config: RewardConfig | None = None,
) -> Callable[[], ThresherToolEnv]:
    """TRL's ``environment_factory``: each call a new rollout slot over the same store.

    Args:
        index: an open Store, or an index folder or server URL (opened once, here).
        config: settings (budget, episode caps, ``llm.max_malformed``...).
        curriculum: the reward's beta follows ``curriculum.beta`` at the trainer's step.
        mode: ``append`` only (TRL trains one growing sequence per rollout).
        step: returns the trainer's step, read at each ``reset`` (see the module docs).
        system_prompt: the SearchEnv's (default the LLM policy's); the rows must carry the
            same (:func:`build_dataset`).
        beta, reward_config: the reward's F-beta weight without a curriculum, and its weights.

    Raises:
        InputError: a mode other than ``append``.
    """
    if mode != "append":
        raise InputError(
            f"mode {mode!r}: TRL trains one growing sequence per rollout, so its environment "
            "runs in 'append' mode; use the verifiers adapter or SearchEnv for 'edit'"
        )
    cfg = config or Config()
    if isinstance(index, str | Path):
        from thresher.index.backends import open_store

        store: Store = open_store(index, cfg)
    else:
        store = index
    cls = tool_env_class(cfg)

    def make() -> ThresherToolEnv:
        env = SearchEnv(
            store,
            cfg,
            mode,
            system_prompt=system_prompt,
            beta=beta,
            reward_config=reward_config,
            training=True,
            curriculum=curriculum,
        )
        return cls(env, step)

    return make


def finish(env: ThresherToolEnv, completion: Sequence[dict[str, Any]]) -> Step:
    """End ``env``'s episode with the rollout's last message and return its last Step.

    An episode already ended (a cap inside a tool call) is left as it is. A last message that
    is an assistant reply without tool calls is the final reply; if the harness refuses it, or
    the rollout has none (TRL stopped it after a tool result), the episode ends
    ``policy_error`` (:meth:`~thresher.env.SearchEnv.stop`), scored.

    Raises:
        InputError: the environment was never reset.
    """
    if env.step is None:
        raise InputError("no episode: the environment was never reset")
    if env.step.done:
        return env.step
    last = completion[-1] if completion else {}
    if last.get("role") == "assistant" and not last.get("tool_calls"):
        content = last.get("content")
        if isinstance(content, list):  # content parts: their text
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        env.step = env.search_env.step({"role": "assistant", "content": text})
        if env.step.done:
            return env.step
        refusals = "; ".join(r["message"] for r in env.step.info.get("refusals", []))
        reason = f"the rollout ended on a final reply the harness refused: {refusals}"
    else:
        reason = "the trainer ended the rollout without a final reply (its turn or length limit)"
    env.step = env.search_env.stop(reason)
    return env.step


def thresher_reward(
    completions: Sequence[Sequence[dict[str, Any]]],
    environments: Sequence[Any],
    **kwargs: Any,
) -> list[float | None]:
    """TRL reward function: thresher's reward of each rollout (None: unscorable).

    Sets each environment's step from ``trainer_state.global_step`` (when TRL passes it), ends
    its episode with the rollout's last message (:func:`finish`) and returns the reward's
    total. An environment that is not a :class:`ThresherToolEnv` gets None (another reward
    function scores it). With TRL's ``log_metric`` and ``log_extra``, logs the mean of the
    reward's parts over scored rollouts (``thresher/<part>``), the fraction unscorable, and
    each rollout's exit reason (column ``exit_reason``).
    """
    state = kwargs.get("trainer_state")
    trainer_step = getattr(state, "global_step", None)
    rewards: list[float | None] = []
    exits: list[str | None] = []
    parts: list[dict[str, Any]] = []
    for completion, env in zip(completions, environments, strict=True):
        if not isinstance(env, ThresherToolEnv):
            rewards.append(None)
            exits.append(None)
            continue
        if isinstance(trainer_step, int):
            env.search_env.set_step(trainer_step)
        step = finish(env, completion)
        rewards.append(step.reward)
        exits.append(step.info.get("exit_reason"))
        if step.info.get("reward_parts") is not None:
            parts.append(step.info["reward_parts"])
    _log(kwargs, rewards, exits, parts)
    return rewards


def _log(
    kwargs: dict[str, Any],
    rewards: list[float | None],
    exits: list[str | None],
    parts: list[dict[str, Any]],
) -> None:
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    if callable(log_metric) and rewards:
        log_metric("thresher/unscorable", sum(r is None for r in rewards) / len(rewards))
        for name in LOGGED_PARTS if parts else ():
            log_metric(f"thresher/{name}", sum(float(p[name]) for p in parts) / len(parts))
    if callable(log_extra):
        log_extra("exit_reason", exits)


def task_from_row(row: dict[str, Any]) -> Task:
    """The Task of a dataset row: its ``task`` (a Task's JSON, as :func:`build_dataset` writes
    it), or a bare ``question`` (no gold documents: the rollout is not scored).

    Raises:
        InputError: neither is there.
    """
    data = row.get("task")
    if isinstance(data, str):
        return Task.from_dict(json.loads(data))
    if isinstance(data, dict):
        return Task.from_dict(data)
    question = row.get("question")
    if isinstance(question, str) and question.strip():
        return Task(task_id=str(row.get("task_id", "")), question=question, answer="")
    raise InputError("a row needs a 'task' (build_dataset writes it) or a 'question'")


def build_dataset(
    tasks: Iterable[Task | SynthTask],
    *,
    system_prompt: str | None = None,
    curriculum: Curriculum | None = None,
    prompts_per_step: int = 1,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Dataset rows for ``GRPOTrainer`` (``datasets.Dataset.from_list(rows)``).

    Args:
        tasks: evaluation Tasks or synthetic tasks (``SynthTask``, read by
            :func:`~thresher.tasks.synthetic.read_synth_tasks`; made an evaluation Task).
        system_prompt: the prompt's system message (default the LLM policy's; it must be the
            environment's).
        curriculum: when given, ``prompts_per_step`` tasks per step for each of its
            ``total_steps``, drawn by its hop weights at that step
            (:class:`~thresher.train.curriculum.CurriculumSampler`, seeded); else the tasks
            once, in order.
        prompts_per_step: distinct prompts TRL takes per optimizer step (the batch size over
            ``num_generations``).
        seed: the sampler's seed.

    Returns:
        One row per prompt: ``prompt`` (system message, empty user message), ``task`` (the
        Task as JSON), ``task_id``, ``hops``.

    Raises:
        InputError: no tasks, or ``prompts_per_step`` < 1.
    """
    pool = [to_eval_task(t) if isinstance(t, SynthTask) else t for t in tasks]
    if not pool:
        raise InputError("build_dataset needs at least one task")
    if prompts_per_step < 1:
        raise InputError("prompts_per_step must be at least 1")
    if curriculum is not None:
        sampler = CurriculumSampler(pool, curriculum, seed)
        pool = [
            t for s in range(curriculum.total_steps) for t in sampler.sample(s, prompts_per_step)
        ]
    system = SYSTEM_PROMPT if system_prompt is None else system_prompt
    return [
        {
            "prompt": [{"role": "system", "content": system}, {"role": "user", "content": ""}],
            "task": json.dumps(task.to_dict()),
            "task_id": task.task_id,
            "hops": task_hops(task),
        }
        for task in pool
    ]
