"""One task through one configuration, as a batch job (see :mod:`thresher.batch`).

:class:`TaskJob` holds everything a worker needs (a ``StoreSource``, the
configuration, the seed) and pickles, so the same job runs on a local thread or
a Ray worker. It returns the task's outcome with its traces; the caller writes
the traces on its own machine (a Ray worker may have another filesystem).
:func:`failed_outcome` is the outcome recorded for a task whose job failed twice:
scored as an episode that returned nothing, with ``exit_reason`` ``failed`` and
the error, so it counts in every figure instead of vanishing.

Both sides of a paired run are timed alike: every episode starts with the
store's per-query caches cleared
(:class:`~thresher.index.store.KeepsQueryCaches`: query vectors, filter memos,
the readers' memo), so it is timed as a fresh query is, whatever ran before it;
and the first job of a store and of a configuration in a process first loads
what a first episode would (:func:`warm_up`: a search, and an unscored episode
of an in-process policy), so loading models is nobody's episode time. Results
do not depend on either. Why and what it changed: ``docs/eval.md``, "Cost per
resolved question".
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from thresher.batch.stores import StoreSource, resolve_store
from thresher.eval import metrics as m
from thresher.eval.attribution import CAUSES, Attribution, Evidence, attribute
from thresher.eval.episode_metrics import DEFAULT_KS, EpisodeMetrics, first_miss_hop
from thresher.eval.records import Answerer, RunConfig, TaskOutcome, safe_name
from thresher.eval.rollouts import fused_metrics
from thresher.index.store import KeepsQueryCaches, Store
from thresher.tasks.task import Task

__all__ = ["TaskJob", "TaskRun", "failed_outcome", "trace_path", "run_episode_of", "warm_up"]

#: the stores and configurations this process has warmed up (see :func:`warm_up`)
_warm_stores: weakref.WeakSet[Any] = weakref.WeakSet()
_warm_runs: set[tuple[str, str]] = set()
_warm_lock = threading.Lock()


def _first(key: Any, seen: Any) -> bool:
    """Whether ``key`` is new to ``seen`` (then added), under the lock."""
    with _warm_lock:
        if key in seen:
            return False
        seen.add(key)
        return True


def warm_up(task: Task, store: Store, run: RunConfig) -> None:
    """Load, outside any timed episode, what a process's first episode would load.

    Once per store in this process, search it for ``task``'s question (the embedding
    model, the index files); once per configuration whose policy runs in process
    (``in_process``, itself or its session: the local policy's models and their
    libraries), run one episode of ``task`` and drop
    it. A policy that calls a model is not warmed that way (it would cost a model
    call). The caches either fills are cleared after.
    """
    from thresher.harness.policy import runs_in_process, session_for
    from thresher.policies import build_policy

    if _first(store, _warm_stores):
        store.hybrid_search(task.question, 1)
    if _first((run.label, run.policy), _warm_runs):
        policy = build_policy(run.policy, run.config, run.policy_options)
        session = session_for(policy, task.question)
        if runs_in_process(policy if session is None else session):
            run_episode_of(task, store, run, None)
    if isinstance(store, KeepsQueryCaches):
        store.clear_query_caches()


def trace_path(side: str, task_id: str, rollout: int, rollouts: int) -> str:
    """``traces/<side>/<safe task id>[.r<k>].jsonl``, relative to the output folder."""
    suffix = f".r{rollout}" if rollouts > 1 else ""
    return f"traces/{side}/{safe_name(task_id)}{suffix}.jsonl"


def run_episode_of(task: Task, store: Store, run: RunConfig, seed: int | None) -> Any:
    """One episode of ``run``'s policy on ``task``, built and run as every other caller does
    (the store's query caches cleared first: see the module docstring)."""
    from thresher.harness.episode import run_episode
    from thresher.policies import build_policy

    policy = build_policy(run.policy, run.config, run.policy_options, seed=seed)
    if isinstance(store, KeepsQueryCaches):  # timed cold, whatever ran before
        store.clear_query_caches()
    return run_episode(task.question, store, policy, run.config)


@dataclass(slots=True)
class TaskRun:
    """A finished job: the outcome, and each rollout's ``(relative path, trace events)``."""

    outcome: TaskOutcome
    traces: list[tuple[str, list[Any]]] = field(default_factory=list)


def _fused_attribution(
    traces: list[Any], task: Task, fused: EpisodeMetrics, prediction: str | None
) -> Attribution:
    each = [attribute(t, task, prediction=prediction) for t in traces]
    if len(each) == 1:
        return each[0]
    if fused.output_recall >= 1.0 and fused.answer_em in (None, 1.0):
        return Attribution(False)
    failed = [a for a in each if a.failed and a.cause]
    if not failed:
        return Attribution(True, "context_overload", None, {}, [])
    counts = Counter(a.cause for a in failed)
    top = max(counts, key=lambda c: (counts[c], -CAUSES.index(c)))
    return next(a for a in failed if a.cause == top)


@dataclass(frozen=True, slots=True)
class TaskJob:
    """Run one task's ``rollouts`` episodes of ``run``'s policy and score them.

    Called with ``(task, corpus)``: ``corpus`` (doc ids) restricts the task to its
    own documents, None searches the whole index.

    Attributes:
        store: the index (a ``StoreRef`` for workers in other processes).
        run: the configuration (:class:`~thresher.eval.records.RunConfig`).
        side: the trace sub-folder.
        rollouts: episodes per task, fused by RRF when more than one.
        seed: base seed; rollout ``r`` gets ``seed + r`` when there are several.
        keep_traces: return the traces (with their relative paths) for writing.
        answerer: an answering model (must pickle to run on Ray).
    """

    store: StoreSource
    run: RunConfig
    side: str = "a"
    rollouts: int = 1
    seed: int = 0
    keep_traces: bool = False
    answerer: Answerer | None = None

    def __call__(self, item: tuple[Task, frozenset[str] | None]) -> TaskRun:
        task, corpus = item
        store = resolve_store(self.store)
        warm_up(task, store, self.run)
        retrieval = self.run.config.retrieval
        if corpus is not None:
            from thresher.index.filtered import FilteredStore
            from thresher.index.filters import DocFilter

            store = FilteredStore(store, DocFilter.only(corpus))
        traces: list[list[Any]] = []
        documents: dict[str, Any] = {}
        for r in range(self.rollouts):
            seed = self.seed + r if self.rollouts > 1 else None
            result = run_episode_of(task, store, self.run, seed)
            traces.append(list(result.trace))
            for d in result.documents:
                documents.setdefault(d.doc_id, d)
        fused, each = fused_metrics(traces, task, rrf_k=retrieval.rrf_k)
        prediction = None
        if self.answerer is not None:
            ranked = [documents[d] for d in fused.ranked_doc_ids if d in documents]
            prediction = self.answerer(task, ranked)
            fused, each = fused_metrics(traces, task, rrf_k=retrieval.rrf_k, prediction=prediction)
        attribution = _fused_attribution(traces, task, fused, prediction)
        paths = [trace_path(self.side, task.task_id, r, self.rollouts) for r in range(len(traces))]
        outcome = TaskOutcome(task, fused, attribution, each, [], prediction)
        if self.keep_traces:
            outcome.trace_paths = paths
            return TaskRun(outcome, list(zip(paths, traces, strict=True)))
        return TaskRun(outcome)


def failed_outcome(task: Task, error: str) -> TaskOutcome:
    """The outcome of a task whose job failed twice: nothing returned, the error kept.

    Scored like an episode that returned no document (recall 0, no tokens) with
    ``exit_reason`` ``failed``; its attribution is failed with no cause (it is
    counted apart from the causes) and holds the error as evidence.
    """
    gold = task.gold_doc_ids
    metrics = EpisodeMetrics(
        task_id=task.task_id,
        exit_reason="failed",
        ranked_doc_ids=[],
        answer_found=False if task.answer else None,
        output_recall=m.output_recall([], gold),
        output_precision=m.output_precision([], gold),
        output_f1=m.output_f1([], gold),
        recall_at={k: m.recall_at_k([], gold, k) for k in DEFAULT_KS},
        all_gold_at={k: m.all_gold_at_k([], gold, k) for k in DEFAULT_KS},
        ndcg_at_10=m.ndcg_at_k([], gold, 10),
        trajectory_recall=m.trajectory_recall([], gold),
        bridge_preservation=m.bridge_preservation([], task.bridge_doc_ids),
        context_tokens=0,
        peak_tokens=0,
        turns=0,
        tool_calls={},
        prune_accuracy=None,
        pruned_chunks=0,
        premature_prunes=[],
        first_miss_hop=first_miss_hop(task.hops, []),
        wall_s=0.0,
    )
    attribution = Attribution(True, None, None, {}, [Evidence(0, 0, "failed", error)])
    return TaskOutcome(task, metrics, attribution, [], [], None, error)
