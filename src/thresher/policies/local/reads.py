"""What bridge extraction reads of anchors, titles and the question (pure).

:func:`~thresher.policies.local.bridges.bridge_queries` runs several times a
hop and reads the same things again on every call: each anchor's sentences,
tokens and words, each known title's normal form and heads, the content words
of the question, of titles and of candidate phrases, the stems of what the
question still asks. It reads them through a :class:`BridgeReads`: a session
gives its episode memos (:class:`~thresher.policies.local.memo_reads.MemoReads`);
:class:`DirectReads` computes each anew. Every read is a pure function of its
arguments, so a memo of it, keyed by them, never goes stale.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.text import (
    STOPWORDS,
    caseless,
    content_words,
    sentence_words,
    stem,
    words,
)

__all__ = [
    "AskWords",
    "BridgeReads",
    "DirectReads",
    "SentenceFacts",
    "SpansOf",
    "TitleIndex",
    "TokensOf",
    "add_heads",
    "ask_words",
    "cued_spans",
    "heads_of",
    "held_words_of",
    "relation_stems",
    "sentence_facts",
    "sentence_tokens",
    "short_words",
]

#: a question's words, in question order (see :func:`ask_words`)
_ASK_WORD = re.compile(r"[^\W_]+")

#: per sentence of a text: (the sentence lowercased, its content words, its candidate spans)
SentenceFacts = tuple[tuple[str, frozenset[str], tuple[str, ...]], ...]
#: the words a follow-up may add to its phrase (:func:`ask_words`): (as written,
#: lowercased, stem) each
AskWords = tuple[tuple[str, str, str], ...]
#: a lowercased sentence's words and their stems (:func:`sentence_tokens` or a memo of it)
TokensOf = Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]]


class SpansOf(Protocol):
    """A sentence's candidate phrases (:func:`~.entities.entity_spans` or a span source's
    ``spans``); ``cased``: whether the sentence's document has capitals (``None``: read
    the sentence)."""

    def __call__(self, sentence: str, /, *, cased: bool | None = None) -> list[str]: ...


class TitleIndex(NamedTuple):
    """What :func:`~.bridges.bridge_queries` reads of the known titles."""

    #: head -> the titles it opens (:func:`heads_of`)
    owners: Mapping[str, Sequence[str]]
    #: title -> its normal form (lowercased, stripped)
    norms: Mapping[str, str]


class BridgeReads(Protocol):
    """What :func:`~.bridges.bridge_queries` reads from anchor text, titles and the
    question: a session gives its memos (:class:`~thresher.policies.local.memo_reads.MemoReads`),
    since the same anchors, titles and question come back on every call;
    :class:`DirectReads` computes each anew. Values are read, never changed, except
    :meth:`title_hits`'s map, which the caller fills."""

    def facts(self, text: str) -> SentenceFacts:
        """:func:`sentence_facts` of ``text`` with the reads' span source."""
        ...

    def title_index(self, titles: Iterable[str]) -> TitleIndex:
        """The titles each head opens (:func:`add_heads`) and each title's normal form:
        at least ``titles``' (a memo holds every title its episode has read: the caller
        checks which are open)."""
        ...

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The words of a lowercased sentence and their stems (:func:`sentence_tokens`)."""
        ...

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        """Content words of an anchor and the chain that led to it (:func:`held_words_of`)."""
        ...

    def words(self, text: str) -> frozenset[str]:
        """Content words of a short text: a title, a phrase, the question (:func:`short_words`)."""
        ...

    def asking(self, text: str) -> AskWords:
        """:func:`ask_words` of a question or of a clue's words."""
        ...

    def relation(self, asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        """:func:`relation_stems` of ``asked`` less ``named``."""
        ...

    def cued(
        self,
        sent_lower: str,
        spans: tuple[str, ...],
        relation: frozenset[str],
        before: int,
        after: int,
    ) -> dict[str, frozenset[str]]:
        """:func:`cued_spans` of a sentence (never change the map returned)."""
        ...

    def title_hits(self, text: str) -> MutableMapping[str, bool]:
        """A map of title -> whether ``text`` names it (``n in lower`` and on word
        boundaries, as :func:`~.bridges.linked_titles` tests), which the caller fills
        for the titles it tests: a memo keeps it per text, :class:`DirectReads` gives
        an empty one each time."""
        ...


@dataclass(frozen=True, slots=True)
class DirectReads:
    """:class:`BridgeReads` computed on every call, spans from ``spans_of``."""

    spans_of: SpansOf

    def facts(self, text: str) -> SentenceFacts:
        return sentence_facts(text, self.spans_of)

    def title_index(self, titles: Iterable[str]) -> TitleIndex:
        owners: dict[str, list[str]] = {}
        add_heads(owners, titles)
        return TitleIndex(owners, {t: t.lower().strip() for t in titles})

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return sentence_tokens(sent_lower)

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        return held_words_of(title, text, path)

    def words(self, text: str) -> frozenset[str]:
        return short_words(text)

    def asking(self, text: str) -> AskWords:
        return ask_words(text)

    def relation(self, asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        return relation_stems(asked, named)

    def cued(
        self,
        sent_lower: str,
        spans: tuple[str, ...],
        relation: frozenset[str],
        before: int,
        after: int,
    ) -> dict[str, frozenset[str]]:
        return cued_spans(sent_lower, spans, relation, before, after, sentence_tokens)

    def title_hits(self, text: str) -> MutableMapping[str, bool]:
        return {}


def heads_of(title: str) -> tuple[str, ...]:
    """Lowercased leading word runs (two words or more) of ``title``: the names it opens
    with ("Vratain Microsystems" of "Vratain Microsystems Annual Report 2019")."""
    parts = title.lower().split()
    if len(parts) <= 2:
        return ()  # most titles: no head shorter than the title itself
    return tuple(" ".join(parts[:n]) for n in range(2, len(parts)))


def add_heads(owners: dict[str, list[str]], titles: Iterable[str]) -> None:
    """Add each of ``titles`` to the list of each of its :func:`heads_of` in ``owners``
    (head -> the titles it opens)."""
    for t in titles:
        for head in heads_of(t):
            owners.setdefault(head, []).append(t)


def short_words(text: str) -> frozenset[str]:
    """Content words of a short text (a phrase, a title, the question)."""
    return frozenset(content_words(text))


def held_words_of(title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
    """Content words of an anchor and the chain that led to it."""
    return frozenset(content_words(" ".join([title, text, *path])))


def ask_words(text: str) -> AskWords:
    """The words of ``text`` a follow-up query may carry, in order, each once (any case),
    without stop words and one-letter words; each with its lowercase form and its
    :func:`stem` (:func:`~.bridges.residual_words` keeps those a chain does not hold)."""
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for w in _ASK_WORD.findall(text):
        lw = w.lower()
        if lw in STOPWORDS or len(lw) < 2 or lw in seen:
            continue
        seen.add(lw)
        out.append((w, lw, stem(lw)))
    return tuple(out)


def relation_stems(asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
    """The stems of the question's words ``asked`` that an anchor's name (``named``: its
    title's words) lacks: what the question still asks of it."""
    return frozenset(stem(w) for w in asked - named)


def sentence_facts(text: str, spans: SpansOf) -> SentenceFacts:
    """Per sentence of ``text``: (lowercased, content words, candidate spans)."""
    sents, sent_words = sentence_words(text)
    cased = not caseless(text)
    return tuple(
        (sent.lower(), w, tuple(spans(sent, cased=cased)))
        for sent, w in zip(sents, sent_words, strict=True)
    )


def sentence_tokens(sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words of a lowercased sentence and the :func:`stem` of each, in order."""
    tokens = tuple(words(sent_lower))
    return tokens, tuple(stem(w) for w in tokens)


def cued_spans(
    sent_lower: str,
    spans: Sequence[str],
    relation: frozenset[str],
    before: int = DEFAULT_CONSTANTS.cue_before,
    after: int = DEFAULT_CONSTANTS.cue_after,
    tokens_of: TokensOf | None = None,
) -> dict[str, frozenset[str]]:
    """The ``spans`` of a sentence (lowercased) that a relation word stands beside, each
    with the stems that cue it: a word whose :func:`stem` is in ``relation`` (the stems
    of what the question still asks) at most ``before`` words before the span or
    ``after`` after it ("directed by Tim Burton", "born in the city of Hiroshima";
    "Tim Burton directed"; the constants ``cue_before`` and ``cue_after``).

    "Big Eyes is a 2014 film directed by Tim Burton, written by Scott Alexander and
    starring Amy Adams", asked for Big Eyes' director: Tim Burton, not Amy Adams.
    ``tokens_of``: a memo of :func:`sentence_tokens`.
    """
    of = tokens_of or sentence_tokens
    tokens, stems = of(sent_lower)
    at = [i for i, s in enumerate(stems) if s in relation]
    if not at:
        return {}
    out: dict[str, frozenset[str]] = {}
    for span in spans:
        part = of(span.lower())[0]
        n = len(part)
        if not n:
            continue
        # each place the span's words start, in order (found by its first word, in C)
        head, stop, start = part[0], len(tokens) - n + 1, -1
        while True:
            try:
                start = tokens.index(head, start + 1, stop)
            except ValueError:
                break
            if tokens[start : start + n] != part:
                continue
            end = start + n - 1
            near = [i for i in at if 0 < start - i <= before or 0 < i - end <= after]
            if near:
                out[span.lower()] = frozenset(stems[i] for i in near)
                break
    return out
