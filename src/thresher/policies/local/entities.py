"""Names and codes a text states: entity spans, their lowercased set, and grep patterns (pure).

A name is what leads from one document to the next: the policy reads a
sentence's capitalized multi-word spans and quoted names (:func:`entity_spans`,
behind the :class:`~thresher.policies.local.sources.CapitalSpans` source
that :func:`~thresher.policies.local.bridges.bridge_queries` reads by default),
a text's names and codes as a set (:func:`names_in`: what a clue chain's
sentences state, :mod:`.clues`), and the question's rare tokens, its quoted
names and codes with digits, as grep patterns for the first turn
(:func:`question_patterns`, :mod:`.planner`).
"""

from __future__ import annotations

import re

from thresher.corpus.analyzer import NAME_CONNECTORS
from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.text import STOPWORDS, caseless, word_runs

__all__ = ["question_patterns", "entity_spans", "names_in"]

_QUOTED = re.compile(r"[\"“”]([^\"“”]{3,80})[\"“”]")
_CODE = re.compile(r"\b(?=[A-Za-z-]*\d)(?=\d*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{2,}\b")
_CAP_WORD = r"(?:[A-Z][\w'’.-]*|\d{1,4})"
_GAP = r"[^\S\n]+"  # spaces within a line: a span never crosses a line break
_JOIN = rf"(?:{_GAP}(?:{'|'.join(sorted(NAME_CONNECTORS))})){{0,2}}"
_SPAN = re.compile(rf"{_CAP_WORD}(?:{_JOIN}{_GAP}{_CAP_WORD})*")
#: a possessive ending (both spellings have one length)
_POSSESSIVE = ("'s", "’s")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
#: a calendar date ("16 Sep 2024", "July 25, 2011"): a value, rarely the next document's name
_DATE = re.compile(
    rf"(?:\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{1,2}}(?:,?\s+\d{{4}})?)",
    re.IGNORECASE,
)


def question_patterns(
    question: str,
    limit: int = DEFAULT_CONSTANTS.grep_patterns,
    min_chars: int = DEFAULT_CONSTANTS.grep_min_chars,
) -> list[str]:
    """Grep patterns for the question's rare tokens: quoted names, then codes with digits.

    Returns regex-escaped patterns of at least ``min_chars`` characters, longest
    first, at most ``limit``.
    """
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    found += [m.group(0) for m in _CODE.finditer(question) if not m.group(0).isdigit()]
    unique = list(dict.fromkeys(f for f in found if len(f) >= min_chars))
    unique.sort(key=lambda s: -len(s))
    return [re.escape(s) for s in unique[:limit]]


def entity_spans(text: str, *, cased: bool | None = None) -> list[str]:
    """Capitalized multi-word spans and quoted names in ``text``, in order, deduplicated.

    A span starts and ends with a capitalized word (or a number), may hold short
    joining words ("University of the Arts"), stays within one line, and is
    dropped when it is a single stopword ("The"), an all-capitals heading of
    several words, a calendar date, or a single word opening the text (a
    sentence's capital, not a name's); a field label before a colon
    ("Assignee:") and leading stopwords ("The") are cut off. A text
    without capitals gives its :func:`~.text.word_runs` instead (``cased``: whether
    the document ``text`` comes from has capitals, when ``text`` is a piece of it).
    """
    spans = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    if caseless(text) if cased is None else not cased:
        return list(dict.fromkeys([*spans, *word_runs(text)]))
    for m in _SPAN.finditer(text):
        parts = m.group(0).rstrip(".").split()
        if text[m.end() : m.end() + 1] == ":":  # a field label ("Assignee:") is no name
            parts = parts[:-1]
        if len(parts) > 1 and all(p.isupper() or p.isdigit() for p in parts):
            continue  # an all-capitals heading ("PATENT REGISTRY"), not a name
        while parts and parts[-1].lower() in NAME_CONNECTORS:
            parts.pop()
        if parts and parts[-1].endswith(_POSSESSIVE):  # "Paul Verhoeven's": Paul Verhoeven
            parts[-1] = parts[-1][: -len(_POSSESSIVE[0])]
        before = text[: m.start()].rstrip(" \t")
        opening = not before or before[-1] in "\n.!?"
        while parts and parts[0].lower() in STOPWORDS:
            parts.pop(0)
            opening = False
        if not parts:
            continue
        if len(parts) == 1 and opening:
            continue  # one capitalized word opening the sentence or line: "Revenue", "Career"
        span = " ".join(parts)
        if len(span) < 3 or span.isdigit() or _DATE.fullmatch(span):
            continue
        spans.append(span)
    return list(dict.fromkeys(spans))


def names_in(text: str, *, cased: bool | None = None) -> set[str]:
    """The names and codes ``text`` holds, lowercased: its entity spans and code-like
    tokens ("GR-2012-012715", "VM-710"); ``cased`` as for :func:`entity_spans`."""
    return {s.lower() for s in entity_spans(text, cased=cased)} | {
        m.group(0).lower() for m in _CODE.finditer(text)
    }
