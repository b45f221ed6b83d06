"""What the local policy derives from text, and the memo that derives each thing once.

A session reads the same texts again on every turn: the anchors of each hop
(bridge extraction, :func:`~thresher.policies.local.bridges.bridge_queries`,
runs several times a hop), the documents in view at every clue-chain step,
every candidate against every anchor. Each derivation is a pure function of
what it reads (the functions here: :func:`heads_of`, :func:`ask_words`,
:func:`cued_spans`, ...), and a
:class:`TextMemo` keeps its value keyed by everything it reads, so no value goes
stale as the episode's titles grow. There is one read path: every reader goes
through a memo, and a caller without one (a one-off call, a test) gets a fresh
one.

A memo belongs to one session; two sessions never share one. It keeps two kinds
of value:

- what is derived from chunk text alone (content words, lowercased and folded
  text, sentences with their names and spans, a title's heads, a sentence's
  tokens, an anchor's held words) is the same in every episode on an index: when
  the harness hands the session the store's per-generation
  :class:`~thresher.index.reader_memo.ReaderMemo` (``shared``), those go there,
  keyed by the text they read, and the next episode on that generation finds them;
- what is read of the question, of short texts and of the titles the episode
  knows (content words of titles and phrases, the words a follow-up may add,
  relation stems, cued spans, which titles a text names, the heads of the known
  titles) is the episode's own: the question is part of several keys, and
  nothing episode-specific ever goes to the shared memo.

What the scorer computes from an episode's candidates (feature rows, the link
features of (candidate, anchor) pairs, model scores) is kept beside them, in the
session's :class:`~.memory.EpisodeMemory`.

A value read from a memo is never changed (episodes on several threads share
the reader memo's values).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar, cast

from thresher.corpus.document import Chunk
from thresher.index.reader_memo import ReaderMemo
from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.entities import names_in
from thresher.policies.local.sources import NamedSpans, SpanSource
from thresher.policies.local.text import (
    STOPWORDS,
    caseless,
    content_words,
    fold,
    fold_phrase,
    sentence_words,
    stem,
    words,
)

__all__ = [
    "AskWords",
    "ChunkText",
    "SentenceFacts",
    "SentenceNames",
    "TextMemo",
    "TitleIndex",
    "ask_words",
    "chunk_text",
    "chunk_words",
    "cued_spans",
    "heads_of",
    "held_words_of",
    "relation_stems",
    "sentence_tokens",
    "short_words",
]

#: a question's words, in question order (see :func:`ask_words`)
_ASK_WORD = re.compile(r"[^\W_]+")

#: per sentence of a text: (the sentence lowercased, its content words, its candidate spans)
SentenceFacts = tuple[tuple[str, frozenset[str], tuple[str, ...]], ...]
#: per sentence of a text: its content words and the names and codes it holds
SentenceNames = tuple[tuple[frozenset[str], frozenset[str]], ...]
#: the words a follow-up may add to its phrase (:func:`ask_words`): (as written,
#: lowercased, stem) each
AskWords = tuple[tuple[str, str, str], ...]
#: a lowercased sentence's words and their stems (:func:`sentence_tokens` or a memo of it)
TokensOf = Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]]
#: per sentence of a text: (the sentence, lowercased, content words, spans)
_Facts = tuple[tuple[str, str, frozenset[str], tuple[str, ...]], ...]

_T = TypeVar("_T")


class ChunkText(NamedTuple):
    """What a candidate reads of its chunk: content words of its title and text and of
    its title alone, its text lowercased, and that folded (:func:`~.text.fold`)."""

    words: set[str]
    title_words: set[str]
    lower: str
    folded: str
    #: the title as phrase tests look for it (:func:`~.text.fold_phrase`)
    title_folded: str


class TitleIndex(NamedTuple):
    """What :func:`~.bridges.bridge_queries` reads of the known titles."""

    #: head -> the titles it opens (:func:`heads_of`)
    owners: Mapping[str, Sequence[str]]
    #: title -> its normal form (lowercased, stripped)
    norms: Mapping[str, str]


# --- the derivations (pure) -------------------------------------------------------


def chunk_words(chunk: Chunk) -> tuple[set[str], set[str]]:
    """Content words of a chunk's title and text, and of its title."""
    title = content_words(chunk.title)
    return content_words(chunk.text) | title, title


def chunk_text(chunk: Chunk) -> ChunkText:
    """The chunk's :class:`ChunkText`."""
    words_, title_words = chunk_words(chunk)
    lower = chunk.text.lower()
    return ChunkText(words_, title_words, lower, fold(lower), fold_phrase(chunk.title))


def heads_of(title: str) -> tuple[str, ...]:
    """Lowercased leading word runs (two words or more) of ``title``: the names it opens
    with ("Vratain Microsystems" of "Vratain Microsystems Annual Report 2019")."""
    parts = title.lower().split()
    if len(parts) <= 2:
        return ()  # most titles: no head shorter than the title itself
    return tuple(" ".join(parts[:n]) for n in range(2, len(parts)))


def short_words(text: str) -> frozenset[str]:
    """Content words of a short text (a phrase, a title, the question)."""
    return frozenset(content_words(text))


def held_words_of(title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
    """Content words of an anchor and the chain that led to it."""
    return frozenset(content_words(" ".join([title, text, *path])))


def ask_words(text: str) -> AskWords:
    """The words of ``text`` a follow-up query may carry, in order, each once (any case),
    without stop words and one-letter words; each with its lowercase form and its
    :func:`~.text.stem` (:func:`~.bridges.residual_words` keeps those a chain does not
    hold)."""
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


def sentence_tokens(sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words of a lowercased sentence and the :func:`~.text.stem` of each, in order."""
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
    with the stems that cue it: a word whose :func:`~.text.stem` is in ``relation`` (the
    stems of what the question still asks) at most ``before`` words before the span or
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


# --- the memo ------------------------------------------------------------------------


@dataclass
class TextMemo:
    """One episode's memo of what the policy derives from text (see the module).

    ``shared``: the index generation's reader memo, when the harness gave one: what is
    derived from chunk text alone is kept there; else everything is kept here, for this
    episode.
    """

    shared: ReaderMemo | None = None
    #: what is derived from chunk text alone, when there is no shared memo
    _own: dict[Hashable, object] = field(default_factory=dict)
    #: chunk id -> (the chunk object, its ChunkText): an id lookup, then the chunk's title
    #: and text compared (the same strings, or equal ones when the store built a new
    #: Chunk), costs less than hashing the memo's key of the chunk's whole text
    _texts: dict[str, tuple[Chunk, ChunkText]] = field(default_factory=dict)
    #: title -> its heads, as read this episode (every planning step reads every known
    #: title's heads: a plain lookup, not the memo's key)
    _heads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: short text (a title, a phrase, the question) -> its content words
    _short: dict[str, frozenset[str]] = field(default_factory=dict)
    #: question or clue -> its :func:`ask_words`
    _asks: dict[str, AskWords] = field(default_factory=dict)
    #: (question words, title words) -> the stems of the first less the second
    _relations: dict[tuple[frozenset[str], frozenset[str]], frozenset[str]] = field(
        default_factory=dict
    )
    #: (sentence, spans, relation stems, cue_before, cue_after) -> its cued spans
    _cued: dict[
        tuple[str, tuple[str, ...], frozenset[str], int, int], dict[str, frozenset[str]]
    ] = field(default_factory=dict)
    #: anchor text -> title -> whether the text names it
    _title_hits: dict[str, dict[str, bool]] = field(default_factory=dict)
    #: head -> every title read this episode that it opens (:func:`heads_of`)
    _owners: dict[str, list[str]] = field(default_factory=dict)
    #: title -> its normal form, of every title in ``_owners``
    _norms: dict[str, str] = field(default_factory=dict)

    def _get(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """The value of a derivation from chunk text alone (shared when there is a
        shared memo)."""
        memo = self.shared
        got = self._own.get(key) if memo is None else memo.get(key)
        if got is None:
            got = compute()
            if memo is None:
                self._own[key] = got
            else:
                memo.put(key, got)
        return cast(_T, got)

    # what is derived from chunk text alone (shared when there is a shared memo)

    def chunk(self, chunk: Chunk) -> ChunkText:
        """The chunk's :class:`ChunkText` (its word sets may be shared: never change them)."""
        held = self._texts.get(chunk.chunk_id)
        if held is not None:
            was = held[0]
            if was is chunk or (was.text == chunk.text and was.title == chunk.title):
                return held[1]
        got = self._get(("chunk", chunk.title, chunk.text), lambda: chunk_text(chunk))
        self._texts[chunk.chunk_id] = (chunk, got)
        return got

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        """Content words of an anchor and the chain that led to it (:func:`held_words_of`)."""
        return self._get(("held", title, text, path), lambda: held_words_of(title, text, path))

    def sentence_names(self, text: str) -> SentenceNames:
        """Per sentence of ``text``: its content words and the names and codes it holds
        (a clue chain reads the documents in view again on every hop)."""

        def compute() -> SentenceNames:
            sents, sent_words = sentence_words(text)
            cased = not caseless(text)
            return tuple(
                (w, frozenset(names_in(x, cased=cased)))
                for x, w in zip(sents, sent_words, strict=True)
            )

        return self._get(("names", text), compute)

    def sentence_words(self, text: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
        """``text``'s sentences and each one's content words (:func:`.text.sentence_words`)."""
        return self._get(("sentwords", text), lambda: sentence_words(text))

    def _facts(self, text: str, source: SpanSource) -> _Facts:
        """Per sentence of ``text``: the sentence, lowercased, its content words and the
        spans ``source`` finds in it (kept under the source itself: equal sources find
        equal spans; one that is not hashable is read anew)."""

        def compute() -> _Facts:
            sents, sent_words = sentence_words(text)
            cased = not caseless(text)
            return tuple(
                (sent, sent.lower(), w, tuple(source.spans(sent, cased=cased)))
                for sent, w in zip(sents, sent_words, strict=True)
            )

        try:
            key = ("facts", source, text)
            hash(key)
        except TypeError:  # a source that cannot name itself: read anew
            return compute()
        return self._get(key, compute)

    def facts(
        self, text: str, source: SpanSource, named: NamedSpans | None = None
    ) -> SentenceFacts:
        """Per sentence of ``text``: (lowercased, content words, candidate spans): the
        spans of ``source``, then the ``named`` names of known documents it holds, as a
        :class:`~.sources.SpanUnion` of the two reads them (each phrase once, any case,
        first kept). Without names, kept as such: bridge extraction reads it on every
        call."""
        if named is not None and named.names:
            out = []
            for sent, low, w, spans in self._facts(text, source):
                union: dict[str, str] = {}
                for span in spans:
                    union.setdefault(span.lower(), span)
                for span in named.spans(sent):
                    union.setdefault(span.lower(), span)
                out.append((low, w, tuple(union.values())))
            return tuple(out)

        def compute() -> SentenceFacts:
            return tuple((low, w, found) for _, low, w, found in self._facts(text, source))

        try:
            key = ("bridge_facts", source, text)
            hash(key)
        except TypeError:  # a source that cannot name itself: read anew
            return compute()
        return self._get(key, compute)

    def heads_map(self, titles: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """:func:`heads_of` of each of ``titles``, by title (one loop: a planning step
        reads every known title's heads)."""
        shared = self.shared
        get = self._own.get if shared is None else shared.get
        mine = self._heads
        out: dict[str, tuple[str, ...]] = {}
        for title in titles:
            held = mine.get(title)
            if held is None:
                key = ("heads", title)
                got = get(key)
                if got is None:
                    got = heads_of(title)
                    if shared is None:
                        self._own[key] = got
                    else:
                        shared.put(key, got)
                held = mine[title] = cast(tuple[str, ...], got)
            out[title] = held
        return out

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A lowercased sentence's words and their stems (:func:`sentence_tokens`)."""
        return self._get(("tokens", sent_lower), lambda: sentence_tokens(sent_lower))

    # what is read of the question and the titles the episode knows (its own)

    def title_index(self, titles: Iterable[str]) -> TitleIndex:
        """Head -> every title read this episode that it opens, and each one's normal
        form (lowercased, stripped): at least ``titles``' (each title read once; the
        caller checks which are open)."""
        norms = self._norms
        new = [t for t in titles if t not in norms]
        if new:
            heads = self.heads_map(new)
            owners = self._owners
            for t in new:
                for head in heads[t]:
                    owners.setdefault(head, []).append(t)
                norms[t] = t.lower().strip()
        return TitleIndex(self._owners, norms)

    def short_words(self, text: str) -> frozenset[str]:
        """Content words of a short text: a title, a phrase, the question
        (:func:`short_words`)."""
        got = self._short.get(text)
        if got is None:
            got = self._short[text] = short_words(text)
        return got

    def ask_words(self, text: str) -> AskWords:
        """:func:`ask_words` of a question or of a clue's words."""
        got = self._asks.get(text)
        if got is None:
            got = self._asks[text] = ask_words(text)
        return got

    def relation(self, asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        """:func:`relation_stems` of ``asked`` less ``named``."""
        key = (asked, named)
        got = self._relations.get(key)
        if got is None:
            got = self._relations[key] = relation_stems(asked, named)
        return got

    def cued(
        self,
        sent_lower: str,
        spans: tuple[str, ...],
        relation: frozenset[str],
        before: int,
        after: int,
    ) -> dict[str, frozenset[str]]:
        """:func:`cued_spans` of a sentence, its tokens read through :meth:`tokens` (never
        change the map returned)."""
        key = (sent_lower, spans, relation, before, after)
        got = self._cued.get(key)
        if got is None:
            got = self._cued[key] = cued_spans(
                sent_lower, spans, relation, before, after, self.tokens
            )
        return got

    def title_hits(self, text: str) -> dict[str, bool]:
        """Title -> whether ``text`` names it (``n in lower`` and on word boundaries, as
        :func:`~.bridges.linked_titles` tests): the caller fills it for the titles it
        tests, and finds them there on the next call."""
        got = self._title_hits.get(text)
        if got is None:
            got = self._title_hits[text] = {}
        return got
