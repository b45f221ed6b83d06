"""What a local-policy session remembers of its episode (one per session, never shared).

The parts of the policy (:mod:`.scoring`, :mod:`.planner`, :mod:`.stop`,
:mod:`.answer`) are configured once and hold nothing of an episode; they read
and write an :class:`EpisodeMemory` their session hands them. The harness calls
a session from the episode's thread only (``propose`` between turns, ``rerank``
in call order within a turn), so the memory needs no lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from thresher.policies.local.bridges import Bridge
from thresher.policies.local.candidate import AnchorView, Candidate, QuestionContext
from thresher.policies.local.chain import Chain
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.features import LinkRowMemo, PairMemo
from thresher.policies.local.memo import TextMemo
from thresher.policies.local.pagelinks import LinkLead
from thresher.policies.local.references import RefLead

__all__ = ["EpisodeMemory"]


@dataclass
class EpisodeMemory:
    """One episode's state: what its searches found and how, and where it stands.

    Attributes:
        question: the question and the score maxima of its own search (set by the
            question's rerank in the first turn).
        cands: cached chunk id -> its candidate record.
        pools: query (stripped) -> chunk id -> candidate, every search's scored list.
        titles: title -> doc id of every candidate seen.
        show: planned query (stripped) -> how many of its hits to show.
        asked: queries and bridge phrases searched (lowercased).
        anchors: the retained chunks the current hop's candidates are linked to.
        via: follow-up query (stripped) -> the bridge it was made from.
        refs: grep pattern -> the cross-reference it follows (:mod:`.references`):
            what a hit of that grep continues the chain from.
        links: document id -> the link it was read through (:mod:`.pagelinks`): what
            the chunks that read shows continue the chain from.
        shown: the chunk ids the episode's searches showed (a read of a linked page
            shows others: a search of the same turn may have shown some already).
        base_rows: chunk id -> (candidate, question context, its base feature row):
            a candidate's base features depend on it and the question only.
        link_pairs: what the link features found of each (candidate, anchor) pair
            (:data:`~.features.PairMemo`): the same pairs come back on every turn.
        link_rows: the link features of the chunks ranked so far, by the anchors
            they were ranked against (:data:`~.features.LinkRowMemo`): the cache is
            ranked on every turn, and a hop's searches share its anchors.
        pool_titles: query (stripped) -> (its search's list in ``pools``, their titles,
            their doc ids): what the map of ``titles`` is made from on every turn.
        source_utility: the bytes of a batch of base rows (a search's bridge sources,
            sorted) -> the base model's probabilities of them: the searches of one hop
            share their sources.
        order_logits: a feature row's bytes -> the order model's raw score of it: the
            cached chunks are ranked on every turn, and most rows come back unchanged
            (a tree ensemble scores each row alone: the same row, the same score).
        question_scores: chunk id -> (BM25, cosine) against the question, as the
            harness's question scorer gave them (a chunk a later search lists again is
            not asked again).
        agreed: the documents the retrievers agree on in the question's own search
            (:func:`~.guards.agreed_docs`), best fused first: what the first hop keeps
            in view and the answer keeps unless the learned scores clearly beat it.
        hop: follow-up turns proposed so far.
        phase: ``search``, then ``fill`` (a baseline's, see :mod:`thresher.policies.fill`),
            then ``prune``, then ``final``.
        text: the episode's memo of what it derives from text (:mod:`.memo`: chunk
            text, kept in the index generation's reader memo when the harness hands
            one; the question and the titles it knows, for this episode only).
        constants: the policy's constants (read, never changed: how far a chain is
            followed back).
    """

    question: QuestionContext
    cands: dict[str, Candidate] = field(default_factory=dict)
    pools: dict[str, dict[str, Candidate]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    show: dict[str, int] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)
    anchors: list[AnchorView] = field(default_factory=list)
    via: dict[str, Bridge] = field(default_factory=dict)
    refs: dict[str, RefLead] = field(default_factory=dict)
    links: dict[str, LinkLead] = field(default_factory=dict)
    shown: set[str] = field(default_factory=set)
    base_rows: dict[str, tuple[Candidate, QuestionContext, np.ndarray]] = field(
        default_factory=dict
    )
    link_pairs: PairMemo = field(default_factory=dict)
    link_rows: LinkRowMemo = field(default_factory=dict)
    pool_titles: dict[str, tuple[dict[str, Candidate], list[str], list[str]]] = field(
        default_factory=dict
    )
    source_utility: dict[bytes, list[float]] = field(default_factory=dict)
    order_logits: dict[bytes, float] = field(default_factory=dict)
    question_scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    agreed: list[str] = field(default_factory=list)
    hop: int = 0
    phase: str = "search"
    text: TextMemo = field(default_factory=TextMemo)
    constants: Constants = DEFAULT_CONSTANTS

    def chain(self) -> Chain:
        """The follow-ups so far and the chunks they came from."""
        return Chain(self.via, self.cands, self.pools, self.constants)
