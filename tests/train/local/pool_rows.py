"""Synthetic training rows for the trainer's tests: one pool group whose first base
feature separates its gold rows, and ranking groups for the order model's fits."""

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


def ranking_groups(
    n_groups: int, size: int, seed: int = 0, noise: float = 0.1
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``n_groups`` random candidate groups of ``size`` full-feature rows, one gold row each:
    the row whose column 2 plus ``noise`` is highest. Returns (rows, labels, group sizes)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_groups * size, len(FULL_FEATURES)))
    y = np.zeros(len(x))
    for g in range(n_groups):
        rows = slice(g * size, (g + 1) * size)
        key = x[rows, 2] + noise * rng.normal(size=size)
        y[g * size + int(np.argmax(key))] = 1.0
    return x, y, [size] * n_groups
