"""A STAND-IN environment for the smoke, until thresher's SearchEnv exists: lookups in memory.

``StandInLookupEnv`` has the shape TRL's ``environment_factory`` wants (``reset(**row)`` returns
the question; each public method is a tool whose docstring and annotations become its schema) and
nothing of thresher's harness: no index, budget, pruning or trace. It answers ``lookup(entity)``
with the fact sentences a seeded world states about that entity. Its reward is 1.0 when the final
reply is the chain's answer, else 0.0.

``stand_in_setup(world)`` returns the :class:`~seam.SmokeSetup` the smoke runs: this environment's
factory and reward, one row per chain, and per row the scripts of its group (a solver, one that
first calls the tool with a wrong argument, one that guesses, one whose call is unparseable; the
last row's group is solvers and one rollout under which the index goes down: its reward is None,
the solvers' are all equal). SearchEnv's setup replaces this
whole module.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from scripted import Reply, Script
from seam import SmokeSetup

from thresher.synth.world import BuiltWorld
from thresher.synth.world.chains import Chain


class StandInLookupEnv:
    """An in-memory lookup environment: a stand-in for thresher's SearchEnv.

    Args:
        facts: entity name -> the sentences stating facts about it.
        offline: names whose lookup fails as if the index were unreachable: an infrastructure
            failure, which makes the rollout unscorable (reward None), never a 0.
    """

    def __init__(self, facts: dict[str, list[str]], offline: frozenset[str] = frozenset()) -> None:
        self._facts = facts
        self._offline = offline
        self.question = ""
        self.answers: tuple[str, ...] = ()
        self.looked_up: list[str] = []
        self.infrastructure_failed = False

    def reset(self, **row: Any) -> str:
        """Start an episode on a dataset row (``question``, ``answer``, ``aliases``); return the question."""
        self.question = row["question"]
        self.answers = (row["answer"], *row.get("aliases", []))
        self.looked_up = []
        self.infrastructure_failed = False
        return self.question

    def lookup(self, entity: str) -> str:
        """Return the facts the corpus states about an entity.

        Args:
            entity: the entity's full name, as written in the question or in an earlier result.

        Returns:
            One fact sentence per line.
        """
        self.looked_up.append(entity)
        if entity in self._offline:
            self.infrastructure_failed = True
            raise ConnectionError("the index is unreachable; the episode cannot be scored")
        sentences = self._facts.get(entity)
        if not sentences:
            raise KeyError(
                f"no entity named {entity!r}; use a full name from the question or a result"
            )
        return "\n".join(sentences)


def answer_reward(
    completions: list[list[dict[str, Any]]], environments: list[StandInLookupEnv], **_: Any
) -> list[float | None]:
    """TRL reward function: 1.0 when a rollout's last message is an assistant reply whose text is
    one of its environment's accepted answers, else 0.0; None (unscorable) after an
    infrastructure failure.

    It lives outside the environment because every public method of the environment is a tool.
    """
    rewards: list[float | None] = []
    for completion, env in zip(completions, environments, strict=True):
        if env.infrastructure_failed:
            rewards.append(None)
            continue
        final = completion[-1]
        text = final.get("content") if final.get("role") == "assistant" else None
        rewards.append(1.0 if isinstance(text, str) and text.strip() in env.answers else 0.0)
    return rewards


def world_facts(world: BuiltWorld) -> dict[str, list[str]]:
    """Entity name -> the distinct fact sentences about it, in document order."""
    facts: dict[str, list[str]] = defaultdict(list)
    for doc in world.docs:
        for fact in doc.facts:
            name = world.world.name(fact.subject)
            if fact.sentence not in facts[name]:
                facts[name].append(fact.sentence)
    return dict(facts)


#: the name whose lookup the stand-in answers as an unreachable index
OFFLINE = "Offline Archive"


def _call(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def _scripts(chain: Chain, all_solvers: bool) -> list[Script]:
    end = "<|im_end|>"
    lookups = tuple(
        Reply(_call("lookup", {"entity": h.subject}) + end, calls=1) for h in chain.hops
    )
    answer = Reply(chain.answer + end)
    solver = Script("solver", (*lookups, answer), 1.0)
    # all lookups in one reply: several tool results in a row before the next turn
    parallel = Script(
        "parallel",
        (
            Reply(
                "".join(_call("lookup", {"entity": h.subject}) for h in chain.hops) + end,
                calls=len(chain.hops),
            ),
            answer,
        ),
        1.0,
    )
    if all_solvers:
        # the index goes down under one rollout: its reward is None, its group's stay equal
        outage = Script(
            "outage",
            (Reply(_call("lookup", {"entity": OFFLINE}) + end, calls=1, failures=1), answer),
            None,
        )
        return [solver, parallel, solver, outage]
    bad_argument = Script(
        "bad-argument",
        (
            Reply(_call("lookup", {"name": chain.hops[0].subject}) + end, calls=1, failures=1),
            *lookups,
            answer,
        ),
        1.0,
    )
    guesser = Script("guesser", (Reply("I do not know" + end),), 0.0)
    # no closing brace: parse_response falls back to plain text, so TRL counts no call at all
    unparseable = Script(
        "unparseable",
        (Reply('<tool_call>{"name": "lookup", "arguments": {"entity": </tool_call>' + end),),
        0.0,
    )
    return [solver, bad_argument, guesser, unparseable]


def stand_in_setup(world: BuiltWorld, rows: int = 4) -> SmokeSetup:
    """The smoke on :class:`StandInLookupEnv`: ``rows`` chains of the world, scripted groups."""
    facts = world_facts(world)
    chains = [c for c in world.chains if all(h.subject in facts for h in c.hops)][:rows]
    if len(chains) < rows:
        raise ValueError(
            f"the world has {len(chains)} chains whose subjects all have facts; ask for fewer rows"
        )
    scripts = {c.question: _scripts(c, all_solvers=i == rows - 1) for i, c in enumerate(chains)}

    def script_for(prompt_text: str) -> list[Script]:
        found = [q for q in scripts if q in prompt_text]
        if len(found) != 1:
            raise LookupError(f"{len(found)} scripted questions in a prompt; expected one")
        return scripts[found[0]]

    return SmokeSetup(
        name="stand-in lookup environment",
        environment_factory=lambda: StandInLookupEnv(facts, offline=frozenset({OFFLINE})),
        reward_funcs=[answer_reward],
        rows=[
            {"question": c.question, "answer": c.answer, "aliases": list(c.answer_aliases)}
            for c in chains
        ],
        script_for=script_for,
        corpus=[d.visible for d in world.docs],
    )
