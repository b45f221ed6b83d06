"""Following a documentation page's cross-references: greps for where they are defined (pure).

In documentation the page a later hop needs is often the one an earlier page
refers to by markup: ``:setting:`CSRF_FAILURE_VIEW``` is defined on the page
holding ``.. setting:: CSRF_FAILURE_VIEW``, ``:ref:`loop-controls``` on the one
holding ``.. _loop-controls:``. A search of the name finds every page that uses
it; a grep of its *definition site* (:func:`thresher.corpus.refsites.definition_pattern`)
finds the page that defines it.

:func:`reference_leads` reads the anchors a hop reads bridges from (the chain's
leading edge and the best retained chunks), in their raw text (roles are
markup: the prose bridges read has none), sentence by sentence as bridges are
read: each cross-reference (:func:`thresher.corpus.docrefs.cross_references`)
of a sentence holding a question word scores its anchor's weight times one plus
the question words its sentence holds (``Constants.question_word_gain`` each),
the best score of a reference kept. A reference is not followed when its definition is already in view (a
chunk the episode holds matches its pattern, the anchor's own among them) or
it was followed before. The planner greps the best few (:class:`RefLead`); a
hit continues the chain through the anchor (its phrase: what the definition
site states, :func:`~thresher.corpus.refsites.site_name`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from thresher.corpus.docrefs import cross_references
from thresher.corpus.refsites import definition_pattern, site_name
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.memo import TextMemo

__all__ = ["RefAnchor", "RefLead", "asking_sentences", "may_refer", "reference_leads"]


@dataclass(frozen=True, slots=True)
class RefAnchor:
    """A chunk references are read from: its id, raw text, and the policy's trust in it."""

    chunk_id: str
    text: str
    weight: float


@dataclass(frozen=True, slots=True)
class RefLead:
    """A cross-reference to follow: grep ``pattern`` for where ``target`` is defined.

    name: what the definition site states (the chain's phrase for a hit).
    source: the chunk id of the anchor that made the reference. score: its priority.
    """

    pattern: str
    target: str
    name: str
    source: str
    score: float


def may_refer(text: str) -> bool:
    """Whether ``text`` may hold a cross-reference (a role needs a backquote)."""
    return "`" in text


def asking_sentences(
    question_words: AbstractSet[str],
    anchors: Sequence[RefAnchor],
    may_hold: Callable[[str], bool],
    constants: Constants = DEFAULT_CONSTANTS,
    memo: TextMemo | None = None,
) -> Iterator[tuple[RefAnchor, str, float]]:
    """The sentences of ``anchors`` that hold a question word, each with its anchor and
    its priority: the anchor's weight times one plus the question words it holds
    (``Constants.question_word_gain`` each). Anchors in order, sentences in text
    order; an anchor whose raw text fails ``may_hold`` (a quick test for the markup
    sought) is not read."""
    memo = memo if memo is not None else TextMemo()
    for anchor in anchors:
        if not may_hold(anchor.text):
            continue  # none of the markup sought: nothing to read (prose, a paragraph)
        sents, words = memo.sentence_words(anchor.text)
        for sent, sent_words in zip(sents, words, strict=True):
            shared = len(sent_words & question_words)
            if shared:  # else a sentence that says nothing the question asks
                yield anchor, sent, anchor.weight * (1.0 + constants.question_word_gain * shared)


def reference_leads(
    question_words: AbstractSet[str],
    anchors: Sequence[RefAnchor],
    held_texts: Iterable[str],
    *,
    followed: AbstractSet[str] = frozenset(),
    limit: int,
    constants: Constants = DEFAULT_CONSTANTS,
    memo: TextMemo | None = None,
) -> list[RefLead]:
    """The ``limit`` best cross-references of ``anchors`` to follow, best first.

    Args:
        question_words: the question's content words.
        anchors: the chunks read, most trusted first.
        held_texts: the texts of the chunks the episode holds (a reference defined in
            one of them is in view already).
        followed: patterns grepped before.
        limit: the most leads returned (0: none, nothing read).
        constants: ``question_word_gain``: what each question word of a reference's
            sentence adds to its score.
        memo: the session's memo (sentences of a chunk's text are read once).
    """
    if limit <= 0 or not anchors:
        return []
    best: dict[str, RefLead] = {}
    for anchor, sent, score in asking_sentences(
        question_words, anchors, may_refer, constants, memo
    ):
        for ref in cross_references(sent):
            pattern = definition_pattern(ref)
            if pattern is None or pattern in followed:
                continue
            held = best.get(pattern)
            if held is None or held.score < score:
                best[pattern] = RefLead(pattern, ref.text, site_name(ref), anchor.chunk_id, score)
    if not best:
        return []
    ranked = sorted(best.values(), key=lambda r: (-r.score, r.target))
    texts = [(t, t.lower()) for t in held_texts]
    out: list[RefLead] = []
    for lead in ranked:
        name = lead.name.lower()
        compiled = re.compile(lead.pattern)
        if any(name in low and compiled.search(t) for t, low in texts):
            continue  # its definition is in view already
        out.append(lead)
        if len(out) >= limit:
            break
    return out
