"""Test helpers for the index tests."""

from __future__ import annotations

import numpy as np

from thresher.corpus.document import Document


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


class InterruptingEmbedder:
    """Deterministic vectors; raises KeyboardInterrupt at call ``stop_at`` (a Ctrl-C)."""

    name = "fake"
    dimension = 8
    batch_size = 2

    def __init__(self, stop_at: int = 0) -> None:
        self.calls, self.stop_at, self.texts = 0, stop_at, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.stop_at:
            raise KeyboardInterrupt
        self.texts += len(texts)
        rows = np.ones((len(texts), self.dimension), dtype=np.float32)
        rows[:, 0] = [len(t) for t in texts]
        out: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return out


def numbered_docs(n: int) -> list[Document]:
    """``n`` one-paragraph documents ``d00``, ``d01``, …"""
    return [
        Document(f"d{i:02d}", f"doc {i}", f"Paragraph {i} on topic {i}.", source="t")
        for i in range(n)
    ]
