"""A corpus whose best chunks belong to few documents: two long documents about
lighthouse lenses (many chunks each) and shorter ones that mention them once.

A search for lighthouse lenses shows ten chunks of two or three documents, so a
policy asked for ``k`` documents must look further than one search's chunks.
"""

from __future__ import annotations

from pathlib import Path

from thresher.config import Config
from thresher.corpus.document import Document

QUESTION = "Which lighthouse lens makers ground pressed-glass lighthouse lenses?"

_LONG = (
    "The {name} works ground pressed-glass lighthouse lenses, paragraph {i}: every "
    "lighthouse lens was polished by hand and each pressed-glass lighthouse lens was "
    "tested at night against the lighthouse lamp."
)


def k_corpus() -> list[Document]:
    """Two long lens documents (eight paragraphs each), six short ones, six distractors."""
    docs = [
        Document(
            f"long-{name}",
            f"{name} lens works",
            "\n\n".join(_LONG.format(name=name.title(), i=i) for i in range(8)),
            "test",
        )
        for name in ("orrin", "vennor")
    ]
    docs += [
        Document(
            f"short-{i}",
            f"Harbour note {i}",
            f"Harbour note {i}: the pier at berth {i} has a small lighthouse lens on its mast.",
            "test",
        )
        for i in range(6)
    ]
    docs += [
        Document(
            f"other-{i}", f"Market {i}", f"The market of town {i} sells wool and salt.", "test"
        )
        for i in range(6)
    ]
    return docs


def k_config() -> Config:
    """Small chunks: each paragraph of a long document is a chunk of its own."""
    return Config().override({"chunking.max_tokens": 48})


def build_k_index(path: Path) -> Path:
    """Ingest :func:`k_corpus` into ``path`` (a real index folder)."""
    from thresher.index.backends import ingest

    ingest(k_corpus(), path, k_config(), progress=False)
    return path
