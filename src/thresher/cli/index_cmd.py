"""``thresher index PATH... --index DIR``: ingest sources into an index (incremental)."""

from __future__ import annotations

import argparse

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    load_config,
    print_json,
    show_progress,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files or folders: .txt .md .html .jsonl, HotpotQA / MuSiQue / 2Wiki files",
    )
    add_index_arg(parser)
    parser.add_argument("--chunk-tokens", type=int, help="max tokens per chunk (default 512)")
    parser.add_argument("--embedder", help="embedder name (default minilm-int8)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest

    config = load_config(
        args,
        {"chunking.max_tokens": args.chunk_tokens, "retrieval.embedder": args.embedder},
    )
    report = ingest(
        iter_documents(args.paths),
        args.index,
        config,
        progress=show_progress(args),
    )
    if args.json:
        print_json(report.to_dict())
        return 0
    print(
        f"indexed {report.documents_seen} documents into {args.index}: "
        f"{report.documents_added} added, {report.documents_updated} updated, "
        f"{report.documents_deleted} deleted, {report.documents_unchanged} unchanged; "
        f"{report.chunks_added} chunks added, {report.chunks_deleted} removed "
        f"in {report.seconds:.1f} s"
    )
    removed = {k: v for k, v in report.sanitized.items() if v}
    if removed:
        print("sanitized: " + ", ".join(f"{k} {v}" for k, v in sorted(removed.items())))
    return 0
