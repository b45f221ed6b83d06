"""The protocols a bridge candidate source declares (pure: no store, no state)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from typing import Protocol, runtime_checkable

__all__ = ["SpanSource", "NameSource"]


@runtime_checkable
class SpanSource(Protocol):
    """Finds the phrases of one sentence that may name the next document."""

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        """Candidate phrases of ``sentence``, in text order, without repeats.

        ``cased``: whether the document the sentence comes from has capitals (a
        sentence alone cannot tell); ``None`` reads the sentence itself.
        """
        ...


@runtime_checkable
class NameSource(Protocol):
    """Names the documents an episode has seen by what other texts call them."""

    def names(
        self, titles: Mapping[str, str], words: Callable[[], Mapping[str, Set[str]]] | None = None
    ) -> dict[str, str]:
        """``name -> doc id`` for the documents of ``titles`` (``title -> doc id``, every
        document seen so far): their titles and any other name they go by. ``words``:
        gives the content words of each document seen (doc id -> words), the sample a
        source may measure how common a word is in (called only when needed)."""
        ...
