"""The sufficiency signal: is the evidence in hand enough to stop searching? (pure)

State features (:data:`STOP_FEATURES`) summarize the current ranking of the
retained documents: the top utilities, the gap after the second, whether the
two best documents link to each other, the hop and how many bridges remain.
A learned model turns them into P(the top k already holds every gold
document that hopping on would find); without one, a rule stops when the two best documents are both
likely and linked. :class:`StopModel` reads those features from a session's
ranking and makes the call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thresher.policies.local.candidate import Candidate
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.models import Model
from thresher.policies.local.scoring import Ranked, Recorder
from thresher.policies.local.text import contains_folded

__all__ = ["STOP_FEATURES", "STOP_TOP", "StopModel", "stop_features", "sufficiency"]

#: the top documents the state features sum over, the cap of their bridge count, and
#: (plus one) the leading edge's rank when it is missing: part of the features'
#: definition (the stop model was fit on it), not a setting
STOP_TOP = 5
#: the leading edge's document rank when there is none or it is below the top
_NO_RANK = STOP_TOP + 1

STOP_FEATURES: tuple[str, ...] = (
    "p1",  # best document utility
    "p2",  # second best
    "p3",  # third best
    "gap23",  # p2 - p3
    "mass5",  # sum of the top five utilities
    "linked12",  # the two best documents name each other's title
    "hop",  # hops done so far
    "bridges",  # follow-up queries still available (capped at 5)
    "front_p",  # utility of the chain's leading edge (the last hop's find holding its bridge)
    "front_rank",  # its document's rank (1 = best; 6: none or below the top five)
)


def stop_features(
    doc_probs: Sequence[float],
    linked12: bool,
    hop: int,
    bridges: int,
    front: tuple[float, int] = (0.0, _NO_RANK),
) -> np.ndarray:
    """One row of :data:`STOP_FEATURES` from the ranked document utilities (best first).

    ``front``: the utility and document rank of the chain's leading edge (what the
    last hop found through its bridge); ``(0.0, 6)`` when there is none. An edge
    ranked low says the chain goes on past what the best documents hold.
    """
    p = list(doc_probs) + [0.0, 0.0, 0.0]
    return np.asarray(
        [
            p[0],
            p[1],
            p[2],
            p[1] - p[2],
            float(sum(sorted(doc_probs, reverse=True)[:STOP_TOP])),
            1.0 if linked12 else 0.0,
            float(hop),
            float(min(bridges, STOP_TOP)),
            float(front[0]),
            float(min(front[1], _NO_RANK)),
        ],
        dtype=np.float64,
    )


def sufficiency(
    features: np.ndarray, model: Model | None, constants: Constants = DEFAULT_CONSTANTS
) -> float:
    """P(enough evidence) for one row of :data:`STOP_FEATURES`.

    With no model: 1.0 when the two best documents are both above the constant
    ``rule_stop_p`` and linked, else 0.0 (a conservative rule).
    """
    if model is not None:
        return float(model.predict(features.reshape(1, -1))[0])
    p1, p2, linked = features[0], features[1], features[STOP_FEATURES.index("linked12")]
    floor = constants.rule_stop_p
    return 1.0 if p1 > floor and p2 > floor and linked > 0 else 0.0


class StopModel:
    """Whether a session stops hopping: the sufficiency signal over its ranking.

    Args:
        model: the learned sufficiency model (None: the conservative rule).
        stop_at: sufficiency at or above which the session stops (1.0 or more: never early).
        recorder: called with each state's features (kind ``stop``; training data).
        constants: the policy's constants (the rule's floor without a model).
    """

    def __init__(
        self,
        model: Model | None,
        stop_at: float,
        recorder: Recorder | None = None,
        constants: Constants = DEFAULT_CONSTANTS,
    ):
        self.model = model
        self.stop_at = stop_at
        self.recorder = recorder
        self.constants = constants

    @property
    def active(self) -> bool:
        """Whether states are read at all (the signal may stop, or a recorder wants them)."""
        return self.stop_at < 1.0 or self.recorder is not None

    def state(self, memory: EpisodeMemory, ranked: list[Ranked], bridges: int) -> np.ndarray:
        """The :data:`STOP_FEATURES` of the session's ranking with ``bridges`` follow-ups
        planned (recorded when there is a recorder)."""
        docs = _doc_probs(ranked)
        feats = stop_features(
            [p for _, p in docs],
            _linked12(ranked),
            memory.hop,
            bridges,
            _front(memory, ranked, docs),
        )
        if self.recorder is not None:
            firsts: dict[str, Candidate] = {}
            for r in ranked:
                firsts.setdefault(r.cand.chunk.doc_id, r.cand)
            tops = list(firsts.values())
            self.recorder("stop", memory.question.question, tops, feats.reshape(1, -1), np.zeros(0))
        return feats

    def sufficient(self, features: np.ndarray) -> bool:
        """Whether the evidence in hand is enough (never, when ``stop_at`` >= 1)."""
        return (
            self.stop_at < 1.0 and sufficiency(features, self.model, self.constants) >= self.stop_at
        )


def _doc_probs(ranked: Sequence[Ranked]) -> list[tuple[str, float]]:
    """Documents by their best chunk's utility, best first."""
    out: dict[str, float] = {}
    for r in ranked:
        out.setdefault(r.cand.chunk.doc_id, r.prob)
    return list(out.items())


def _linked12(ranked: Sequence[Ranked]) -> bool:
    """Whether the two best documents name each other's title."""
    firsts: list[Ranked] = []
    for r in ranked:
        if all(f.cand.chunk.doc_id != r.cand.chunk.doc_id for f in firsts):
            firsts.append(r)
        if len(firsts) == 2:
            break
    if len(firsts) < 2:
        return False
    a, b = firsts[0].cand, firsts[1].cand
    return contains_folded(a.folded, b.chunk.title) or contains_folded(b.folded, a.chunk.title)


def _front(
    memory: EpisodeMemory, ranked: list[Ranked], docs: list[tuple[str, float]]
) -> tuple[float, int]:
    """Utility and document rank of the best chunk the last hop found through its bridge."""
    if memory.hop == 0:
        return 0.0, _NO_RANK
    chain = memory.chain()
    for r in ranked:
        if r.cand.hop == memory.hop and chain.continues(r.cand):
            rank = next(i for i, (d, _) in enumerate(docs, 1) if d == r.cand.chunk.doc_id)
            return r.prob, rank
    return 0.0, _NO_RANK
