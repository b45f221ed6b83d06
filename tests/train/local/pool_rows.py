"""Synthetic training rows for the trainer's tests: one pool group whose first base
feature separates its gold rows."""

from __future__ import annotations

import numpy as np

from thresher.policies.local.features import BASE_FEATURES
from thresher.train.local.trainer import FULL_FEATURES, TrainingData


def pool_rows(group: str, n: int, positive: int, shift: float = 0.0) -> TrainingData:
    """``n`` pool rows of ``group``, the first ``positive`` gold; ``shift`` moves the
    separating feature (a shifted distribution). Seeded by the group's name and size."""
    rng = np.random.default_rng(len(group) + n)
    y = np.zeros(n)
    y[:positive] = 1.0
    bx = rng.normal(size=(n, len(BASE_FEATURES)))
    bx[:, 0] += y * 2.0 + shift
    fx = np.hstack([bx, rng.normal(size=(n, len(FULL_FEATURES) - len(BASE_FEATURES)))])
    data = TrainingData()
    data.base.append(bx)
    data.full.append(fx)
    data.labels.append(y)
    data.groups.extend([group] * n)
    data.kinds.append("pool")
    return data
