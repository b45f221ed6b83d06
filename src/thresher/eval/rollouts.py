"""Multi-rollout fusion: K episodes of one task, their final rankings fused by RRF.

The Context-1 report's "4x" setting runs four episodes per question and fuses
their rankings. Here the fused ranking is scored like a single episode's
(:func:`thresher.eval.episode_metrics.episode_metrics` with ``ranking=``), using
the first rollout's trace for the trajectory-level fields, then those fields are
replaced by their aggregate over the rollouts: trajectory recall over the union
of documents seen, tokens (context, prompt and completion) and tool calls summed
(the cost of K episodes), turns and wall time summed, models united.
"""

from __future__ import annotations

from collections.abc import Sequence

from thresher.eval import metrics as m
from thresher.eval.episode_metrics import EpisodeMetrics, episode_metrics
from thresher.harness.trace import TraceEvent
from thresher.index.fusion import rrf
from thresher.tasks.task import Task

__all__ = ["fuse_rankings", "fused_metrics"]


def fuse_rankings(
    rankings: Sequence[Sequence[str]], k: int = 60, limit: int | None = None
) -> list[str]:
    """Doc ids ranked by RRF over ``rankings`` (``Σ 1/(k + rank)``; ties by id).

    Args:
        rankings: each rollout's final ranking, best first (repeats keep the first).
        k: the RRF constant.
        limit: keep at most this many (default: the longest input ranking's length).
    """
    lists = [list(dict.fromkeys(r)) for r in rankings]
    fused = [d for d, _ in rrf(lists, k)]
    cut = limit if limit is not None else max((len(r) for r in lists), default=0)
    return fused[:cut]


def fused_metrics(
    traces: Sequence[Sequence[TraceEvent]],
    task: Task,
    *,
    rrf_k: int = 60,
    prediction: str | None = None,
) -> tuple[EpisodeMetrics, list[EpisodeMetrics]]:
    """Metrics of the fused ranking of K rollouts, and each rollout's own.

    Raises:
        InputError: no trace, or as :func:`episode_metrics`.
    """
    if not traces:
        from thresher.errors import InputError

        raise InputError("fused_metrics needs at least one rollout trace")
    each = [episode_metrics(t, task) for t in traces]
    if len(each) == 1:
        return episode_metrics(traces[0], task, prediction=prediction), each
    ranking = fuse_rankings([e.ranked_doc_ids for e in each], rrf_k)
    fused = episode_metrics(traces[0], task, ranking=ranking, prediction=prediction)
    seen = list(dict.fromkeys(d for e in each for d in e.seen_doc_ids))
    calls: dict[str, int] = {}
    for e in each:
        for tool, n in e.tool_calls.items():
            calls[tool] = calls.get(tool, 0) + n
    fused.seen_doc_ids = seen
    fused.trajectory_recall = m.trajectory_recall(seen, task.gold_doc_ids)
    fused.context_tokens = sum(e.context_tokens for e in each)
    fused.peak_tokens = max(e.peak_tokens for e in each)
    fused.turns = sum(e.turns for e in each)
    fused.tool_calls = calls
    fused.wall_s = sum(e.wall_s for e in each)
    fused.prompt_tokens = sum(e.prompt_tokens for e in each)
    fused.completion_tokens = sum(e.completion_tokens for e in each)
    fused.models = list(dict.fromkeys(x for e in each for x in e.models))
    fused.exit_reason = each[0].exit_reason if len({e.exit_reason for e in each}) == 1 else "mixed"
    holders = {d for e in each for d in e.answer_doc_ids}
    fused.answer_doc_ids = [d for d in ranking if d in holders]
    fused.answer_found = bool(fused.answer_doc_ids) if fused.answer_found is not None else None
    return fused, each
