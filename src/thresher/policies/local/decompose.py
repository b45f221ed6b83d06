"""Question decomposition where the question's form shows the chain (pure).

The form read is the *clue chain*: statements linked by placeholders ("(1)
Patent X names [A] as its lead inventor. (2) [A] works at [B]. ... What is
[?]?"), the form of BrowseComp-style puzzles and of ``thresher synth tasks``.
Each statement is one link; the ask ("What is [?]?") and the instructions
("Each letter stands for one entity") are not links. Nested questions ("the
company that employs the lead inventor of patent Z") need no parse: a follow-up
query drops the question words its chain's documents already hold, which
leaves the outer relations (:func:`~thresher.policies.local.bridges.residual_words`).

:func:`links` returns the chain's links in the order they resolve; a follow-up
query pairs a bridge with the first link its chain has not yet resolved
(:func:`next_link`), so each hop asks the relation it still needs, not the
whole question again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from thresher.policies.local.text import STOPWORDS, content_words

__all__ = ["PLACEHOLDER", "links", "next_link", "link_words", "placeholders", "is_clue_chain"]

#: a placeholder of a clue chain: [A] ... [Z], [?]
PLACEHOLDER = re.compile(r"\[(?:[A-Z]|\?)\]")
_NUMBERED = re.compile(r"\(\d{1,2}\)\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ASK = re.compile(r"^(?:what|which|who|whom|where|when|how|name)\b", re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"\b(?:each (?:bracketed )?letter|stands? for|belongs in place|follow (?:the|it)|"
    r"start from|clues?\b|throughout)",
    re.IGNORECASE,
)
#: words of puzzle instructions that never name anything in a corpus
_BOILERPLATE = frozenset(
    [
        "clue",
        "clues",
        "chain",
        "follow",
        "statement",
        "statements",
        "letter",
        "letters",
        "bracketed",
        "entity",
        "entities",
        "place",
        "belongs",
        "throughout",
        "start",
        "first",
        "others",
    ]
)


def is_clue_chain(question: str) -> bool:
    """Whether ``question`` is a chain of statements linked by placeholders ([A], [?])."""
    return len(PLACEHOLDER.findall(question)) >= 2


def links(question: str) -> list[str]:
    """The chain's links in resolution order (``[question]`` when no form is read)."""
    found = _clue_links(question) if is_clue_chain(question) else []
    return found or [question]


def placeholders(link: str) -> list[str]:
    """The placeholders of a link in order of appearance (``["[C]", "[B]"]``)."""
    return PLACEHOLDER.findall(link)


def link_words(link: str) -> list[str]:
    """A link's content words in order (placeholders and puzzle boilerplate dropped)."""
    text = PLACEHOLDER.sub(" ", link)
    out: list[str] = []
    for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", text):
        lw = w.lower()
        if lw in STOPWORDS or lw in _BOILERPLATE or len(lw) < 2 or lw in (o.lower() for o in out):
            continue
        out.append(w)
    return out


def next_link(chain: list[str], covered: Iterable[str]) -> str:
    """The first link of ``chain`` that ``covered`` texts do not already hold.

    A link is held when at least half its content words occur in the texts (the
    documents found so far state it); the last link when all are held.
    """
    seen: set[str] = set()
    for text in covered:
        seen |= content_words(text)
    for link in chain:
        words = {w.lower() for w in link_words(link)}
        if words and len(words & seen) * 2 < len(words):
            return link
    return chain[-1]


def _clue_links(question: str) -> list[str]:
    text = _NUMBERED.sub("", question)
    out = []
    for sent in _SENTENCE_END.split(text):
        sent = sent.strip()
        if not sent or _ASK.match(sent) or _INSTRUCTION.search(sent) and not _has_link(sent):
            continue
        if PLACEHOLDER.search(sent) and link_words(sent):
            out.append(sent)
    return out


def _has_link(sentence: str) -> bool:
    """An instruction sentence that still states a link ("Start from X: X was born in [A]")."""
    rest = _INSTRUCTION.sub(" ", sentence)
    return bool(PLACEHOLDER.search(rest)) and len(link_words(rest)) >= 2
