"""Baselines for the paired protocol, as policies of the same harness.

They share the tools, the budget and the trace with the local policy, so a
comparison isolates the strategy:

* ``bm25`` / ``dense``: single-shot with one retriever: they declare
  :class:`~thresher.harness.policy.ChoosesRetrievalMode`, and
  :func:`~thresher.harness.episode.run_episode` runs ``search_corpus`` with that
  mode whoever calls it;
* ``single-shot`` (hybrid, in :mod:`thresher.policies.single_shot`);
* ``hybrid-rerank``: one hybrid search, candidates reranked and the final
  documents ranked by the local policy's learned scorer;
* ``no-prune``: the local policy's hops, nothing pruned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thresher.config import RetrievalMode
from thresher.policies.local.policy import LocalPolicy
from thresher.policies.local.scorer import LocalWeights
from thresher.policies.single_shot import SingleShotPolicy

__all__ = [
    "Bm25SingleShotPolicy",
    "DenseSingleShotPolicy",
    "hybrid_rerank_policy",
    "no_prune_policy",
]


class Bm25SingleShotPolicy(SingleShotPolicy):
    """One BM25-only search with the question, then the documents in rank order."""

    name = "bm25"
    retrieval_mode: RetrievalMode = "bm25"


class DenseSingleShotPolicy(SingleShotPolicy):
    """One dense-only search with the question, then the documents in rank order."""

    name = "dense"
    retrieval_mode: RetrievalMode = "dense"


def hybrid_rerank_policy(
    weights: str | Path | LocalWeights | None = None, *, config: Any = None, **options: Any
) -> LocalPolicy:
    """Single-shot hybrid search reranked (and finally ranked) by the learned scorer."""
    settings: dict[str, Any] = {
        "max_hops": 0,
        "prune": False,
        "grep": False,
        "first_k": 10,
        **options,
    }
    policy = LocalPolicy(weights, config=config, **settings)
    policy.name = "hybrid-rerank"
    return policy


def no_prune_policy(
    weights: str | Path | LocalWeights | None = None, *, config: Any = None, **options: Any
) -> LocalPolicy:
    """The local policy's multi-turn search with pruning turned off."""
    policy = LocalPolicy(weights, config=config, **{**options, "prune": False})
    policy.name = "no-prune"
    return policy
