"""``thresher read ID --index DIR``: a whole document, or chunks by id (``doc#N``).

An ID holding ``#`` is read as a chunk id (``doc#N``) and, when no chunk has
that id, as a document id (a document whose own id holds ``#``); ``--doc``
says every ID is a document id, ``--chunks`` that every ID is a chunk id. Ids,
titles and text are printed terminal-safe.

An ID the index does not hold is read as a filesystem path when it names a file
that was indexed (``docs/sub/a.md`` -> ``sub/a.md``); otherwise the error names
the nearest ids (``did you mean``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from thresher.cli._common import (
    add_config_args,
    add_filter_args,
    add_index_arg,
    doc_filter,
    load_config,
    print_json,
    terminal_line,
    terminal_text,
)

if TYPE_CHECKING:
    from thresher.index.store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="+", metavar="ID", help="document ids, or chunk ids (DOC#N)")
    add_index_arg(parser)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument(
        "--chunks", action="store_true", help="treat every ID as a chunk id (even without '#')"
    )
    kind.add_argument(
        "--doc",
        action="store_true",
        help="treat every ID as a document id (for ids that hold '#')",
    )
    add_filter_args(parser)
    add_config_args(parser)


def _read_either(store: Any, ident: str) -> list[Any]:
    """``ident`` as a chunk id if it holds ``#`` and names one, else as a document id."""
    from thresher.errors import UnknownIdError

    if "#" not in ident:
        return list(store.read_document(ident))
    try:
        return list(store.get([ident]))
    except UnknownIdError:
        pass
    try:
        return list(store.read_document(ident))
    except UnknownIdError as exc:
        raise UnknownIdError(
            f"no chunk or document has the id {ident!r}; check it with `thresher grep` or "
            "`thresher search`",
            [ident],
        ) from exc


def _read_one(store: Any, ident: str, args: argparse.Namespace) -> list[Any]:
    if args.doc:
        return list(store.read_document(ident))
    if args.chunks:
        return list(store.get([ident]))
    return _read_either(store, ident)


def _read_or_suggest(store: Any, ident: str, args: argparse.Namespace) -> list[Any]:
    """``ident`` read as asked; on a miss, as the path of an indexed file, else an
    ``UnknownIdError`` naming the nearest ids."""
    from thresher.cli._ids import id_of_path, near_ids
    from thresher.corpus.ids import doc_of
    from thresher.errors import UnknownIdError

    try:
        return _read_one(store, ident, args)
    except UnknownIdError as exc:
        known = _known_ids(store)
        mapped = id_of_path(ident, known)
        if mapped is not None and not args.chunks:
            return list(store.read_document(mapped))
        near = near_ids(doc_of(ident), known)
        if not near:
            raise
        hint = ", ".join(repr(n) for n in near)
        raise UnknownIdError(f"{exc}; did you mean {hint}?", [ident]) from exc


def _known_ids(store: Store) -> list[str]:
    """Every document id of ``store`` (none for a store wrapper that cannot list them)."""
    from thresher.index.store import ManagesDocuments

    return list(store.doc_ids()) if isinstance(store, ManagesDocuments) else []


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store

    store = open_store(args.index, load_config(args))
    try:
        chunks = []
        for ident in args.ids:
            chunks.extend(_read_or_suggest(store, ident, args))
        where = doc_filter(args)
        for doc_id in dict.fromkeys(c.doc_id for c in chunks) if where is not None else ():
            store.read_document(doc_id, where=where)  # refuses a document outside the filter
    finally:
        store.close()
    if args.json:
        print_json([c.to_dict() for c in chunks])
        return 0
    for chunk in chunks:
        print(terminal_line(f"== {chunk.chunk_id}  {chunk.title}  [{chunk.source}]"))
        print(terminal_text(chunk.text))
        print()
    return 0
