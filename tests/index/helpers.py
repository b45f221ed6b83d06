"""Test helpers for the index tests."""

from __future__ import annotations

import numpy as np


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed(self, texts) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)
