"""Question decomposition where the question's form shows the chain (pure).

The form read is the *clue chain*: statements linked by placeholders ("(1)
Patent X names [A] as its lead inventor. (2) [A] works at [B]. ... What is
[?]?"), the form of BrowseComp-style puzzles and of ``thresher synth tasks``.
Each statement holding a placeholder is one link; the ask ("What is [?]?":
a sentence opening with a question word or ending with a question mark) and sentences without a placeholder
("Each letter stands for one entity") are not, nor is a lead-in before the
question's first colon ("Clues: ...", "Start from the first statement: ...")
when it holds no placeholder. No phrasing of any question generator is
assumed beyond the placeholders themselves. Nested questions ("the
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

from thresher.policies.local.text import STOPWORDS, content_words, sentences

__all__ = ["PLACEHOLDER", "links", "next_link", "link_words", "placeholders", "is_clue_chain"]

#: a placeholder of a clue chain: [A] ... [Z], [?]
PLACEHOLDER = re.compile(r"\[(?:[A-Z]|\?)\]")
_NUMBERED = re.compile(r"\(\d{1,2}\)\s*")
_ASK = re.compile(r"^(?:what|which|who|whom|where|when|how|name)\b", re.IGNORECASE)


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
    """A link's content words in order (placeholders dropped)."""
    text = PLACEHOLDER.sub(" ", link)
    out: list[str] = []
    for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", text):
        lw = w.lower()
        if lw in STOPWORDS or len(lw) < 2 or lw in (o.lower() for o in out):
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
    text = _without_lead_in(_NUMBERED.sub("", question))
    out = []
    for sent in sentences(text):
        if not sent or _ASK.match(sent) or sent.endswith("?"):
            continue
        if PLACEHOLDER.search(sent) and link_words(sent):
            out.append(sent)
    return out


def _without_lead_in(text: str) -> str:
    """``text`` less what precedes its first sentence's colon, when that lead-in holds no
    placeholder and the rest of the sentence states a link ("Here are the facts:
    [A] was born in ..."); a link that is a field ("Assignee: [A]") keeps its label."""
    first = next(iter(sentences(text)), "")
    head, colon, rest = first.partition(":")
    if not colon or PLACEHOLDER.search(head) or not PLACEHOLDER.search(rest):
        return text
    if not link_words(rest):
        return text
    return text.strip()[len(head) + 1 :].lstrip()
