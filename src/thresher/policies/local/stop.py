"""The sufficiency signal: is the evidence in hand enough to stop searching? (pure)

State features (:data:`STOP_FEATURES`) summarize the current ranking of the
retained documents: the top utilities, the gap after the second, whether the
two best documents link to each other, the hop and how many bridges remain.
A learned model turns them into P(every gold document is already in the
top k); without one, a rule stops when the two best documents are both
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
)


def stop_features(doc_probs: Sequence[float], linked12: bool, hop: int, bridges: int) -> np.ndarray:
    """One row of :data:`STOP_FEATURES` from the ranked document utilities (best first)."""
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
