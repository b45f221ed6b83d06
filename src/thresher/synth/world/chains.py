"""Planted multi-hop clue chains: find them in the rendered world and verify them.

A chain starts at an anchor entity named in the question and follows 2-4
functional relations, each stated by a fact sentence in a different document;
the entity each hop lands on (the bridge) is named in that hop's document and in
the next one. A candidate is kept only if the hop count is honest:

* no document names two entities of the chain that are two or more hops apart
  (so no document links the anchor to the answer, or skips a bridge);
* the hop documents are distinct.

Mentions are found in the documents' visible text, by exact full name, so the
check is on what a reader of the corpus actually sees.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from thresher.synth.world.domains.base import RenderedDoc, display
from thresher.synth.world.entities import World
from thresher.synth.world.relations import RELATIONS, Fact

__all__ = ["Hop", "Chain", "Step", "MentionIndex", "find_chains", "select_chains"]

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a chain: ``subject --relation--> object`` as stated in ``doc``."""

    relation: str
    subject_id: str
    object_id: str | None
    subject: str
    object: str
    doc: str
    fact: str
    alt_docs: tuple[str, ...] = ()

    def to_dict(self, bridge: str | None) -> dict[str, Any]:
        """JSON-safe form; ``bridge`` is the object when another hop follows, else None."""
        return {
            "doc": self.doc,
            "fact": self.fact,
            "bridge": bridge,
            "relation": self.relation,
            "subject": self.subject,
            "object": self.object,
            "subject_id": self.subject_id,
            "object_id": self.object_id,
            "alt_docs": list(self.alt_docs),
        }


@dataclass(slots=True)
class Chain:
    """A verified question whose answer needs every hop's document."""

    id: str
    question: str
    answer: str
    anchor: str
    hops: list[Hop]
    distractors: list[str] = field(default_factory=list)
    answer_aliases: list[str] = field(default_factory=list)

    @property
    def pattern(self) -> tuple[str, ...]:
        """The relation names, in order."""
        return tuple(h.relation for h in self.hops)

    def to_dict(self) -> dict[str, Any]:
        """The record written to ``chains.jsonl``."""
        hops = [
            h.to_dict(h.object if i < len(self.hops) - 1 else None) for i, h in enumerate(self.hops)
        ]
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "answer_aliases": list(self.answer_aliases),
            "n_hops": len(self.hops),
            "anchor": self.anchor,
            "hops": hops,
            "gold_docs": [h.doc for h in self.hops],
            "distractors": list(self.distractors),
        }


@dataclass(frozen=True, slots=True)
class Step:
    """A candidate hop: the facts a chain may cite for it, and every document stating it.

    ``cite`` holds only facts whose sentence occurs in a single document, so a cited
    sentence is found verbatim in exactly the document that cites it.
    """

    relation: str
    cite: tuple[Fact, ...]
    docs: tuple[str, ...]

    @property
    def subject(self) -> str:
        return self.cite[0].subject

    @property
    def object(self) -> str:
        return self.cite[0].object


class MentionIndex:
    """Which documents name which entities (exact full names in visible text).

    Args:
        world: the world whose entity names are looked for.
        docs: the rendered documents.
    """

    def __init__(self, world: World, docs: Iterable[RenderedDoc]) -> None:
        by_first: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for eid in world.by_id:
            name = world.name(eid)
            by_first[_TOKEN.match(name).group()].append((name, eid))  # type: ignore[union-attr]
        self.text: dict[str, str] = {}
        self.docs_of: dict[str, set[str]] = defaultdict(set)
        self._numbers: dict[str, set[str]] = defaultdict(set)
        for doc in docs:
            text = doc.visible
            self.text[doc.path] = text
            for m in _TOKEN.finditer(text):
                token = m.group()
                if token.isdigit():
                    self._numbers[token].add(doc.path)
                for name, eid in by_first.get(token, ()):
                    end = m.start() + len(name)
                    if text.startswith(name, m.start()) and not _continues(text, end):
                        self.docs_of[eid].add(doc.path)

    def literal_docs(self, value: str, among: Iterable[str]) -> set[str]:
        """The documents in ``among`` whose text holds the number ``value`` as a whole token.

        Raises:
            ValueError: ``value`` is not a string of digits (the only literals are years).
        """
        if not value.isdigit():
            raise ValueError(f"literal {value!r} is not a number")
        return self._numbers.get(value, set()) & set(among)


def _continues(text: str, end: int) -> bool:
    return end < len(text) and (text[end].isalnum() or text[end] == "-")


def _kind(world: World, eid: str) -> str:
    return type(world.by_id[eid]).__name__.lower()


def _cooccur(index: MentionIndex, a: str, b: str, b_is_entity: bool) -> bool:
    docs_a = index.docs_of.get(a, set())
    if b_is_entity:
        return bool(docs_a & index.docs_of.get(b, set()))
    return bool(index.literal_docs(b, docs_a))


def find_chains(
    world: World, facts: list[Fact], index: MentionIndex, max_hops: int = 4
) -> list[list[Step]]:
    """Every verified relation path of 2..``max_hops`` hops, as lists of :class:`Step`.

    Args:
        world: the world.
        facts: every fact sentence of the rendered documents.
        index: mentions in the same documents.
        max_hops: the longest chain.

    Returns:
        Paths in a deterministic order; each step lists the facts it may cite (one per
        document), so a caller can pick distinct documents.
    """
    docs_saying: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        docs_saying[f.sentence].add(f.doc)
    grouped: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for f in facts:
        grouped[(f.relation, f.subject)].append(f)
    stated: dict[tuple[str, str], Step] = {}
    for key, options in grouped.items():
        cite = tuple(f for f in options if len(docs_saying[f.sentence]) == 1)
        if cite:
            stated[key] = Step(key[0], cite, tuple(sorted({f.doc for f in options})))
    by_kind: dict[str, list[str]] = defaultdict(list)
    for rel in sorted(RELATIONS):
        by_kind[RELATIONS[rel].subject].append(rel)
    out: list[list[Step]] = []

    def extend(path: list[str], hops: list[Step]) -> None:
        here = path[-1]
        for rel in by_kind[_kind(world, here)]:
            step = stated.get((rel, here))
            if step is None:
                continue
            spec = RELATIONS[rel]
            obj = step.object
            is_entity = spec.object != "year"
            if obj in path or any(_cooccur(index, e, obj, is_entity) for e in path[:-1]):
                continue
            new_hops = [*hops, step]
            if len(new_hops) >= 2 and _distinct_docs_possible(new_hops):
                out.append(new_hops)
            if spec.np is not None and len(new_hops) < max_hops:
                extend([*path, obj], new_hops)

    for anchor in sorted(world.by_id):
        extend([anchor], [])
    return out


def _distinct_docs_possible(hops: list[Step]) -> bool:
    return _assign_docs([s.cite for s in hops], None) is not None


def _assign_docs(options: list[tuple[Fact, ...]], rng: random.Random | None) -> list[Fact] | None:
    """One fact per hop with pairwise distinct documents (backtracking), or None."""
    chosen: list[Fact] = []

    def go(i: int) -> bool:
        if i == len(options):
            return True
        candidates = sorted(options[i], key=lambda f: f.doc)
        if rng is not None:
            rng.shuffle(candidates)
        for f in candidates:
            if all(f.doc != c.doc for c in chosen):
                chosen.append(f)
                if go(i + 1):
                    return True
                chosen.pop()
        return False

    return chosen if go(0) else None


def _make_chain(world: World, path: list[Step], rng: random.Random) -> Chain:
    picked = _assign_docs([s.cite for s in path], rng)
    assert picked is not None  # checked when the path was found
    hops = []
    for step, f in zip(path, picked, strict=True):
        is_entity = RELATIONS[step.relation].object != "year"
        obj_name = world.name(f.object) if is_entity else f.object
        alts = tuple(d for d in step.docs if d != f.doc)
        hops.append(
            Hop(
                step.relation,
                f.subject,
                f.object if is_entity else None,
                world.name(f.subject),
                obj_name,
                f.doc,
                f.sentence,
                alts,
            )
        )
    x = display(world, hops[0].subject_id)
    for h in hops[:-1]:
        x = RELATIONS[h.relation].np.format(x=x)  # type: ignore[union-attr]
    question = RELATIONS[hops[-1].relation].question.format(x=x)
    answer = hops[-1].object
    return Chain(
        "", question, answer, hops[0].subject, hops, [], _aliases(world, hops[-1].object_id, answer)
    )


def _aliases(world: World, entity_id: str | None, answer: str) -> list[str]:
    """Other ways to write ``answer``: without ``Province``/``River``, with ``the``/``patent``."""
    kind = _kind(world, entity_id) if entity_id else "year"
    out = [answer]
    if kind in ("region", "river"):
        out.append(answer.rsplit(" ", 1)[0])
    if kind in ("river", "product", "event"):
        out.append(f"the {answer}")
    if kind == "patent":
        out.append(f"patent {answer}")
    return out


#: Patterns the demo question is taken from, best first.
_DEMO_PATTERNS = (
    ("inventor", "employer", "hq"),
    ("assignee", "ceo", "birthplace"),
    ("maker", "hq", "region"),
    ("inventor", "employer"),
)


def select_chains(
    world: World, paths: list[list[Step]], target: int, rng: random.Random
) -> list[Chain]:
    """Up to ``target`` chains, spread over hop counts, relation patterns and answers.

    About 30% two-hop, 40% three-hop and 30% four-hop chains are taken (a short
    supply of one length is made up from the others), by round-robin over relation
    patterns; an anchor starts at most one chain and an answer ends at most
    ``max(2, target // 100)``. The first chain (the demo question) has a readable
    pattern, preferably "in which town is the company that employs the lead
    inventor of patent X headquartered?". Ids are ``chain-NNNN`` in the returned order.
    """
    by_len: dict[int, dict[tuple[str, ...], list[list[Step]]]] = defaultdict(dict)
    for p in paths:
        by_len[len(p)].setdefault(tuple(s.relation for s in p), []).append(p)
    quotas = {3: round(target * 0.4), 4: round(target * 0.3)}
    quotas[2] = target - quotas[3] - quotas[4]
    used_anchor: set[str] = set()
    answers: dict[str, int] = defaultdict(int)
    per_answer = max(2, target // 100)
    picked: list[Chain] = []

    def take(n_hops: int, limit: int) -> int:
        patterns = {k: list(v) for k, v in sorted(by_len.get(n_hops, {}).items())}
        for v in patterns.values():
            rng.shuffle(v)
        order = sorted(patterns)
        rng.shuffle(order)
        got = 0
        while got < limit and order:
            for pat in list(order):
                if got >= limit:
                    break
                queue = patterns[pat]
                while queue:
                    path = queue.pop()
                    anchor = path[0].subject
                    answer = path[-1].object
                    if anchor in used_anchor or answers[answer] >= per_answer:
                        continue
                    used_anchor.add(anchor)
                    answers[answer] += 1
                    picked.append(_make_chain(world, path, rng))
                    got += 1
                    break
                if not queue:
                    order.remove(pat)
        return got

    for pattern in _DEMO_PATTERNS:  # the demo question first: a readable pattern
        queue = by_len.get(len(pattern), {}).pop(pattern, [])
        if queue:
            path = queue.pop(rng.randrange(len(queue)))
            used_anchor.add(path[0].subject)
            answers[path[-1].object] += 1
            picked.append(_make_chain(world, path, rng))
            quotas[len(pattern)] -= 1
            if queue:
                by_len[len(pattern)][pattern] = queue
            break
    shortfall = 0
    for n in (3, 2, 4):
        shortfall += quotas[n] - take(n, quotas[n])
    for n in (3, 4, 2):
        if shortfall > 0:
            shortfall -= take(n, shortfall)
    for i, c in enumerate(picked):
        c.id = f"chain-{i:04d}"
    return picked
