"""``thresher stats --index DIR``: what an index holds.

Below the counts, the chunks that carry injection flags, each with its flags
(``--json``: ``"flagged": [{"id", "flags"}]``), so the count of flagged chunks
comes with their names (``thresher read ID`` shows one).
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
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arg(parser)
    add_config_args(parser)


def flagged_chunks(store: Any, stats: dict[str, Any]) -> list[dict[str, Any]]:
    """``[{"id", "flags"}]`` of every chunk carrying an injection flag, in corpus order.

    Documents flagged at ingestion carry ``injection_flags`` in their metadata; their
    chunks are read and judged (:func:`thresher.corpus.sanitize.chunk_flags`). An
    index whose ingest counted no flag is not listed (a large index is not read).
    """
    from thresher.corpus.sanitize import chunk_flags

    counted = stats.get("extra", {}).get("sanitized", {}).get("injection_flagged")
    if counted == 0 or not hasattr(store, "list_documents"):
        return []
    out: list[dict[str, Any]] = []
    for doc in store.list_documents():
        if not doc.metadata.get("injection_flags"):
            continue
        for chunk in store.get(list(doc.chunk_ids)):
            flags = chunk_flags(chunk)
            if flags:
                out.append({"id": chunk.chunk_id, "flags": list(flags)})
    return out


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store

    store = open_store(args.index, load_config(args))
    try:
        stats = store.stats().to_dict()
        flagged = flagged_chunks(store, stats)
    finally:
        store.close()
    if args.json:
        print_json({**stats, "flagged": flagged})
        return 0
    for key, value in stats.items():
        if key == "extra":
            for k, v in value.items():
                print(f"{k:>16}: {v}")
        else:
            print(f"{key:>16}: {value}")
    print(f"{'flagged chunks':>16}: {len(flagged)}")
    for item in flagged:
        print(terminal_line(f"{'':>16}  {item['id']}: {', '.join(item['flags'])}"))
    return 0
