"""Verify: the checks a candidate task must pass, each rejection named by its reason.

Pure checks (no I/O) over the chain, its phrasing and the chunk texts:

- ``quote_mismatch``: fewer than :data:`MIN_QUOTE_SHARE` (two thirds) of the
  quotes match an evidence chunk after normalization (:func:`quote_share`);
- ``answer_not_in_final``: the answer is not in the final-answer chunk;
- ``answer_in_first_hop``: the first hop's chunk already holds the answer;
- ``answer_in_question`` / ``bridge_in_question``: the question gives away
  the answer or a bridge entity;
- ``anchor_missing`` (offline): the question does not name its anchor.

One check against the whole corpus (:func:`ambiguous_hop`):

- ``ambiguous``: some hop's fact, with its outgoing entity left open, also
  fits another sentence of the corpus that names the same incoming entity
  (a river through several towns, an inventor of several patents), so the
  chain does not single out one answer.

One measured check against the store (:func:`single_shot_found`):

- ``single_shot_solvable``: a single hybrid search for the question returns
  every evidence chunk in its top ``k`` (default 5), so the task needs no hops.

And, in LLM mode, ``llm_answer_mismatch``: the model, given only the evidence
chunks, does not reach the answer (:func:`answers_agree`).
"""

from __future__ import annotations

from collections.abc import Sequence

from thresher.index.store import Store
from thresher.tasks.generate.explore import CorpusView, is_ambiguous
from thresher.tasks.generate.extend import Chain
from thresher.tasks.generate.phrase import Phrasing
from thresher.tasks.generate.text import contains, normalize

__all__ = [
    "MIN_QUOTE_SHARE",
    "REASONS",
    "TEXT_CHECKS",
    "quote_share",
    "text_checks",
    "ambiguous_hop",
    "single_shot_found",
    "answers_agree",
]

MIN_QUOTE_SHARE = 2 / 3
#: the reasons :func:`text_checks` gives, in the order it checks them
TEXT_CHECKS = (
    "quote_mismatch",
    "answer_not_in_final",
    "answer_in_first_hop",
    "answer_in_question",
    "bridge_in_question",
    "anchor_missing",
)
#: every rejection reason, in pipeline order (the report lists them all, zeros included)
REASONS = (
    "no_chain",
    "llm_unparsable",
    *TEXT_CHECKS,
    "duplicate",
    "ambiguous",
    "single_shot_solvable",
    "llm_answer_mismatch",
    "too_few_distractors",
)


def quote_share(quotes: Sequence[str], texts: Sequence[str]) -> float:
    """Share of ``quotes`` found (normalized, on word bounds) in at least one of ``texts``.

    An empty quote list scores 0.
    """
    if not quotes:
        return 0.0
    normed = [normalize(t) for t in texts]
    matched = sum(1 for q in quotes if q.strip() and any(contains(t, q) for t in normed))
    return matched / len(quotes)


def text_checks(
    chain: Chain, phrasing: Phrasing, texts: dict[str, str], *, require_anchor: bool = True
) -> tuple[str | None, float]:
    """The first failing text check's reason (None when all pass) and the quote share.

    Args:
        chain: the candidate's evidence.
        phrasing: its question and quotes.
        texts: chunk id -> chunk text, for every evidence chunk.
        require_anchor: the question must name the chain's anchor.
    """
    evidence = [texts[h.chunk_id] for h in chain.hops]
    share = quote_share(phrasing.quotes, evidence)
    if share < MIN_QUOTE_SHARE:
        return "quote_mismatch", share
    if not contains(normalize(evidence[-1]), chain.answer):
        return "answer_not_in_final", share
    if contains(normalize(evidence[0]), chain.answer):
        return "answer_in_first_hop", share
    question = normalize(phrasing.question)
    if contains(question, chain.answer):
        return "answer_in_question", share
    if any(contains(question, b) for b in chain.bridges):
        return "bridge_in_question", share
    if require_anchor and not contains(question, chain.anchor):
        return "anchor_missing", share
    return None, share


def ambiguous_hop(view: CorpusView, chain: Chain) -> int | None:
    """The first hop (0-based) whose fact also fits another sentence with another outcome.

    For hop ``i`` the incoming entity is the anchor (first hop) or the previous
    bridge (see :func:`thresher.tasks.generate.explore.is_ambiguous`). Returns None
    when no hop is ambiguous.
    """
    for i, hop in enumerate(chain.hops):
        if is_ambiguous(view, chain.anchor if i == 0 else hop.link, hop):
            return i
    return None


def single_shot_found(
    store: Store, question: str, evidence_ids: Sequence[str], k: int = 5
) -> tuple[int, list[str]]:
    """How many evidence chunks one hybrid search for ``question`` returns in its top ``k``.

    Returns:
        ``(found, top_k_chunk_ids)``; the task is single-shot solvable when
        ``found == len(evidence_ids)``.
    """
    hits = store.hybrid_search(question, k=k)
    top = [h.chunk.chunk_id for h in hits]
    wanted = set(evidence_ids)
    return sum(1 for c in top if c in wanted), top


def answers_agree(predicted: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Whether a model's answer names the task's answer (normalized containment either way)."""
    p = normalize(predicted)
    if not p or p == "unanswerable":
        return False
    for a in (answer, *aliases):
        n = normalize(a)
        if n and (contains(p, a) or (len(p) >= 3 and f" {p} " in f" {n} ")):
            return True
    return False
