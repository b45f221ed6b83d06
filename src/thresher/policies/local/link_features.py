"""Link features of a candidate chunk: the chunk against the retained context (pure).

The **link** features of a :class:`~.candidate.Candidate` read it against the
retained chunks trusted as context (its *anchors*, :class:`~.candidate.AnchorView`,
best first): whether an anchor names this chunk's title or this chunk names an
anchor's title, how much of the question it covers that the best anchor does
not, its redundancy with the anchors, and the utility of the chunk whose bridge
found it. They follow the base features (:mod:`.base_features`) in the full
models' rows.

:func:`link_matrix` returns one row per candidate, columns in
:data:`LINK_FEATURES` order. Nothing is memoized here: a session's
:class:`~thresher.policies.local.memo.TextMemo` keeps the link features of
(candidate, anchor) pairs for its episode (a :data:`PairMemo`), and its
:class:`~.memory.EpisodeMemory` the rows computed against one set of anchors
(a :data:`LinkRowMemo`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import numpy as np

from thresher.policies.local.candidate import AnchorView, Candidate, QuestionContext
from thresher.policies.local.text import fold, fold_phrase, holds_folded

__all__ = ["LINK_FEATURES", "PairMemo", "LinkRowMemo", "link_matrix"]

LINK_FEATURES: tuple[str, ...] = (
    "linked_to",  # best anchor weight among anchors whose text names this chunk's title
    "links_from",  # best anchor weight among anchors whose title this chunk's text names
    "top_anchor",  # this chunk's document is the best anchor
    "anchor_rank_inv",  # 1 / rank among anchors (0 if not an anchor)
    "complement",  # share of question words this chunk adds to the best anchor's
    "redundancy",  # best content-word Jaccard with an anchor of another document
    "source_utility",  # base utility now of the chunk whose bridge found this one (0: none)
)


#: (candidate chunk id, content hash) -> anchor key -> what :func:`_link_rows` found of the pair: an
#: episode's memo of the pairs it scored (owned by its session; nested so that a
#: candidate's pairs are found from one key of it, not one key per anchor)
PairMemo: TypeAlias = dict[tuple[str, str], dict[tuple[str, ...], tuple[bool, bool, float]]]

#: anchors' signature -> (candidate chunk id, content hash) -> the candidate's link
#: features but ``source_utility``: an episode's memo of the rows it computed (owned
#: by its session). The signature is what those features read of the anchors and the
#: question (each anchor's key, document and weight, the question's words): a
#: chunk ranked again against the same anchors finds its row.
LinkRowMemo: TypeAlias = dict[tuple[object, ...], dict[tuple[str, str], tuple[float, ...]]]

#: what :func:`_link_rows` reads of an anchor, once per call: its document, weight,
#: memo key, folded text, lowercased title, folded title and words
_AnchorRead: TypeAlias = tuple[str, float, tuple[str, ...], str, str, str, frozenset[str]]


def _anchor_read(a: AnchorView, memo: PairMemo | None) -> _AnchorRead:
    return (
        a.doc_id,
        a.weight,
        a.key if memo is not None else (),
        a.text_folded or fold(a.text_lower),
        a.title.lower(),
        a.title_folded or fold_phrase(a.title),
        a.words,
    )


def _link_rows(
    cands: Sequence[Candidate],
    q: QuestionContext,
    anchors: Sequence[AnchorView],
    memo: PairMemo | None,
    utility: Mapping[str, float] | None,
    row_memo: LinkRowMemo | None = None,
) -> list[list[float]]:
    """The :data:`LINK_FEATURES` of each of ``cands`` (see :func:`link_matrix`). One loop
    over the candidates with what it reads of the anchors taken once: a rerank scores
    a few hundred (candidate, anchor) pairs. With both memos, a candidate's row against
    these anchors is read back from ``row_memo`` when it was computed before."""
    reads = [_anchor_read(a, memo) for a in anchors]
    top = anchors[0] if anchors else None
    q_words = q.words
    known: dict[tuple[str, str], tuple[float, ...]] | None = None
    if row_memo is not None and memo is not None and all(a.key for a in anchors):
        sig = (q_words, tuple((a.key, a.doc_id, a.weight) for a in anchors))
        known = row_memo.get(sig)
        if known is None:
            known = row_memo[sig] = {}
    rows = []
    for c in cands:
        chunk = c.chunk
        source = utility.get(c.via_source, 0.0) if utility and c.via_source else 0.0
        held: dict[tuple[str, ...], tuple[bool, bool, float]] | None = None
        if memo is not None:
            ckey = (chunk.chunk_id, chunk.content_hash)
            if known is not None:
                row = known.get(ckey)
                if row is not None:
                    rows.append([*row, source])
                    continue
            held = memo.get(ckey)
            if held is None:
                held = memo[ckey] = {}
        doc = chunk.doc_id
        title_lower = chunk.title.lower()
        words, n_words, folded, title_folded = c.words, len(c.words), c.folded, c.title_folded
        linked_to = links_from = redundancy = rank_inv = 0.0
        for i, (a_doc, weight, key, a_folded, a_title_lower, a_title_folded, a_words) in enumerate(
            reads
        ):
            if a_doc == doc:
                if rank_inv == 0.0:  # the first is the best: 1 / (i + 1) falls with i
                    rank_inv = 1.0 / (i + 1)
                continue
            got = held.get(key) if held is not None and key else None
            if got is None:
                # the pair: (the anchor names the candidate's title, the candidate names
                # the anchor's title, content-word Jaccard of the two)
                shared = len(words & a_words)
                union = n_words + len(a_words) - shared
                got = (
                    title_folded in a_folded and holds_folded(a_folded, title_folded),
                    a_title_lower != title_lower
                    and a_title_folded in folded
                    and holds_folded(folded, a_title_folded),
                    shared / union if union else 0.0,
                )
                if held is not None and key:
                    held[key] = got
            if weight > linked_to and got[0]:
                linked_to = weight
            if weight > links_from and got[1]:
                links_from = weight
            if got[2] > redundancy:
                redundancy = got[2]
        complement = 0.0
        if top is not None and top.doc_id != doc and q_words:
            complement = len((words & q_words) - top.words) / len(q_words)
        found = (
            linked_to,
            links_from,
            1.0 if top is not None and top.doc_id == doc else 0.0,
            rank_inv,
            complement,
            redundancy,
        )
        if known is not None:
            known[ckey] = found
        rows.append([*found, source])
    return rows


def link_matrix(
    cands: Sequence[Candidate],
    q: QuestionContext,
    anchors: Sequence[AnchorView],
    memo: PairMemo | None = None,
    utility: Mapping[str, float] | None = None,
    row_memo: LinkRowMemo | None = None,
) -> np.ndarray:
    """Rows of :data:`LINK_FEATURES` for ``cands`` against ``anchors`` (``memo``: an
    episode's :data:`PairMemo`, read and filled; ``utility``: chunk id -> base utility
    of each bridge's source chunk, for ``source_utility``; ``row_memo``: an episode's
    :data:`LinkRowMemo`, read and filled, used along with ``memo`` when every anchor
    has a key)."""
    if not cands:
        return np.zeros((0, len(LINK_FEATURES)))
    return np.asarray(_link_rows(cands, q, anchors, memo, utility, row_memo), dtype=np.float64)
