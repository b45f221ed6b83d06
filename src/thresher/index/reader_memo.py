"""What readers derive from an index generation's chunks, kept while it is live.

A reader of search results (the local policy) derives the same things from the
same chunks on every episode: their content words, lowercased text, sentences
and the names in them. A :class:`ReaderMemo` keeps those for as long as the
generation that holds the chunks is live; the store hands it out
(:class:`~thresher.index.store.KeepsReaderMemo`) and a new generation starts
an empty one. Keys are the derivation's name and the text it reads (so a value
is never stale, whatever the generation); values must never be changed by a
reader, since episodes on several threads share them.

No lock: a dict's ``get`` and item assignment are atomic, two readers that miss
at once both compute the same value, and when the memo is full it starts again
empty (:data:`MAX_ENTRIES`), so it never grows without bound.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

__all__ = ["ReaderMemo", "MAX_ENTRIES"]

#: the most values a memo keeps before it starts again empty (its size: see
#: docs/local-policy.md, "The memo")
MAX_ENTRIES = 50_000


class ReaderMemo:
    """A bounded map of derivations of one generation's chunk text (see the module)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._items: dict[Hashable, object] = {}
        #: the value kept for a key, or None (the dict's own ``get``: a reader calls it
        #: for every chunk it reads, and the dict is only ever cleared, never replaced)
        self.get: Callable[[Hashable], object | None] = self._items.get

    def put(self, key: Hashable, value: object) -> None:
        """Keep ``value`` for ``key`` (a full memo is emptied first)."""
        items = self._items
        if len(items) >= self.max_entries:
            items.clear()
        items[key] = value

    def clear(self) -> None:
        """Forget every value (a bench measuring episodes that find nothing kept)."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
