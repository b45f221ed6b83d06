"""The local policy's options: one typed record, its ``[policy]`` settings.

``max_hops``, ``hop_k``, ``bridges_per_hop``, ``stop_at``, ``rerank_depth``,
``refs_per_hop`` and ``links_per_hop`` left
at None take the weights' tuned ``controls``, else
:data:`~thresher.policies.local.constants.DEFAULT_CONTROLS`. The other settings'
defaults are :data:`~thresher.policies.local.constants.OPTION_DEFAULTS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from thresher.policies.local.constants import OPTION_DEFAULTS as _D
from thresher.policies.local.models import LocalWeights

__all__ = ["LocalOptions"]


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """How the local policy searches, prunes and answers.

    Attributes:
        weights: a weights file, loaded weights, or None for the shipped ones.
        max_hops: the most follow-up turns after the question's search.
        first_k: chunks shown from the question's search.
        hop_k: chunks shown from each follow-up search.
        bridges_per_hop: follow-up queries per hop.
        keep_docs: documents the answer keeps in view (the best ones); every chunk
            outside them is pruned before the answer.
        prune_below: within those documents, utility under which a chunk other
            than the document's best is pruned.
        prune: False gives the no-prune multi-turn baseline.
        fill: before answering, search the question again while fewer than ``final_k``
            documents are in view (the baselines, asked for ``k`` documents, answer
            with ``k`` whenever the corpus has them; the local policy answers with
            the documents its evidence supports).
        stop_at: sufficiency above which the policy stops hopping (1.0: never early).
        grep: also grep the question's quoted names and codes.
        first_clue: for a question stated as linked clues, also search its first
            clue's words alone in the first turn.
        final_k: documents in the final answer (at most the harness's cap).
        question_scores: how many candidates of a follow-up search are scored against
            the question through the store (the rest get the list's floor).
        rerank_depth: how many of a follow-up search's fused hits the scorer ranks (its
            best by RRF, and any in either retriever's best ``RETRIEVER_HEAD``;
            0: all). A follow-up shows only ``hop_k`` chunks, and its 30th-to-50th
            fused hits rarely reach them: scoring 30 rather than 50 cuts the
            episode's time by about a fifth.
        refs_per_hop: documentation cross-references followed per hop: each is a
            ``grep_corpus`` of where the reference is defined, beside the hop's
            searches (:mod:`~thresher.policies.local.references`; 0: none).
        links_per_hop: links to other pages (``:doc:``, Markdown, MyST, HTML) followed
            per hop: each is a ``read_document`` of the page the link names, showing its
            chunks nearest the question (:mod:`~thresher.policies.local.pagelinks`;
            0: none).
        frontier_k: chunks of the chain's leading edge (found by the last hop through
            its bridge) read first for the next hop's bridges (0: only the best chunks).
        chain_order: in the final answer, move the chain links of each of the best
            ``keep_docs`` documents up beside it.
    """

    weights: str | Path | LocalWeights | None = None
    max_hops: int | None = None
    first_k: int = _D.first_k
    hop_k: int | None = None
    bridges_per_hop: int | None = None
    keep_docs: int = _D.keep_docs
    prune_below: float = _D.prune_below
    prune: bool = True
    fill: bool = False
    stop_at: float | None = None
    grep: bool = True
    first_clue: bool = True
    final_k: int = _D.final_k
    question_scores: int = _D.question_scores
    rerank_depth: int | None = None
    refs_per_hop: int | None = None
    links_per_hop: int | None = None
    frontier_k: int = _D.frontier_k
    chain_order: bool = True
