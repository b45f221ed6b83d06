"""Baselines for the paired protocol, as policies of the same harness.

They share the tools, the budget and the trace with the local policy, so a
comparison isolates the strategy:

* ``bm25`` / ``dense``: single-shot with one retriever: they declare
  ``retrieval_mode`` (:class:`~thresher.harness.policy.BasePolicy`), and
  :func:`~thresher.harness.episode.run_episode` runs ``search_corpus`` with that
  mode whoever calls it;
* ``single-shot`` (hybrid, in :mod:`thresher.policies.single_shot`);
* ``hybrid-rerank``: one hybrid search, candidates reranked and the final
  documents ranked by the local policy's learned scorer;
* ``no-prune``: the local policy's hops, nothing pruned.

Asked for ``k`` documents, each searches the question again until ``k``
documents are in view (:mod:`thresher.policies.fill`): ``k`` counts documents,
and a search's chunks may belong to fewer.
"""

from __future__ import annotations

from dataclasses import replace

from thresher.config import Config, RetrievalMode
from thresher.policies.factory import Factory
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.policies.single_shot import SingleShotOptions, SingleShotPolicy

__all__ = [
    "Bm25SingleShotPolicy",
    "DenseSingleShotPolicy",
    "hybrid_rerank_policy",
    "no_prune_policy",
    "HYBRID_RERANK",
    "bm25",
    "dense",
    "hybrid_rerank",
    "no_prune",
]

#: the hybrid-rerank baseline's options: one hybrid search, reranked (repeated until ``k``
#: documents are in view); no hop, prune or grep
HYBRID_RERANK = LocalOptions(max_hops=0, prune=False, grep=False, first_k=10, fill=True)


class Bm25SingleShotPolicy(SingleShotPolicy):
    """One BM25-only search with the question, then the documents in rank order."""

    name = "bm25"
    retrieval_mode: RetrievalMode = "bm25"


class DenseSingleShotPolicy(SingleShotPolicy):
    """One dense-only search with the question, then the documents in rank order."""

    name = "dense"
    retrieval_mode: RetrievalMode = "dense"


def hybrid_rerank_policy(
    options: LocalOptions | None = None, *, config: Config | None = None
) -> LocalPolicy:
    """Single-shot hybrid search reranked (and finally ranked) by the learned scorer.

    ``options``: the local policy's (default :data:`HYBRID_RERANK`).
    """
    policy = LocalPolicy(HYBRID_RERANK if options is None else options, config=config)
    policy.name = "hybrid-rerank"
    return policy


def no_prune_policy(
    options: LocalOptions | None = None, *, config: Config | None = None
) -> LocalPolicy:
    """The local policy's multi-turn search with pruning turned off and the answer filled to
    ``final_k`` documents (whatever ``options`` say)."""
    policy = LocalPolicy(replace(options or LocalOptions(), prune=False, fill=True), config=config)
    policy.name = "no-prune"
    return policy


def _bm25(config: Config, seed: int | None, options: SingleShotOptions) -> Bm25SingleShotPolicy:
    return Bm25SingleShotPolicy(options.top_k)


def _dense(config: Config, seed: int | None, options: SingleShotOptions) -> DenseSingleShotPolicy:
    return DenseSingleShotPolicy(options.top_k)


def _hybrid_rerank(config: Config, seed: int | None, options: LocalOptions) -> LocalPolicy:
    return hybrid_rerank_policy(options, config=config)


def _no_prune(config: Config, seed: int | None, options: LocalOptions) -> LocalPolicy:
    return no_prune_policy(options, config=config)


#: the factories the names ``bm25``, ``dense``, ``hybrid-rerank`` and ``no-prune`` stand for
bm25 = Factory(_bm25, SingleShotOptions())
dense = Factory(_dense, SingleShotOptions())
hybrid_rerank = Factory(_hybrid_rerank, HYBRID_RERANK)
no_prune = Factory(_no_prune, replace(LocalOptions(), prune=False, fill=True))
