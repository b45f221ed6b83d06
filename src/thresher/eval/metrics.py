"""Retrieval and answer metrics: small pure functions, one formula each.

Everything here is document-level: ``ranked``, ``returned`` and ``gold`` hold
document ids. Callers map chunk ids (``doc#N``) to their documents first.
A ranked list may then repeat a document; every ranked metric keeps only the
first occurrence of each id (the document's best rank), so a chunk ranking
mapped to documents scores like the document ranking it implies.

``gold`` is a collection of relevant doc ids or a mapping ``{doc_id: grade}``;
in a mapping, documents with grade > 0 are relevant (as in ``trec_eval``), and
:func:`ndcg_at_k` uses the grades as gains.

Bad arguments (``k < 1``, no gold documents) raise
:class:`thresher.errors.InputError`. Metrics that are undefined for a normal
episode (no prunes, no bridge hop) return ``None``: leave such episodes out of
the mean rather than counting them as 0 or 1.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from thresher.errors import InputError

__all__ = [
    "recall_at_k",
    "precision_at_k",
    "all_gold_at_k",
    "output_recall",
    "output_precision",
    "output_f1",
    "ndcg_at_k",
    "mrr",
    "average_precision",
    "trajectory_recall",
    "bridge_preservation",
    "prune_accuracy",
    "premature_prunes",
]

Gold = Collection[str] | Mapping[str, float]


# --- input checks ------------------------------------------------------------------------------


def _check_k(k: int | None, optional: bool) -> None:
    if k is None and optional:
        return
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}; pass k >= 1")


def _check_ids(ids: Iterable[str], name: str) -> None:
    if isinstance(ids, str):
        raise InputError(f"{name} must be a collection of doc ids, not the string {ids!r}")


def _gold_set(gold: Gold, *, allow_empty: bool = False) -> frozenset[str]:
    _check_ids(gold, "gold")
    if isinstance(gold, Mapping):
        out = frozenset(d for d, g in gold.items() if g > 0)
    else:
        out = frozenset(gold)
    if not out and not allow_empty:
        raise InputError("gold has no relevant document; this metric is undefined for the task")
    return out


def _dedupe(ranked: Sequence[str]) -> list[str]:
    _check_ids(ranked, "ranked")
    seen: set[str] = set()
    out: list[str] = []
    for doc in ranked:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def _top(ranked: Sequence[str], k: int | None, optional: bool = False) -> list[str]:
    _check_k(k, optional)
    docs = _dedupe(ranked)
    return docs if k is None else docs[:k]


# --- ranked retrieval --------------------------------------------------------------------------


def recall_at_k(ranked: Sequence[str], gold: Gold, k: int) -> float:
    """Share of the gold documents found in the top ``k``.

    ``recall@k = |top_k(ranked) ∩ G| / |G|``.

    Args:
        ranked: doc ids, best first (duplicates: first occurrence kept).
        gold: relevant doc ids (or ``{doc: grade}``, grade > 0 relevant).
        k: cut-off, >= 1.

    Returns:
        A value in [0, 1].

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    g = _gold_set(gold)
    return len(set(_top(ranked, k)) & g) / len(g)


def precision_at_k(ranked: Sequence[str], gold: Gold, k: int) -> float:
    """Share of the top ``k`` positions that hold a gold document.

    ``P@k = |top_k(ranked) ∩ G| / k``; the denominator is ``k`` even when fewer
    than ``k`` documents were ranked (as ``trec_eval``'s ``P_k``).

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    g = _gold_set(gold)
    return len(set(_top(ranked, k)) & g) / k


def all_gold_at_k(ranked: Sequence[str], gold: Gold, k: int) -> float:
    """1.0 if every gold document is in the top ``k``, else 0.0.

    ``all@k = [G ⊆ top_k(ranked)]``.

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    g = _gold_set(gold)
    return 1.0 if g <= set(_top(ranked, k)) else 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Gold, k: int) -> float:
    """Normalized discounted cumulative gain at ``k``, linear gains.

    ``DCG@k = Σ_{i=1..k} rel_i / log2(i + 1)``, ``nDCG@k = DCG@k / IDCG@k`` where
    IDCG@k is the DCG of the gold grades sorted descending. ``rel_i`` is the
    grade of the document at rank ``i`` (1 for a collection ``gold``, 0 for a
    non-gold document). Linear gains, as ``trec_eval``'s ``ndcg_cut``.

    Returns:
        A value in [0, 1].

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    _gold_set(gold)
    grades = (
        {d: float(g) for d, g in gold.items() if g > 0}
        if isinstance(gold, Mapping)
        else dict.fromkeys(gold, 1.0)
    )
    dcg = sum(grades.get(doc, 0.0) / math.log2(i + 2) for i, doc in enumerate(_top(ranked, k)))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg


def mrr(ranked: Sequence[str], gold: Gold, k: int | None = None) -> float:
    """Reciprocal rank of the first gold document (the per-query term of MRR).

    ``RR = 1 / min{i : ranked_i ∈ G}``, 0 if no gold document is ranked (within
    the top ``k`` when ``k`` is given). MRR is the mean of RR over queries.

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    g = _gold_set(gold)
    for i, doc in enumerate(_top(ranked, k, optional=True), start=1):
        if doc in g:
            return 1.0 / i
    return 0.0


def average_precision(ranked: Sequence[str], gold: Gold, k: int | None = None) -> float:
    """Average precision (the per-query term of MAP, as ``trec_eval``'s ``map``).

    ``AP = (1 / |G|) Σ_{i : ranked_i ∈ G} P@i``, over the top ``k`` when given;
    gold documents never ranked contribute 0.

    Raises:
        InputError: ``k < 1`` or no gold document.
    """
    g = _gold_set(gold)
    hits = 0
    total = 0.0
    for i, doc in enumerate(_top(ranked, k, optional=True), start=1):
        if doc in g:
            hits += 1
            total += hits / i
    return total / len(g)


# --- the returned set --------------------------------------------------------------------------


def output_recall(returned: Collection[str], gold: Gold) -> float:
    """Share of the gold documents in the agent's final answer set.

    ``R = |S ∩ G| / |G|`` for the returned set ``S``.

    Raises:
        InputError: no gold document.
    """
    g = _gold_set(gold)
    _check_ids(returned, "returned")
    return len(set(returned) & g) / len(g)


def output_precision(returned: Collection[str], gold: Gold) -> float:
    """Share of the returned documents that are gold.

    ``P = |S ∩ G| / |S|``; 0 when nothing was returned.

    Raises:
        InputError: no gold document.
    """
    g = _gold_set(gold)
    _check_ids(returned, "returned")
    s = set(returned)
    return len(s & g) / len(s) if s else 0.0


def output_f1(returned: Collection[str], gold: Gold) -> float:
    """Harmonic mean of :func:`output_precision` and :func:`output_recall`.

    ``F1 = 2PR / (P + R)``; 0 when ``P + R = 0``.

    Raises:
        InputError: no gold document.
    """
    p = output_precision(returned, gold)
    r = output_recall(returned, gold)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


# --- the episode -------------------------------------------------------------------------------


def trajectory_recall(seen_doc_ids: Collection[str], gold: Gold) -> float:
    """Share of gold documents retrieved at any point of the episode.

    ``TR = |seen ∩ G| / |G|`` where ``seen`` is every document any tool call
    returned (the retrieval cache), pruned or not.

    Raises:
        InputError: no gold document.
    """
    g = _gold_set(gold)
    _check_ids(seen_doc_ids, "seen_doc_ids")
    return len(set(seen_doc_ids) & g) / len(g)


def bridge_preservation(
    final_context_doc_ids: Collection[str], bridge_doc_ids: Collection[str]
) -> float | None:
    """Share of the bridge documents still in the active context at the end.

    ``BP = |final ∩ B| / |B|`` where ``B`` are the gold documents of the
    non-final hops (the ones that lead to the answer document).

    Returns:
        A value in [0, 1], or ``None`` when the task has no bridge document.
    """
    _check_ids(final_context_doc_ids, "final_context_doc_ids")
    _check_ids(bridge_doc_ids, "bridge_doc_ids")
    b = set(bridge_doc_ids)
    if not b:
        return None
    return len(set(final_context_doc_ids) & b) / len(b)


def prune_accuracy(pruned_doc_ids: Sequence[str], gold: Gold) -> float | None:
    """Share of prunes that removed a chunk of a non-gold document.

    ``PA = |{p ∈ pruned : p ∉ G}| / |pruned|``. This is the Context-1 report's
    "prune accuracy": the fraction of pruned chunks that were not needed. Each
    entry of ``pruned_doc_ids`` is one pruned chunk mapped to its document, so
    pruning three chunks of one document counts three times.

    Returns:
        A value in [0, 1], or ``None`` when nothing was pruned.
    """
    g = _gold_set(gold, allow_empty=True)
    _check_ids(pruned_doc_ids, "pruned_doc_ids")
    if not pruned_doc_ids:
        return None
    return sum(1 for d in pruned_doc_ids if d not in g) / len(pruned_doc_ids)


def premature_prunes(
    pruned: Sequence[str], gold: Gold, final_context: Collection[str] | None = None
) -> list[str]:
    """Gold documents that the episode pruned (the "premature pruning" failure).

    ``{d ∈ G : d ∈ pruned} \\ final_context``: with ``final_context`` given, a gold
    document that was pruned but is back in the active context at the end
    (recalled or re-read) is not counted.

    Returns:
        The distinct doc ids, in the order they were first pruned.
    """
    g = _gold_set(gold, allow_empty=True)
    _check_ids(pruned, "pruned")
    back = set(final_context or ())
    return [d for d in _dedupe(pruned) if d in g and d not in back]
