"""What one episode derives from the chunks it reads, kept for the rest of that episode.

A session reads the same chunks again on every turn (the anchors of each hop,
the documents in view at every clue-chain step, every candidate's link to
every anchor), so it keeps what it derived from their text in a
:class:`TextMemo` it owns. The memo lives and dies with its session: nothing
derived from one corpus or one episode outlives it, and two sessions running at
once never share one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from thresher.corpus.document import Chunk
from thresher.policies.local.bridges import names_in
from thresher.policies.local.features import PairMemo, chunk_words
from thresher.policies.local.text import caseless, sentence_words

__all__ = ["TextMemo", "SentenceNames"]

#: per sentence of a text: its content words and the names and codes it holds
SentenceNames = tuple[tuple[frozenset[str], frozenset[str]], ...]


@dataclass
class TextMemo:
    """One episode's memo of chunk text: words, lowercased text, sentences' names, and
    the link features of (candidate, anchor) pairs (:data:`~.features.PairMemo`).

    Keys are chunk ids with their content hash (a chunk's text is fixed by both).
    """

    pairs: PairMemo = field(default_factory=dict)
    _words: dict[tuple[str, str], tuple[set[str], set[str]]] = field(default_factory=dict)
    _lower: dict[tuple[str, str], str] = field(default_factory=dict)
    _names: dict[str, SentenceNames] = field(default_factory=dict)

    def words(self, chunk: Chunk) -> tuple[set[str], set[str]]:
        """Content words of the chunk's title and text, and of its title alone."""
        key = (chunk.chunk_id, chunk.content_hash)
        got = self._words.get(key)
        if got is None:
            got = self._words[key] = chunk_words(chunk)
        return got

    def lower(self, chunk: Chunk) -> str:
        """The chunk's text lowercased (phrase tests run on it per pair)."""
        key = (chunk.chunk_id, chunk.content_hash)
        got = self._lower.get(key)
        if got is None:
            got = self._lower[key] = chunk.text.lower()
        return got

    def sentence_names(self, text: str) -> SentenceNames:
        """Per sentence of ``text``: its content words and the names and codes it holds
        (a clue chain reads the documents in view again on every hop)."""
        got = self._names.get(text)
        if got is None:
            sents, words = sentence_words(text)
            cased = not caseless(text)
            got = tuple(
                (w, frozenset(names_in(x, cased=cased))) for x, w in zip(sents, words, strict=True)
            )
            self._names[text] = got
        return got
