"""An index's document ids by path, for resolving links: built once per live generation.

:func:`document_paths` gives the :class:`~thresher.corpus.doclinks.DocPaths` of a
store's documents, kept in the live generation's reader memo
(:class:`~thresher.index.store.KeepsReaderMemo`): the first reader of a
generation lists its document ids (:meth:`~thresher.index.store.ManagesDocuments.doc_ids`,
read from the side index, no chunk read), later ones find them there; a new
generation starts an empty memo, so the listing is never stale.
"""

from __future__ import annotations

from thresher.corpus.doclinks import DocPaths
from thresher.errors import ThresherError
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import KeepsReaderMemo, ManagesDocuments, Store

__all__ = ["document_paths", "kept_paths"]

#: the reader memo's key of the generation's :class:`DocPaths`
_KEY = ("document_paths",)


def kept_paths(memo: ReaderMemo) -> DocPaths | None:
    """The :class:`DocPaths` :func:`document_paths` keeps in ``memo``, if it is there (a
    full memo starts again empty: the next :func:`document_paths` builds them again)."""
    held = memo.get(_KEY)
    return held if isinstance(held, DocPaths) else None


def document_paths(store: Store) -> DocPaths | None:
    """The document ids of ``store``'s live generation by path, or None when the store
    keeps no reader memo or cannot list its documents (or cannot say now: its backend
    is gone)."""
    if not isinstance(store, KeepsReaderMemo) or not isinstance(store, ManagesDocuments):
        return None
    try:
        memo = store.reader_memo()
        held = kept_paths(memo)
        if held is not None:
            return held
        paths = DocPaths(store.doc_ids())
    except ThresherError:
        return None
    memo.put(_KEY, paths)
    return paths
