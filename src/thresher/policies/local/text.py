"""Small, pure text helpers the local policy shares: words, content words, sentences.

No corpus statistics and only a crude suffix stemmer (:func:`stem`, for matching a
question's relation word to the text's form of it: "director" / "directed"):
cheap enough to run on every candidate of every search (the policy's budget is
tens of milliseconds per episode).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "STOPWORDS",
    "words",
    "content_words",
    "sentences",
    "sentence_words",
    "best_sentences",
    "contains_phrase",
    "stem",
]

_STOPWORDS_TEXT = (
    "a about after again against all also am an and another any are as at be because been "
    "before being between both but by called can could d did do does done down during each "
    "either else every few first for from further had has have having he her here hers him "
    "his how i if in into is it it's its just known least less ll m many may me might more "
    "most much must my name named neither no nor not o of off on once one ones only onto or "
    "other our out over own re s same second shall she should so some such t than that the "
    "their theirs them then there these they third this those through to too under until up "
    "us ve very was we were what when where whether which while who whom whose why will with "
    "without would y year years yes you your "
)
#: English function words and question words (lowercase)
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_SINGLE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[\"'“(\[]?[A-Z0-9])|[^\S\n]*\n\s*")


def words(text: str) -> list[str]:
    """Lowercased word tokens of ``text`` (letters and digits, inner apostrophes kept)."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """The distinct words of ``text`` that are not stopwords and are not one letter."""
    return set(_WORD.findall(text.lower())) - STOPWORDS - _SINGLE


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (on ``.!?`` followed by a capital or digit, but not
    after an initial: "directed by Erle C. Kenton" is one sentence; and at line
    breaks: a heading, a field or an e-mail header line is a sentence of its own)."""
    parts = [p.strip() for p in _SENTENCE.split(text.strip())]
    return [p for p in parts if p]


def best_sentences(text: str, cues: Iterable[str], limit: int = 2, max_chars: int = 400) -> str:
    """The ``limit`` sentences of ``text`` sharing most content words with ``cues``, in text order.

    Used as the extractive justification of a final document. Ties keep the
    earlier sentence; the result is cut to ``max_chars`` characters.
    """
    cue_words: set[str] = set()
    for cue in cues:
        cue_words |= content_words(cue)
    sents, sent_words = sentence_words(text)
    if not sents:
        return ""
    scored = sorted(range(len(sents)), key=lambda i: (-len(sent_words[i] & cue_words), i))
    chosen = sorted(scored[: max(1, limit)])
    out = " ".join(sents[i] for i in chosen)
    return out if len(out) <= max_chars else out[: max_chars - 1].rstrip() + "…"


def sentence_words(text: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
    """``text``'s :func:`sentences` and each one's :func:`content_words`."""
    sents = tuple(sentences(text))
    return sents, tuple(frozenset(content_words(x)) for x in sents)


def contains_phrase(haystack_lower: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``haystack_lower`` (already lowercased) on word boundaries."""
    p = phrase.lower().strip()
    if len(p) < 3:
        return False
    start = haystack_lower.find(p)
    while start >= 0:
        end = start + len(p)
        before = haystack_lower[start - 1] if start > 0 else " "
        after = haystack_lower[end] if end < len(haystack_lower) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = haystack_lower.find(p, start + 1)
    return False


#: suffixes :func:`stem` tries in this order (the first that leaves at least 4 letters goes)
_SUFFIXES = ("ation", "ition", "ing", "age", "ed", "er", "or", "ion", "es", "s", "e")


def stem(word: str) -> str:
    """A crude key shared by a lowercase word's inflections: "directed" and "director"
    give "direct", "located" and "location" give "locat". Hand-written because it must join an agent noun to its verb: the
    Snowball stemmer the BM25 index uses keeps "director" apart from "directed".
    It only has to match a question's relation word to the text's form of it;
    "country" and "county" stay apart."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word
