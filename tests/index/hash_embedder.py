"""A deterministic 8-d embedder from a text's hash (no model): for tests that need many
chunks fast. Importable by child processes from this folder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class HashEmbedder:
    """Deterministic unit vectors of dimension 8, one per text."""

    name = "hash-8"
    dimension = 8
    batch_size = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint32) for t in texts]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), 8) + 1.0
        normed: np.ndarray = out / np.linalg.norm(out, axis=1, keepdims=True)
        return normed
