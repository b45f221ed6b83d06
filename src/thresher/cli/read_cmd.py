"""``thresher read ID --index DIR``: a whole document, or chunks by id (``doc#N``)."""

from __future__ import annotations

import argparse

from thresher.cli._common import add_config_args, add_index_arg, load_config, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="+", metavar="ID", help="document ids, or chunk ids (DOC#N)")
    add_index_arg(parser)
    parser.add_argument(
        "--chunks", action="store_true", help="treat every ID as a chunk id (even without '#')"
    )
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.open import open_store

    store = open_store(args.index, load_config(args))
    try:
        chunks = []
        for ident in args.ids:
            if args.chunks or "#" in ident:
                chunks.extend(store.get([ident]))
            else:
                chunks.extend(store.read_document(ident))
    finally:
        store.close()
    if args.json:
        print_json([c.to_dict() for c in chunks])
        return 0
    for chunk in chunks:
        print(f"== {chunk.chunk_id}  {chunk.title}  [{chunk.source}]")
        print(chunk.text)
        print()
    return 0
