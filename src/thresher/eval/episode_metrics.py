"""Per-episode metrics from a trace and its task (document level).

Everything is computed from the trace alone (replayed with
:func:`thresher.harness.state.replay`), so a trace file read back months later
scores exactly like the live run. Chunk ids (``doc#N``) are mapped to their
documents; the formulas are those of :mod:`thresher.eval.metrics`.

Answer quality (EM and F1 after SQuAD normalization) is reported apart, and only
when a prediction from an answering model is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from thresher.corpus.ids import doc_of
from thresher.eval import metrics as m
from thresher.harness.state import EpisodeState, replay
from thresher.harness.trace import EpisodeEnd, FinalEvent, ToolResult, TraceEvent
from thresher.tasks import answers
from thresher.tasks.task import Task

__all__ = [
    "EpisodeMetrics",
    "episode_metrics",
    "final_ranking",
    "first_miss_hop",
    "DEFAULT_KS",
]

DEFAULT_KS = (1, 2, 5, 10)


@dataclass(slots=True)
class EpisodeMetrics:
    """Retrieval metrics of one episode on one task (answer quality apart).

    Ranked metrics use the final ranking; ``None`` marks a metric undefined for the
    episode (no prune, no bridge document, no hop order, no prediction).
    ``prompt_tokens`` and ``completion_tokens`` are the endpoint-reported totals of
    an LLM policy (0 for a policy that calls no model), ``models`` the models it
    asked (see :mod:`thresher.eval.cost`).
    """

    task_id: str
    exit_reason: str
    ranked_doc_ids: list[str]
    answer_found: bool | None
    output_recall: float
    output_precision: float
    output_f1: float
    recall_at: dict[int, float]
    all_gold_at: dict[int, float]
    ndcg_at_10: float
    trajectory_recall: float
    bridge_preservation: float | None
    context_tokens: int
    peak_tokens: int
    turns: int
    tool_calls: dict[str, int]
    prune_accuracy: float | None
    pruned_chunks: int
    premature_prunes: list[str]
    first_miss_hop: int | None
    wall_s: float
    seen_doc_ids: list[str] = field(default_factory=list)
    answer_doc_ids: list[str] = field(default_factory=list)
    answer_em: float | None = None
    answer_f1: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    models: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (integer cut-offs become string keys)."""
        out = asdict(self)
        out["recall_at"] = {str(k): v for k, v in self.recall_at.items()}
        out["all_gold_at"] = {str(k): v for k, v in self.all_gold_at.items()}
        return out


def final_ranking(events: Sequence[TraceEvent]) -> list[dict[str, Any]]:
    """The documents the episode returned (``episode_end``; else the ``final`` event)."""
    for event in reversed(events):
        if isinstance(event, EpisodeEnd):
            return list(event.documents)
    for event in reversed(events):
        if isinstance(event, FinalEvent):
            return list(event.documents)
    return []


def _doc_text(state: EpisodeState, doc: dict[str, Any]) -> str:
    ids = list(doc.get("chunk_ids") or [])
    if not ids:
        ids = [c for c in state.cache.ids() if doc_of(c) == doc.get("doc_id")]
    return "\n".join(c.text for c in (state.cache.get(i) for i in ids) if c is not None)


def _answers(task: Task) -> tuple[str, list[str]]:
    return task.answer, task.answer_aliases


def first_miss_hop(hops: Sequence[Sequence[str]], seen_docs: Iterable[str]) -> int | None:
    """The 0-based index of the first hop with a gold document never retrieved, or None."""
    seen = set(seen_docs)
    for i, hop in enumerate(hops):
        if any(d not in seen for d in hop):
            return i
    return None


def _pruned_docs(events: Sequence[TraceEvent]) -> list[str]:
    return [
        doc_of(c)
        for e in events
        if isinstance(e, ToolResult) and e.tool == "prune_chunks"
        for c in e.pruned
    ]


def episode_metrics(
    events: Sequence[TraceEvent],
    task: Task,
    *,
    ranking: Sequence[str] | None = None,
    prediction: str | None = None,
    ks: Sequence[int] = DEFAULT_KS,
) -> EpisodeMetrics:
    """Score one episode's trace against its task.

    Args:
        events: the episode's trace (``Result.trace`` or ``read_jsonl(file)``).
        task: the task (gold documents, hops, answer).
        ranking: a ranking to score instead of the episode's own (rollout fusion).
        prediction: an answering model's answer, for EM/F1 (else both are None).
        ks: cut-offs of recall@k and all-gold@k.

    Returns:
        An :class:`EpisodeMetrics`.

    Raises:
        InputError: the trace does not start with ``episode_start``, or the task
            has no gold document.
    """
    events = list(events)
    state = replay(events)
    docs = final_ranking(events)
    ranked = list(ranking) if ranking is not None else [d["doc_id"] for d in docs]
    gold = task.gold_doc_ids
    seen = list(dict.fromkeys(c.doc_id for c in state.cache.chunks()))
    context_docs = list(dict.fromkeys(doc_of(c) for c in state.context.ids()))
    holders = [
        d["doc_id"]
        for d in docs
        if task.answer
        and answers.answer_found(_doc_text(state, d), task.answer, task.answer_aliases)
    ]
    pruned = _pruned_docs(events)
    end = next((e for e in reversed(events) if isinstance(e, EpisodeEnd)), None)
    usage = end.usage if end else {}
    return EpisodeMetrics(
        task_id=task.task_id,
        exit_reason=end.exit_reason if end else "incomplete",
        ranked_doc_ids=ranked,
        answer_found=bool(set(holders) & set(ranked)) if task.answer else None,
        output_recall=m.output_recall(ranked, gold),
        output_precision=m.output_precision(ranked, gold),
        output_f1=m.output_f1(ranked, gold),
        recall_at={k: m.recall_at_k(ranked, gold, k) for k in ks},
        all_gold_at={k: m.all_gold_at_k(ranked, gold, k) for k in ks},
        ndcg_at_10=m.ndcg_at_k(ranked, gold, 10),
        trajectory_recall=m.trajectory_recall(seen, gold),
        bridge_preservation=m.bridge_preservation(context_docs, task.bridge_doc_ids),
        context_tokens=int(usage.get("used", state.used)),
        peak_tokens=int(usage.get("peak", state.peak)),
        turns=end.turns if end else len(state.turns),
        tool_calls=dict(end.tool_calls) if end else dict(state.tool_calls),
        prune_accuracy=m.prune_accuracy(pruned, gold),
        pruned_chunks=len(pruned),
        premature_prunes=m.premature_prunes(pruned, gold, context_docs),
        first_miss_hop=first_miss_hop(task.hops, seen),
        wall_s=float(end.wall_s) if end else 0.0,
        seen_doc_ids=seen,
        answer_doc_ids=holders,
        answer_em=None
        if prediction is None or not task.answer
        else answers.exact_match(prediction, *_answers(task)),
        answer_f1=None
        if prediction is None or not task.answer
        else answers.f1(prediction, *_answers(task)),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        models=list(end.models) if end else [],
    )
