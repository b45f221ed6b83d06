"""What one episode derives from the chunks it reads, kept for the rest of that episode.

A session reads the same chunks again on every turn (the anchors of each hop,
the documents in view at every clue-chain step, every candidate's link to
every anchor), so it keeps what it derived from their text in a
:class:`TextMemo` it owns. The memo lives and dies with its session: two
sessions running at once never share one.

What is derived from chunk text alone (words, lowercased text, sentences and
their names, a title's heads, a sentence's tokens) is the same in every episode
on an index, so when the harness hands the session the store's per-generation
:class:`~thresher.index.reader_memo.ReaderMemo` (``shared``), those go there
instead, keyed by the text they read: the next episode on that generation finds
them. Nothing episode-specific (a question, the pairs an episode scored, the
names it knows) ever goes there, and a value read from it is never changed.
What bridge extraction reads of the question and the titles the episode knows
is kept apart, for the episode only: :mod:`.memo_reads`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar, cast

from thresher.corpus.document import Chunk
from thresher.index.reader_memo import ReaderMemo
from thresher.policies.local.candidate import chunk_words
from thresher.policies.local.entities import names_in
from thresher.policies.local.link_features import PairMemo
from thresher.policies.local.reads import (
    SentenceFacts,
    SpansOf,
    heads_of,
    held_words_of,
    sentence_tokens,
)
from thresher.policies.local.text import caseless, fold, fold_phrase, sentence_words

__all__ = ["TextMemo", "SentenceNames", "ChunkText"]

#: per sentence of a text: its content words and the names and codes it holds
SentenceNames = tuple[tuple[frozenset[str], frozenset[str]], ...]
#: per sentence of a text: (the sentence, lowercased, content words, base spans)
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


def _chunk_text(chunk: Chunk) -> ChunkText:
    words, title_words = chunk_words(chunk)
    lower = chunk.text.lower()
    return ChunkText(words, title_words, lower, fold(lower), fold_phrase(chunk.title))


@dataclass
class TextMemo:
    """One episode's memo of chunk text: words, lowercased text, sentences' names and
    spans, titles' heads, and the link features of (candidate, anchor) pairs
    (:data:`~.link_features.PairMemo`, always the episode's own).

    ``shared``: the index generation's reader memo, when the harness gave one (see the
    module docstring); else every derivation is kept here, for this episode.
    """

    pairs: PairMemo = field(default_factory=dict)
    shared: ReaderMemo | None = None
    _own: dict[Hashable, object] = field(default_factory=dict)
    #: chunk id -> (the chunk object, its ChunkText): an id lookup, then the chunk's title
    #: and text compared (the same strings, or equal ones when the store built a new
    #: Chunk), costs less than hashing the memo's key of the chunk's whole text
    _texts: dict[str, tuple[Chunk, ChunkText]] = field(default_factory=dict)
    #: title -> its heads, as read this episode (every planning step reads every known
    #: title's heads: a plain lookup, not the memo's key)
    _heads: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def _get(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        memo = self.shared
        got = self._own.get(key) if memo is None else memo.get(key)
        if got is None:
            got = compute()
            if memo is None:
                self._own[key] = got
            else:
                memo.put(key, got)
        return cast(_T, got)

    def chunk(self, chunk: Chunk) -> ChunkText:
        """The chunk's :class:`ChunkText` (its word sets may be shared: never change them)."""
        held = self._texts.get(chunk.chunk_id)
        if held is not None:
            was = held[0]
            if was is chunk or (was.text == chunk.text and was.title == chunk.title):
                return held[1]
        got = self._get(("chunk", chunk.title, chunk.text), lambda: _chunk_text(chunk))
        self._texts[chunk.chunk_id] = (chunk, got)
        return got

    def words(self, chunk: Chunk) -> tuple[set[str], set[str]]:
        """Content words of the chunk's title and text, and of its title alone (shared:
        never change them)."""
        got = self.chunk(chunk)
        return got.words, got.title_words

    def lower(self, chunk: Chunk) -> str:
        """The chunk's text lowercased (phrase tests run on it per pair)."""
        return self.chunk(chunk).lower

    def folded(self, chunk: Chunk) -> str:
        """The chunk's text lowercased and folded (:func:`~.text.fold`): the haystack of
        its phrase tests."""
        return self.chunk(chunk).folded

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        """Content words of an anchor and the chain that led to it (:func:`.reads.held_words_of`)."""
        return self._get(("held", title, text, path), lambda: held_words_of(title, text, path))

    def sentence_names(self, text: str) -> SentenceNames:
        """Per sentence of ``text``: its content words and the names and codes it holds
        (a clue chain reads the documents in view again on every hop)."""

        def compute() -> SentenceNames:
            sents, words = sentence_words(text)
            cased = not caseless(text)
            return tuple(
                (w, frozenset(names_in(x, cased=cased))) for x, w in zip(sents, words, strict=True)
            )

        return self._get(("names", text), compute)

    def sentence_words(self, text: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
        """``text``'s sentences and each one's content words (:func:`.text.sentence_words`)."""
        return self._get(("sentwords", text), lambda: sentence_words(text))

    def facts(self, text: str, spans: SpansOf, source: object) -> _Facts:
        """Per sentence of ``text``: the sentence, lowercased, its content words and its
        ``spans`` (``source``: what names the span source in the key, such as the
        frozen source object itself; equal sources find equal spans; one that is not
        hashable is not memoized)."""

        def compute() -> _Facts:
            sents, sent_words = sentence_words(text)
            cased = not caseless(text)
            return tuple(
                (sent, sent.lower(), w, tuple(spans(sent, cased=cased)))
                for sent, w in zip(sents, sent_words, strict=True)
            )

        try:
            key = ("facts", source, text)
            hash(key)
        except TypeError:  # a source that cannot name itself: read anew
            return compute()
        return self._get(key, compute)

    def bridge_facts(self, text: str, spans: SpansOf, source: object) -> SentenceFacts:
        """:meth:`facts` less each sentence as written: :func:`.reads.sentence_facts`
        (kept as such: bridge extraction reads it on every call)."""

        def compute() -> SentenceFacts:
            return tuple((low, w, found) for _, low, w, found in self.facts(text, spans, source))

        try:
            key = ("bridge_facts", source, text)
            hash(key)
        except TypeError:  # a source that cannot name itself: read anew
            return compute()
        return self._get(key, compute)

    def heads_map(self, titles: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """:func:`.reads.heads_of` of each of ``titles``, by title (one loop: a planning step
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
        """A lowercased sentence's words and their stems (:func:`.reads.sentence_tokens`)."""
        return self._get(("tokens", sent_lower), lambda: sentence_tokens(sent_lower))
