"""Distract: topical near-misses for a task, mined by BM25 and dense similarity to its clues.

For each clue (the question's rendering of a hop's fact), the top BM25 and top
dense neighbours are gathered (interleaved, so both kinds are represented),
then kept only when they are verified distractors: outside the evidence
documents, and their text names neither the answer nor any bridge entity
(:func:`is_distractor`). They look relevant to a searcher and are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from thresher.corpus.document import Chunk
from thresher.index.store import Store
from thresher.tasks.generate.text import contains, normalize

__all__ = ["is_distractor", "mine_distractors"]


def is_distractor(chunk: Chunk, evidence_docs: Sequence[str], forbidden: Sequence[str]) -> bool:
    """Whether ``chunk`` is a valid distractor: another document, none of ``forbidden`` in it."""
    if chunk.doc_id in evidence_docs:
        return False
    text = normalize(chunk.text)
    return not any(f and contains(text, f) for f in forbidden)


def mine_distractors(
    store: Store,
    queries: Sequence[str],
    evidence_ids: Sequence[str],
    evidence_docs: Sequence[str],
    forbidden: Sequence[str],
    n: int = 8,
    per_query: int = 8,
) -> list[str]:
    """Up to ``n`` distractor chunk ids for a task, best first.

    Args:
        store: the index.
        queries: the clue texts (one per hop); blank ones are skipped.
        evidence_ids: evidence chunk ids (excluded from the searches).
        evidence_docs: evidence documents (their other chunks are not distractors either).
        forbidden: strings a distractor must not contain (the answer and every bridge).
        n: the most distractors returned.
        per_query: hits asked of each retriever per query.

    Returns:
        Chunk ids, round-robin over queries and retrievers, each verified by :func:`is_distractor`.
    """
    lists: list[list[Chunk]] = []
    for query in queries:
        if not query.strip():
            continue
        lists.append([h.chunk for h in store.bm25_search(query, per_query, exclude=evidence_ids)])
        lists.append([h.chunk for h in store.dense_search(query, per_query, exclude=evidence_ids)])
    chosen: list[str] = []
    seen: set[str] = set()
    for row in zip_longest(*lists):
        for chunk in row:
            if chunk is None or chunk.chunk_id in seen:
                continue
            seen.add(chunk.chunk_id)
            if is_distractor(chunk, evidence_docs, forbidden):
                chosen.append(chunk.chunk_id)
                if len(chosen) >= n:
                    return chosen
    return chosen
