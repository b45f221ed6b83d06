"""``thresher grep PATTERN --index DIR``: bounded regular-expression search.

Prints the first ``--limit`` matching chunks in corpus order, each chunk id
followed by the lines that matched with their line numbers within the chunk
(``  3: the line``), and, when more matched, how many (``5 of 40 matching
chunks``; ``5 of at least 1000`` where counting stopped at ``grep.count_cap``);
``--json`` prints ``{"total": N, "hits": [...]}``, each hit with its ``lines``
(``[{"line": 3, "text": ...}]``).
"""

from __future__ import annotations

import argparse

from thresher.cli._common import (
    add_config_args,
    add_filter_args,
    add_index_arg,
    add_setting_flag,
    doc_filter,
    load_config,
    print_json,
    shorten,
    terminal_line,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", help="a regular expression (Python/Rust common subset)")
    add_index_arg(parser)
    add_setting_flag(parser, "--limit", "most chunks returned (default 5)")
    add_filter_args(parser)
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store
    from thresher.index.grep.lines import matching_lines

    config = load_config(args)
    where = doc_filter(args)
    store = open_store(args.index, config)
    try:
        found = store.grep(
            args.pattern, limit=config.grep.limit, **({"where": where} if where else {})
        )
    finally:
        store.close()
    timeout = config.grep.timeout_s
    lines = [matching_lines(args.pattern, h.chunk.text, timeout_s=timeout) for h in found.hits]
    if args.json:
        data = found.to_dict()
        for hit, hit_lines in zip(data["hits"], lines, strict=True):
            hit["lines"] = [{"line": m.line, "text": m.text} for m in hit_lines]
        print_json(data)
        return 0
    if not found.total:
        print("no match")
    for hit, hit_lines in zip(found.hits, lines, strict=True):
        chunk = hit.chunk
        print(f"{terminal_line(chunk.chunk_id)}  {terminal_line(chunk.title)}")
        for m in hit_lines:
            print(f"  {m.line}: {shorten(m.text, 160)}")
        if not hit_lines:
            print(f"  {shorten(chunk.text, 120)}")
    if found.cut:
        total = f"at least {found.total}" if found.capped else str(found.total)
        print(f"{len(found.hits)} of {total} matching chunks (raise --limit to see more)")
    return 0
