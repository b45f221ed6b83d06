"""LocalPolicy: the offline default, multi-hop search with a learned scorer and no LLM.

An episode, turn by turn:

0. ``search_corpus(question)``, plus ``grep_corpus`` for the question's quoted
   names and codes. The session's rerank scores the 50 fused candidates with
   the learned scorer and shows the best ``first_k``.
1. *Hops*: bridges are read from the best retained chunks (anchors) and, first,
   from the chain's leading edge: the best chunk the last hop found that holds
   the phrase of the follow-up that found it (:func:`~.planner.frontier`).
   A bridge is another document's title an anchor mentions, a name opening a
   known title, or an entity span the question lacks, preferring names beside
   the phrase that led to the anchor (:mod:`~thresher.policies.local.bridges`).
   Each becomes a ``search_corpus`` subquery: the bridge plus what the question
   still asks, i.e. its words that no document of the anchor's chain holds
   (or, for a question stated as linked clues, the next clue's words:
   :mod:`~thresher.policies.local.clues`). Candidates are scored against
   the question, the subquery and the anchors; the best ``hop_k`` are shown.
   Beside them, the documentation cross-references the same anchors make
   (``:setting:`NAME```, ``:ref:`label```) become ``grep_corpus`` calls for where
   each is defined (``refs_per_hop``, :mod:`~thresher.policies.local.references`);
   a hit continues the chain through the anchor that made the reference. Their
   links to other pages (``:doc:``, Markdown, MyST, HTML) become ``read_document``
   calls of the pages they name, showing each page's chunks nearest the question
   (``links_per_hop``, :mod:`~thresher.policies.local.pagelinks`; the index's
   document ids by path are read once per index generation, :meth:`for_store`).
   Repeats up to ``max_hops`` unless the sufficiency signal (which sees where
   the chain's leading edge ranks) says the evidence is in hand, or the soft
   budget threshold is near.
2. *Prune*: every chunk outside the answer's best ``keep_docs`` documents
   leaves the context, and within them chunks of low utility other than each
   document's best (skipped with ``prune=False``: the no-prune multi-turn
   baseline).
3. *Final*: the documents still in view ranked by the LambdaRank order model;
   each top document's chain links (the documents whose bridges led to it) are
   placed beside it, and for a clue chain the best document per clue comes
   first. Each is justified by its sentences closest to the question and the
   follow-up that found it, and scored by the ranker's probability that it is
   evidence, fit to that order (scores never rise with rank).

The policy object holds settings and models only: :meth:`LocalPolicy.start`
gives each episode a :class:`~thresher.policies.local.session.LocalSession`
owning that episode's state, so one policy serves any number of episodes, one
after another or at once (it overrides
:meth:`~thresher.harness.policy.BasePolicy.start`). The session is split by job:
:mod:`~thresher.policies.local.planner` (the follow-ups),
:mod:`~thresher.policies.local.scoring` (the candidate scorer),
:mod:`~thresher.policies.local.stop` (the stop model) and
:mod:`~thresher.policies.local.answer` (the answer ranker). It never holds the
Store: a session overrides :meth:`~thresher.harness.policy.BasePolicy.rerank`, and
each rerank request carries the harness's scorer of chunks against the
question (used for a follow-up's best-fused candidates); grep hits come scored
against the question in their lineage.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.corpus.doclinks import DocPaths
from thresher.harness.policy import BasePolicy
from thresher.index.doc_paths import document_paths
from thresher.index.store import Store
from thresher.policies.base import DEFAULT_SYSTEM_PROMPT
from thresher.policies.local.adapted import WeightsChoice, choose_weights, index_folder
from thresher.policies.local.answer import AnswerRanker
from thresher.policies.local.constants import DEFAULT_CONTROLS
from thresher.policies.local.models import LocalWeights, load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.planner import Planner
from thresher.policies.local.pool import RETRIEVER_HEAD, rerank_pool
from thresher.policies.local.scoring import CandidateScorer, Recorder
from thresher.policies.local.session import LocalSession
from thresher.policies.local.stop import StopModel

__all__ = [
    "LocalPolicy",
    "Recorder",
    "DEFAULT_CONTROLS",
    "rerank_pool",
    "RETRIEVER_HEAD",
]


class LocalPolicy(BasePolicy):
    """Offline multi-hop search policy driven by a small learned scorer.

    A :class:`~thresher.harness.policy.BasePolicy` that overrides ``start``: each
    episode runs in the session :meth:`start` returns; the policy itself keeps nothing
    of an episode.

    ``max_hops``, ``hop_k``, ``bridges_per_hop``, ``stop_at``, ``rerank_depth``,
    ``refs_per_hop`` and ``links_per_hop`` left at None take the weights' tuned ``controls``, else
    :data:`DEFAULT_CONTROLS`.

    With no weights given, an episode over an embedded index that keeps adapted
    weights (``thresher adapt``, :mod:`~thresher.policies.local.adapted`) runs them,
    unless they are stale (:meth:`for_store`); ``info`` (recorded in each episode's
    ``episode_start.policy_info``) says which weights ran and under which fusion
    (``fusion``: :attr:`fitted_fusion` follows the weights).

    Args:
        options: how it searches, prunes and answers (:class:`LocalOptions`).
        config: the run's settings: ``episode.max_final_documents`` caps ``final_k``
            (None: no cap).
        recorder: called with features as they are computed (training data).
    """

    name = "local"
    system_prompt = DEFAULT_SYSTEM_PROMPT
    #: the fusion its weights were fit under (:attr:`LocalWeights.fusion
    #: <thresher.policies.local.models.LocalWeights.fusion>`): False (plain RRF) for
    #: weights fit on plain RRF, as the shipped ones, since the scorer's fused-rank
    #: features were learned on it; None (the index's fitted fusion weights when the
    #: config allows and they fit the index) for weights fit under them. Set per
    #: instance from its weights; docs/fusion.md measures both.
    fitted_fusion: bool | None = False

    def __init__(
        self,
        options: LocalOptions | None = None,
        *,
        config: Config | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        o = options or LocalOptions()
        weights = o.weights
        self.options = o
        self.config = config
        #: the RRF constant a linked page's chunks are ordered by (the run's, else the default)
        self.read_rrf_k = (config or Config()).retrieval.rrf_k
        self.weights = weights if isinstance(weights, LocalWeights) else load_weights(weights)
        self.fitted_fusion = None if self.weights.fusion == "fitted" else False
        self.info: dict[str, Any] | None = self._described(
            {"weights": "shipped"}
            if weights is None
            else {"weights": "file", "path": str(Path(weights).resolve())}
            if isinstance(weights, str | Path)
            else {"weights": "given"}
        )
        #: the policy run per adapted-weights choice (see :meth:`for_store`; two episodes
        #: starting at once may both build one: equal policies, the last one kept)
        self._for_index: dict[tuple[str, int, str], LocalPolicy] = {}
        tuned = {**DEFAULT_CONTROLS, **self.weights.controls}
        self.max_hops = int(tuned["max_hops"] if o.max_hops is None else o.max_hops)
        self.first_k = o.first_k
        self.hop_k = int(tuned["hop_k"] if o.hop_k is None else o.hop_k)
        self.bridges_per_hop = int(
            tuned["bridges_per_hop"] if o.bridges_per_hop is None else o.bridges_per_hop
        )
        self.keep_docs = o.keep_docs
        self.prune_below = o.prune_below
        self.prune = o.prune
        self.fill = o.fill
        self.stop_at = float(tuned["stop_at"] if o.stop_at is None else o.stop_at)
        self.grep = o.grep
        self.first_clue = o.first_clue
        self.final_k = o.final_k
        if config is not None:
            self.final_k = min(o.final_k, config.episode.max_final_documents)
        self.recorder = recorder
        self.question_scores = o.question_scores
        self.rerank_depth = int(tuned["rerank_depth"] if o.rerank_depth is None else o.rerank_depth)
        self.refs_per_hop = int(tuned["refs_per_hop"] if o.refs_per_hop is None else o.refs_per_hop)
        self.links_per_hop = int(
            tuned["links_per_hop"] if o.links_per_hop is None else o.links_per_hop
        )
        #: the document ids by path of the index its episodes run over (set on the copy
        #: :meth:`for_store` returns; None: links are not followed)
        self.paths: DocPaths | None = None
        self.frontier_k = o.frontier_k
        self.chain_order = o.chain_order

    def for_store(self, store: Store) -> LocalPolicy:
        """This policy, or, when no weights were given and ``store`` is an embedded index
        keeping adapted weights, this policy with the weights
        :func:`~thresher.policies.local.adapted.choose_weights` picks (the adapted ones,
        or the shipped ones when those are stale, its ``info`` saying so); when that one
        follows links (``links_per_hop``), a copy of it knowing ``store``'s document ids
        by path (:func:`~thresher.index.doc_paths.document_paths`, read once per index
        generation), which its sessions resolve links with."""
        chosen = self._weights_for(store)
        if chosen.links_per_hop <= 0:
            return chosen
        paths = document_paths(store)
        if paths is None or paths is chosen.paths:
            return chosen
        bound = copy.copy(chosen)  # settings and models shared; only the paths differ
        bound.paths = paths
        return bound

    def _weights_for(self, store: Store) -> LocalPolicy:
        """This policy, or the one running the weights ``store`` keeps (see :meth:`for_store`)."""
        if self.options.weights is not None:
            return self
        folder = index_folder(store)
        if folder is None:
            return self
        choice = choose_weights(folder, lambda: str(store.stats().extra.get("generation", "")))
        if choice.path is None and self._described(choice.info) == self.info:
            return self
        return self._with_choice(choice)

    def _described(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """``info`` (which weights run) and the fusion they run under, as recorded in
        ``episode_start.policy_info``."""
        return {**info, "fusion": self.weights.fusion}

    def _with_choice(self, choice: WeightsChoice) -> LocalPolicy:
        """The policy running ``choice`` (built once per choice and kept)."""
        key = (str(choice.path), choice.stamp, repr(sorted(choice.info.items())))
        found = self._for_index.get(key)
        if found is None:
            options = replace(self.options, weights=choice.path)
            found = LocalPolicy(options, config=self.config, recorder=self.recorder)
            found.info = found._described(choice.info)
            self._for_index[key] = found
        return found

    def start(self, question: str) -> LocalSession:
        """A session for one episode of ``question``, built from the current settings."""
        constants = self.weights.constants
        if self.fill:  # a baseline answers with its k documents: no "not found" cut
            constants = replace(constants, answer_floor=0.0)
        answer = AnswerRanker(
            keep_docs=self.keep_docs,
            prune_below=self.prune_below,
            final_k=self.final_k,
            chain_order=self.chain_order,
            constants=constants,
        )
        stop = StopModel(self.weights.stop, self.stop_at, self.recorder, constants)
        planner = Planner(
            max_hops=self.max_hops,
            first_k=self.first_k,
            hop_k=self.hop_k,
            bridges_per_hop=self.bridges_per_hop,
            grep=self.grep,
            first_clue=self.first_clue,
            frontier_k=self.frontier_k,
            refs_per_hop=self.refs_per_hop,
            links_per_hop=self.links_per_hop,
            paths=self.paths,
            answer=answer,
            stop=stop,
            constants=constants,
        )
        scorer = CandidateScorer(
            self.weights,
            hop_k=self.hop_k,
            question_scores=self.question_scores,
            rerank_depth=self.rerank_depth,
            recorder=self.recorder,
            read_rrf_k=self.read_rrf_k,
        )
        return LocalSession(
            question,
            name=self.name,
            system_prompt=self.system_prompt,
            scorer=scorer,
            planner=planner,
            answer=answer,
            prune=self.prune,
            fill=self.fill,
            constants=constants,
        )
