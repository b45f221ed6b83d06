"""``thresher grep PATTERN --index DIR``: bounded regular-expression search.

Prints the first ``--limit`` matching chunks in corpus order and, when more
matched, how many (``5 of 40 matching chunks``; ``5 of at least 1000`` where counting
stopped at ``grep.count_cap``); ``--json`` prints
``{"total": N, "hits": [...]}``.
"""

from __future__ import annotations

import argparse

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    load_config,
    print_json,
    shorten,
    terminal_line,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", help="a regular expression (Python/Rust common subset)")
    add_index_arg(parser)
    parser.add_argument("--limit", type=int, default=5, help="most chunks returned (default 5)")
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store

    store = open_store(args.index, load_config(args))
    try:
        found = store.grep(args.pattern, limit=args.limit)
    finally:
        store.close()
    if args.json:
        print_json(found.to_dict())
        return 0
    if not found.total:
        print("no match")
    for hit in found.hits:
        chunk = hit.chunk
        print(
            f"{terminal_line(chunk.chunk_id)}\t{terminal_line(chunk.title)}\t{shorten(chunk.text, 120)}"
        )
    if found.cut:
        total = f"at least {found.total}" if found.capped else str(found.total)
        print(f"{len(found.hits)} of {total} matching chunks (raise --limit to see more)")
    return 0
