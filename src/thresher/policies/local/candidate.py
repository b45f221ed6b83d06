"""The candidate record and the views it is scored against (pure).

A candidate is a chunk some call returned, with its scores against the
subquery that found it and against the question (:class:`Candidate`). It is
scored against the question (:class:`QuestionContext`: the question's words
and the reference scores of its own search) and, for the link features,
against the retained chunks trusted as context (:class:`AnchorView`). The
features read from them are in :mod:`.features` (base: the chunk and the
queries alone; link: the chunk against the anchors).
A session's :class:`~thresher.policies.local.memo.TextMemo` hands candidates
their words and lowercased text; a candidate made without them derives them
itself, with the memo module's derivations (:func:`~.memo.chunk_words`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from thresher.corpus.document import Chunk
from thresher.policies.local.memo import chunk_words
from thresher.policies.local.text import content_words, fold, fold_phrase

__all__ = ["Candidate", "QuestionContext", "AnchorView"]


@dataclass(slots=True)
class Candidate:
    """One chunk with the scores of how it was found.

    Scores against the subquery come from the search hit (None when the
    retriever did not list it); scores against the question are filled by the
    policy (from the question's own search or ``Store.similarity``). ``words``,
    ``title_words`` and ``lower`` (the text lowercased) are computed from the chunk
    unless given (a session gives them from its memo); so is ``folded``, ``lower`` with
    accents folded (:func:`~.text.fold`), the haystack of the phrase tests.
    """

    chunk: Chunk
    hop: int = 0
    subquery: str = ""
    rank: int = 1
    bm25_s: float | None = None
    dense_s: float | None = None
    pool_bm25_max: float = 0.0
    pool_dense_max: float = 0.0
    bm25_q: float | None = None
    dense_q: float | None = None
    words: set[str] = field(default_factory=set)
    title_words: set[str] = field(default_factory=set)

    sub_words: frozenset[str] | None = None
    #: the bridge phrase of the follow-up that found the chunk ("" for the question's search)
    via: str = ""
    lower: str = ""
    #: content words of ``via`` (computed when not given)
    via_words: frozenset[str] | None = None
    #: the score of the bridge ``via`` (:attr:`~.bridges.Bridge.score`: its anchor's
    #: utility times the evidence that it names the next link, such as a relation word
    #: of the question introducing it); 0 for the question's search
    via_score: float = 0.0
    #: the chunk id of the bridge's source: the chunk that named ``via`` ("" for the
    #: question's search)
    via_source: str = ""
    folded: str = ""
    #: the chunk's title as phrase tests look for it (:func:`~.text.fold_phrase`)
    title_folded: str = ""

    def __post_init__(self) -> None:
        if not self.words and not self.title_words:
            self.words, self.title_words = chunk_words(self.chunk)
        if not self.lower:
            self.lower = self.chunk.text.lower()
        if not self.folded:
            self.folded = fold(self.lower)
        if not self.title_folded:
            self.title_folded = fold_phrase(self.chunk.title)
        if self.sub_words is None:
            self.sub_words = frozenset(content_words(self.subquery))
        if self.via_words is None:
            self.via_words = frozenset(content_words(self.via)) if self.via else frozenset()


@dataclass(frozen=True, slots=True)
class QuestionContext:
    """The question and the reference scores of its own search.

    bm25_max: the best BM25 score of the question's search (normalizer).
    dense_max: the best cosine of the question's search.
    doc_ranks: document id -> its best 1-based ranks in the question's own search
        (fused, BM25's own list, dense's own list; 0: not listed there), set with the
        maxima by that search; empty before it.
    """

    question: str
    bm25_max: float = 1.0
    dense_max: float = 1.0
    lower: str = ""
    words: frozenset[str] = frozenset()
    #: ``lower`` with accents folded (:func:`~.text.fold`; made from it when empty)
    folded: str = ""
    doc_ranks: Mapping[str, tuple[int, int, int]] = field(
        default_factory=dict, compare=False, hash=False
    )

    @classmethod
    def of(
        cls,
        question: str,
        bm25_max: float = 1.0,
        dense_max: float = 1.0,
        doc_ranks: Mapping[str, tuple[int, int, int]] | None = None,
    ) -> QuestionContext:
        lower = question.lower()
        return cls(
            question,
            bm25_max,
            dense_max,
            lower,
            frozenset(content_words(question)),
            fold(lower),
            doc_ranks or {},
        )


@dataclass(frozen=True, slots=True)
class AnchorView:
    """A retained chunk trusted as context for link features (weight: its utility, 0..1).

    ``key`` is the anchor chunk's ``(chunk_id, content_hash)`` when the view was made
    from a candidate (:meth:`of`); link features of a (candidate, anchor) pair may then
    be memoized (a :data:`~.features.PairMemo`), since the same pairs come back on every turn of
    an episode. A view made by hand (empty key) is computed each time.
    """

    doc_id: str
    title: str
    text_lower: str
    words: frozenset[str]
    weight: float
    key: tuple[str, ...] = ()
    #: ``text_lower`` with accents folded (:func:`~.text.fold`; made from it when empty)
    text_folded: str = ""
    #: ``title`` as phrase tests look for it (:func:`~.text.fold_phrase`; made when empty)
    title_folded: str = ""

    @classmethod
    def of(cls, cand: Candidate, weight: float) -> AnchorView:
        """The view of a candidate's chunk, keyed for the pair memo."""
        chunk = cand.chunk
        return cls(
            chunk.doc_id,
            chunk.title,
            cand.lower,
            frozenset(cand.words),
            weight,
            (chunk.chunk_id, chunk.content_hash),
            cand.folded,
            cand.title_folded,
        )
