"""``thresher grep PATTERN --index DIR``: bounded regular-expression search."""

from __future__ import annotations

import argparse

from thresher.cli._common import add_config_args, add_index_arg, load_config, print_json, shorten


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", help="a regular expression (Python/Rust common subset)")
    add_index_arg(parser)
    parser.add_argument("--limit", type=int, default=5, help="most chunks returned (default 5)")
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.open import open_store

    store = open_store(args.index, load_config(args))
    try:
        hits = store.grep(args.pattern, limit=args.limit)
    finally:
        store.close()
    if args.json:
        print_json([h.to_dict() for h in hits])
        return 0
    if not hits:
        print("no match")
    for hit in hits:
        print(f"{hit.chunk.chunk_id}\t{hit.chunk.title}\t{shorten(hit.chunk.text, 120)}")
    return 0
