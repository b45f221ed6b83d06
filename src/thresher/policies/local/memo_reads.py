"""Bridge extraction's reads through an episode's memos.

:func:`~thresher.policies.local.bridges.bridge_queries` runs several times a hop
and reads the same things again on every call (:mod:`.reads`). A session reads
them through a :class:`MemoReads`, made for each planning step over the
episode's two memos:

- its :class:`~thresher.policies.local.memo.TextMemo`, for what is read from
  text alone (an anchor's sentences and their spans, a sentence's tokens, a
  title's heads, an anchor's held words), which may live in the index
  generation's reader memo;
- its :class:`BridgeMemo`, for what is read of the question, of short texts and
  of the titles the episode knows (content words of titles, phrases and the
  question; the question's words a follow-up may add; relation stems; cued
  spans; which titles an anchor text names; each known title's normal form and
  heads): kept for the episode only, never in the reader memo, since the
  question is part of several keys and the maps are small.

Each read is keyed by everything it is read from, so none goes stale as the
episode's titles grow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field

from thresher.policies.local.memo import TextMemo
from thresher.policies.local.reads import (
    AskWords,
    SentenceFacts,
    SpansOf,
    TitleIndex,
    TokensOf,
    ask_words,
    cued_spans,
    relation_stems,
    short_words,
)
from thresher.policies.local.sources.spans import NamedSpans

__all__ = ["BridgeMemo", "MemoReads"]


@dataclass
class BridgeMemo:
    """One episode's memo of what bridge extraction reads of the question, short texts
    and the titles it knows (see the module docstring); each map keyed by all it reads."""

    #: short text (a title, a phrase, the question) -> its content words
    _short: dict[str, frozenset[str]] = field(default_factory=dict)
    #: question or clue -> its :func:`~.reads.ask_words`
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
    #: head -> every title read this episode that it opens (:func:`~.reads.heads_of`)
    _owners: dict[str, list[str]] = field(default_factory=dict)
    #: title -> its normal form, of every title in ``_owners``
    _norms: dict[str, str] = field(default_factory=dict)

    def title_index(
        self,
        titles: Iterable[str],
        heads_map: Callable[[Iterable[str]], Mapping[str, tuple[str, ...]]],
    ) -> TitleIndex:
        """Head -> every title read this episode that it opens (:func:`.reads.add_heads`),
        and each one's normal form (each title read once; ``heads_map``: the new titles'
        heads, by title: :meth:`.memo.TextMemo.heads_map`)."""
        norms = self._norms
        new = [t for t in titles if t not in norms]
        if new:
            heads = heads_map(new)
            owners = self._owners
            for t in new:
                for head in heads[t]:
                    owners.setdefault(head, []).append(t)
                norms[t] = t.lower().strip()
        return TitleIndex(self._owners, norms)

    def short_words(self, text: str) -> frozenset[str]:
        """Content words of a short text (:func:`.reads.short_words`)."""
        got = self._short.get(text)
        if got is None:
            got = self._short[text] = short_words(text)
        return got

    def ask_words(self, text: str) -> AskWords:
        """:func:`.reads.ask_words` of a question or a clue's words."""
        got = self._asks.get(text)
        if got is None:
            got = self._asks[text] = ask_words(text)
        return got

    def relation(self, asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        """:func:`.reads.relation_stems` of ``asked`` less ``named``."""
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
        tokens: TokensOf,
    ) -> dict[str, frozenset[str]]:
        """:func:`.reads.cued_spans` of a sentence, its tokens read by ``tokens`` (never
        change the map returned)."""
        key = (sent_lower, spans, relation, before, after)
        got = self._cued.get(key)
        if got is None:
            got = self._cued[key] = cued_spans(sent_lower, spans, relation, before, after, tokens)
        return got

    def title_hits(self, text: str) -> dict[str, bool]:
        """Title -> whether ``text`` names it, as the episode's reads have filled it in."""
        got = self._title_hits.get(text)
        if got is None:
            got = self._title_hits[text] = {}
        return got


@dataclass(frozen=True, slots=True)
class MemoReads:
    """The :class:`~.reads.BridgeReads` of one planning step, through a session's memos.

    ``memo``: the episode's memo of chunk text; ``bridge``: its memo of bridge reads;
    ``spans``/``source``: the planner's span source (its spans function and a hashable
    name of it; the sentences' spans are kept per text under that name); ``named``: the
    names of known documents this step's anchors hold, read after the source's spans
    in each sentence as a :class:`~.sources.spans.SpanUnion` of the two would
    (each phrase once, any case, first kept).
    """

    memo: TextMemo
    bridge: BridgeMemo
    spans: SpansOf
    source: object
    named: NamedSpans | None = None

    def facts(self, text: str) -> SentenceFacts:
        named = self.named
        if named is None or not named.names:
            return self.memo.bridge_facts(text, self.spans, self.source)
        got = self.memo.facts(text, self.spans, self.source)
        out = []
        for sent, low, w, spans in got:
            union: dict[str, str] = {}
            for span in spans:
                union.setdefault(span.lower(), span)
            for span in named.spans(sent):
                union.setdefault(span.lower(), span)
            out.append((low, w, tuple(union.values())))
        return tuple(out)

    def title_index(self, titles: Iterable[str]) -> TitleIndex:
        return self.bridge.title_index(titles, self.memo.heads_map)

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self.memo.tokens(sent_lower)

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        return self.memo.held_words(title, text, path)

    def words(self, text: str) -> frozenset[str]:
        return self.bridge.short_words(text)

    def asking(self, text: str) -> AskWords:
        return self.bridge.ask_words(text)

    def relation(self, asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        return self.bridge.relation(asked, named)

    def cued(
        self,
        sent_lower: str,
        spans: tuple[str, ...],
        relation: frozenset[str],
        before: int,
        after: int,
    ) -> dict[str, frozenset[str]]:
        return self.bridge.cued(sent_lower, spans, relation, before, after, self.memo.tokens)

    def title_hits(self, text: str) -> MutableMapping[str, bool]:
        return self.bridge.title_hits(text)
