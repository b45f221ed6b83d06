"""The sufficiency signal: is the evidence in hand enough to stop searching? (pure)

State features (:data:`STOP_FEATURES`) summarize the current ranking of the
retained documents: the top utilities, the gap after the second, whether the
two best documents link to each other, the hop and how many bridges remain.
A learned model turns them into P(the top k already holds every gold
document that hopping on would find); without one, a rule stops when the two best documents are both
likely and linked.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thresher.policies.local.scorer import Model

__all__ = ["STOP_FEATURES", "stop_features", "sufficiency"]

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
    front: tuple[float, int] = (0.0, 6),
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
            float(sum(sorted(doc_probs, reverse=True)[:5])),
            1.0 if linked12 else 0.0,
            float(hop),
            float(min(bridges, 5)),
            float(front[0]),
            float(min(front[1], 6)),
        ],
        dtype=np.float64,
    )


def sufficiency(features: np.ndarray, model: Model | None) -> float:
    """P(enough evidence) for one row of :data:`STOP_FEATURES`.

    With no model: 1.0 when the two best documents are both above 0.5 and
    linked, else 0.0 (a conservative rule).
    """
    if model is not None:
        return float(model.predict(features.reshape(1, -1))[0])
    p1, p2, linked = features[0], features[1], features[5]
    return 1.0 if p1 > 0.5 and p2 > 0.5 and linked > 0 else 0.0
