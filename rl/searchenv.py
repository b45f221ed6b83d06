"""The smoke on thresher's own harness: ``SearchEnv`` through ``thresher.integrations.trl``.

``searchenv_setup(workdir)`` generates a seeded small world (``thresher.synth.world``), indexes it
in ``workdir``, and returns the :class:`~seam.SmokeSetup` the smoke runs: the adapter's
``environment_factory`` (append mode, training mode, a two-step curriculum for the reward's
beta), ``thresher_reward``, rows from the world's planted chains (evaluation ``Task`` s, 2 and 3
hops) in the curriculum's hop order (``build_dataset``), and per row a group of scripted rollouts:

- ``solver``: one search per hop (the hop's subject), a prune of a shown chunk of no gold
  document, then the final answer citing the gold documents it was shown;
- ``sloppy``: its first reply calls ``search_corpus`` with a wrong argument name (the harness's
  validator refuses it; its refusal is the tool result, so TRL counts no failure) and a tool
  that does not exist (TRL answers that itself and counts one failure), then the hop searches
  in one reply (several calls: one harness turn each) and the final answer;
- ``pruned-citation``: one search, a prune of every shown chunk of one document (a gold one
  when one was shown), and a final answer citing that document: the harness refuses it
  (pruned evidence), so the episode ends ``policy_error`` (scored);
- ``malformed``: a tool call whose JSON does not parse: TRL takes it for plain text, the
  rollout ends there, and the harness refuses it as a final answer (``policy_error``, scored);

and the last row's group: ``solver``, ``parallel`` (the solver's searches in one reply),
``solver``, and ``outage`` (a search the index cannot serve: the store raises as an unreachable
backend, so the rollout is unscorable, reward None), so its scored rewards are equal.

Each script's reward is found here by driving the same environment by hand with the same
replies (as TRL will: one method call per tool call, then ``thresher_reward`` at the step TRL
will be at); the smoke checks TRL's logged reward against it, and per rollout
(:func:`check_rollout`) that the trace replays to the state the episode ended in and that the
reward is ``train.rewards.reward`` on that trace. :func:`check_tools` checks that the schemas
TRL renders from the tool methods are thresher's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scripted import Reply, Script
from seam import SmokeSetup

from thresher.config import Config
from thresher.corpus.loaders import iter_documents
from thresher.errors import BackendUnavailableError
from thresher.harness.state import replay
from thresher.harness.tools import TOOLS
from thresher.index.backends import ingest, open_store
from thresher.index.store import Store
from thresher.integrations.trl import (
    ThresherToolEnv,
    build_dataset,
    environment_factory,
    task_from_row,
    thresher_reward,
    tool_docstring,
)
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.synth.world import generate_world
from thresher.tasks.task import Task
from thresher.tasks.world import world_chain_task
from thresher.train.curriculum import Curriculum
from thresher.train.rewards import reward

#: a search whose query names this fails as if the index were unreachable (an outage)
OFFLINE = "Offline Archive"
#: small chunks and two results a search, so a rollout's sequence stays a few thousand tokens
SMOKE_CONFIG = {"chunking.max_tokens": 96, "episode.search_results": 2}
END = "<|im_end|>"
CHUNK = re.compile(r'<chunk id="([^"]+)" doc="([^"]+)"')


class OutageStore:
    """``store``, except that a search whose query names :data:`OFFLINE` raises
    ``BackendUnavailableError`` (the harness records a ``tool_error``: an infrastructure failure)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def pinned(self) -> OutageStore:
        return OutageStore(self._store.pinned())

    def _check(self, query: str) -> None:
        if OFFLINE in query:
            raise BackendUnavailableError("the index is unreachable (a scripted outage)")

    def hybrid_search(self, query: str, **kwargs: Any) -> Any:
        self._check(query)
        return self._store.hybrid_search(query, **kwargs)

    def bm25_search(self, query: str, **kwargs: Any) -> Any:
        self._check(query)
        return self._store.bm25_search(query, **kwargs)

    def dense_search(self, query: str, **kwargs: Any) -> Any:
        self._check(query)
        return self._store.dense_search(query, **kwargs)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a scripted reply; ``known``: a tool of the environment (TRL runs it)."""

    name: str
    arguments: dict[str, Any]

    @property
    def known(self) -> bool:
        return self.name in {spec.name for spec in TOOLS}

    def text(self) -> str:
        return (
            "<tool_call>"
            + json.dumps({"name": self.name, "arguments": self.arguments})
            + "</tool_call>"
        )


@dataclass(slots=True)
class Plan:
    """A rollout being scripted: its replies, as calls or a final text, played on a live
    environment as they are added, so each next reply can use what the last one showed."""

    env: ThresherToolEnv
    replies: list[Reply] = field(default_factory=list)
    shown: list[tuple[str, str]] = field(default_factory=list)  # (chunk id, doc id) in order

    def calls(self, *calls: Call) -> list[str]:
        """Reply with ``calls``; the tool results TRL would append (one per call)."""
        results = []
        for call in calls:
            if call.known:
                result = getattr(self.env, call.name)(**call.arguments)
                self.shown += [m for m in CHUNK.findall(result) if m not in self.shown]
            else:
                result = "(TRL: tool not found)"
            results.append(result)
        failures = sum(not c.known for c in calls)
        self.replies.append(Reply("".join(c.text() for c in calls) + END, len(calls), failures))
        return results

    def final(self, text: str, sent_as: str | None = None) -> str:
        """End with ``text``; what TRL hands the reward as its content (``sent_as``, default
        ``text``)."""
        self.replies.append(Reply(text + END))
        return text if sent_as is None else sent_as


class TrainerState:
    """What TRL passes reward functions as ``trainer_state`` (its step)."""

    def __init__(self, global_step: int) -> None:
        self.global_step = global_step


def _answer(docs: Sequence[str]) -> str:
    return "".join(
        f'<Document id="{d}"><Justification>It states a fact of the chain.</Justification></Document>'
        for d in docs
    )


def _scripts(
    make: Any, row: dict[str, Any], record: dict[str, Any], step: int, last: bool
) -> list[Script]:
    """The group of scripts for ``row`` (see the module docs), each with the reward the
    environment gives it at trainer step ``step``."""
    task = task_from_row(row)
    subjects = [h["subject"] for h in record["hops"]]
    gold = list(task.gold_doc_ids)

    def play(name: str, build: Any) -> Script:
        env = make()
        env.reset(**row)
        plan = Plan(env)
        sent = build(plan)
        (total,) = thresher_reward(
            [[{"role": "assistant", "content": sent}]], [env], trainer_state=TrainerState(step)
        )
        return Script(name, tuple(plan.replies), total)

    def solver(plan: Plan) -> str:
        for s in subjects:
            plan.calls(Call("search_corpus", {"query": s}))
        return _finish(plan)

    def _finish(plan: Plan) -> str:
        spare = [c for c, d in plan.shown if d not in gold]
        if spare:
            plan.calls(Call("prune_chunks", {"chunk_ids": spare[:1]}))
        seen = {d for _, d in plan.shown}
        return plan.final(_answer([d for d in gold if d in seen]))

    def parallel(plan: Plan) -> str:
        plan.calls(*(Call("search_corpus", {"query": s}) for s in subjects))
        return _finish(plan)

    def sloppy(plan: Plan) -> str:
        plan.calls(
            Call("search_corpus", {"q": subjects[0]}), Call("lookup_entity", {"name": subjects[0]})
        )
        return parallel(plan)

    def pruned_citation(plan: Plan) -> str:
        plan.calls(Call("search_corpus", {"query": subjects[0]}))
        shown = [d for _, d in plan.shown]
        cited = next((d for d in gold if d in shown), shown[0])  # a gold document if shown
        plan.calls(Call("prune_chunks", {"chunk_ids": [c for c, d in plan.shown if d == cited]}))
        return plan.final(_answer([cited]))

    def malformed(plan: Plan) -> str:
        # no closing brace: TRL's parser falls back to the text (its special tokens dropped)
        body = '{"name": "search_corpus", "arguments": {"query": '
        return plan.final(f"<tool_call>{body}</tool_call>", sent_as=body)

    def outage(plan: Plan) -> str:
        plan.calls(Call("search_corpus", {"query": f"{OFFLINE} {subjects[0]}"}))
        return plan.final(_answer(gold[:1]))

    if last:
        builds = [
            ("solver", solver),
            ("parallel", parallel),
            ("solver", solver),
            ("outage", outage),
        ]
    else:
        builds = [
            ("solver", solver),
            ("sloppy", sloppy),
            ("pruned-citation", pruned_citation),
            ("malformed", malformed),
        ]
    return [play(name, build) for name, build in builds]


def build_index(
    workdir: Path, world_seed: int, config: Config
) -> tuple[Path, list[dict[str, Any]]]:
    """Generate the small world of ``world_seed`` in ``workdir`` and index it; its chains."""
    corpus, index = workdir / "corpus", workdir / "index"
    generate_world(world_seed, "small", corpus)
    ingest(iter_documents([corpus]), index, config, progress=False)
    chains = (corpus / ".world" / "chains.jsonl").read_text(encoding="utf-8").splitlines()
    return index, [json.loads(line) for line in chains]


def searchenv_setup(
    workdir: Path, world_seed: int = 7, rows: int = 4, prompts_per_step: int = 2
) -> SmokeSetup:
    """The smoke on SearchEnv (see the module docs); the index is built in ``workdir``."""
    config = Config().override(SMOKE_CONFIG)
    index, records = build_index(workdir, world_seed, config)
    store: Store = OutageStore(open_store(index, config))  # type: ignore[assignment]
    steps = rows // prompts_per_step
    curriculum = Curriculum(total_steps=steps, hops=(2, 3), hops_start=2, hops_end=3)
    make = environment_factory(store, config, curriculum=curriculum)
    by_id = {r["id"]: r for r in records}
    pool: list[Task] = [
        world_chain_task(r, f"chains.jsonl:{i}")
        for i, r in enumerate(records)
        if len(r["hops"]) in curriculum.hops
    ]
    # the curriculum's hop order, with no task twice (a script is found by its question)
    for seed in range(100):
        dataset = build_dataset(
            pool, curriculum=curriculum, prompts_per_step=prompts_per_step, seed=seed
        )
        if len({r["task_id"] for r in dataset}) == len(dataset):
            break
    scripts = {
        task_from_row(row).question: _scripts(
            make, row, by_id[row["task_id"]], i // prompts_per_step, i == rows - 1
        )
        for i, row in enumerate(dataset)
    }

    def script_for(prompt_text: str) -> list[Script]:
        found = [q for q in scripts if q in prompt_text]
        if len(found) != 1:
            raise LookupError(f"{len(found)} scripted questions in a prompt; expected one")
        return scripts[found[0]]

    docs = [d.text for d in iter_documents([workdir / "corpus"])]
    tool_texts = [tool_docstring(spec, config) for spec in TOOLS]
    hops = ", ".join(str(r["hops"]) for r in dataset)
    return SmokeSetup(
        name=f"thresher SearchEnv (append mode; {len(dataset)} world chains of {hops} hops)",
        environment_factory=make,
        reward_funcs=[thresher_reward],
        rows=dataset,
        script_for=script_for,
        corpus=[SYSTEM_PROMPT, *tool_texts, *docs],
        check_rollout=check_rollout,
        check_tools=lambda tools: check_tools(tools, config),
        max_completion_length=4096,
    )


def check_rollout(env: Any, logged: float | None) -> None:
    """Assert that ``env``'s finished episode replays from its trace to the state it ended in
    and that ``logged`` (TRL's reward) is ``train.rewards.reward`` on that trace."""
    rollout = env.search_env.rollout()
    result = rollout.result
    state = replay(rollout.trace)
    ended = (
        state.exit_reason,
        len(state.turns),
        state.tool_calls,
        [d["doc_id"] for d in state.final or []] if result.exit_reason.value == "answered" else [],
        state.used,
    )
    expected = (
        result.exit_reason.value,
        result.turns,
        result.tool_calls,
        [d.doc_id for d in result.documents] if result.exit_reason.value == "answered" else [],
        env.step.info["usage"]["used"],
    )
    if ended != expected:
        raise AssertionError(f"the trace replays to {ended}, the episode ended at {expected}")
    if rollout.unscorable is not None:
        if logged is not None:
            raise AssertionError(f"unscorable rollout ({rollout.unscorable}) logged {logged}")
        return
    beta = env.step.info["beta"]
    want = reward(list(rollout.trace), env.task, beta).total
    if logged is None or float(np.float32(want)) != logged:  # TRL keeps rewards as float32
        raise AssertionError(f"logged reward {logged}, train.rewards.reward on the trace {want}")


def check_tools(tools: Sequence[Any], config: Config) -> None:
    """Assert that the schemas TRL renders from the tool methods say what thresher's say
    (names, descriptions, arguments with their types and descriptions, required ones)."""
    from transformers.utils import get_json_schema

    rendered = {t.__name__: get_json_schema(t)["function"] for t in tools}
    for spec in TOOLS:
        ours = spec.schema(config)["function"]
        theirs = rendered.get(spec.name)
        if theirs is None:
            raise AssertionError(f"TRL has no tool {spec.name}")
        props = {
            k: {"type": v["type"], "description": v["description"]}
            | ({"items": v["items"]} if "items" in v else {})
            for k, v in ours["parameters"]["properties"].items()
        }
        want = (ours["description"], props, ours["parameters"]["required"])
        got = (
            theirs["description"],
            theirs["parameters"]["properties"],
            theirs["parameters"].get("required"),
        )
        if got != want:
            raise AssertionError(f"{spec.name}: TRL renders {got}, thresher's schema says {want}")
    if set(rendered) != {spec.name for spec in TOOLS}:
        raise AssertionError(f"TRL's tools {sorted(rendered)} are not thresher's")
