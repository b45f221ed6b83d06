"""``thresher read ID --index DIR``: a whole document, or chunks by id (``doc#N``).

An ID holding ``#`` is read as a chunk id (``doc#N``) and, when no chunk has
that id, as a document id (a document whose own id holds ``#``); ``--doc``
says every ID is a document id, ``--chunks`` that every ID is a chunk id. Ids,
titles and text are printed terminal-safe.
"""

from __future__ import annotations

import argparse
from typing import Any

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    load_config,
    print_json,
    terminal_line,
    terminal_text,
)


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


def run(args: argparse.Namespace) -> int:
    from thresher.index.open import open_store

    store = open_store(args.index, load_config(args))
    try:
        chunks = []
        for ident in args.ids:
            if args.doc:
                chunks.extend(store.read_document(ident))
            elif args.chunks:
                chunks.extend(store.get([ident]))
            else:
                chunks.extend(_read_either(store, ident))
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
