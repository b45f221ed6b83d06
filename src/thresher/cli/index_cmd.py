"""``thresher index PATH... --index DIR``: ingest sources into an index (incremental).

Deletion is scoped to the paths named: a document already in the index is
deleted only when it was read from under one of them and the input no longer
has it, so indexing one file or folder never touches documents that came from
elsewhere. ``--sync`` makes the index hold exactly the inputs named (every other
document is deleted). An input that yields no document is an error and changes
nothing. While another ingest holds the index folder, the command says that it
waits for it.

Every run ends with an account of the files: how many were read and, by
reason, how many were skipped, by extension (``--verbose``: with their first
paths; ``--json``: ``files``, both). ``--include``/``--exclude`` select what a
folder's walk reads with gitignore-style patterns, as a ``.thresherignore`` does.
"""

from __future__ import annotations

import argparse
from typing import Any

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    add_setting_flag,
    load_config,
    print_json,
    show_progress,
    warnings_on_stderr,
)
from thresher.config import RetrievalConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files or folders: .txt .md .rst .html, text files without extension (README, "
        "NEWS), source code, .csv .tsv, .pdf, .docx, .json .jsonl records, any of these "
        "gzipped, HotpotQA / MuSiQue / 2Wiki files (see README: Ingestion)",
    )
    add_index_arg(parser)
    add_setting_flag(parser, "--chunk-tokens", "max tokens per chunk (default 512)")
    add_setting_flag(
        parser,
        "--embedder",
        "embedder name: minilm-int8-dq-w128, minilm-int8-dq, minilm-int8 (names in "
        f"docs/embedding.md), openai:MODEL or st:MODEL (default {RetrievalConfig().embedder}; "
        "an index keeps the MiniLM variant it was built with)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (terminal) nor progress lines every 10 s (log, pipe)",
    )
    parser.add_argument(
        "--max-doc-chars",
        type=int,
        metavar="N",
        help="skip (with a warning) documents longer than N characters (default 8000000)",
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="read links to files outside the folders named (default: skipped with a warning)",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="read only files matching GLOB in the folders named (gitignore-style, relative "
        "to each folder: '*.md', 'docs/**/*.rst'; repeatable; files named are always read)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files and folders matching GLOB in the folders named (gitignore-style "
        "like .thresherignore: 'drafts/', '*.log'; repeatable)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list the first paths skipped for each reason (default: counts by extension)",
    )
    parser.add_argument(
        "--sync",
        action="store_true",
        help="make the index hold exactly these inputs: delete every document not in them "
        "(default: delete only documents that came from the paths named and are gone)",
    )
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from thresher.corpus.load_stats import LoadStats
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import backend_for, ingest

    config = load_config(args)
    limit = {} if args.max_doc_chars is None else {"max_chars": args.max_doc_chars}
    remote = bool(backend_for(args.index).schemes)  # a folder index is never read as input
    stats = LoadStats()
    with warnings_on_stderr("thresher", enabled=not args.json):
        docs = iter_documents(
            args.paths,
            stats,
            follow_links=args.follow_links,
            exclude=() if remote else (args.index,),
            include_globs=args.include,
            exclude_globs=args.exclude,
            **limit,
        )
        report = ingest(
            docs,
            args.index,
            config,
            progress=show_progress(args),
            sources=None if args.sync else args.paths,
            files=stats,
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
    if report.documents_kept:
        print(
            f"{report.documents_kept} other documents in the index (from paths not named) "
            "left as they are; --sync deletes them"
        )
    removed = {k: v for k, v in report.sanitized.items() if v}
    if removed:
        print("sanitized: " + ", ".join(f"{k} {v}" for k, v in sorted(removed.items())))
    for line in file_account(report.files, verbose=args.verbose):
        print(line)
    return 0


def file_account(files: dict[str, Any], verbose: bool = False) -> list[str]:
    """The lines accounting for every file of an ingest: read, then skipped by reason
    with counts by extension, and with ``verbose`` the first paths (``files`` is
    :meth:`LoadStats.to_dict`)."""
    from thresher.cli._common import shorten
    from thresher.corpus.load_stats import SKIP_REASONS

    skipped = files["skipped"]
    total = sum(s["count"] for s in skipped.values())
    lines = [f"files: {files['files']} read, {total} skipped" + (":" if total else "")]
    for reason, info in skipped.items():
        kinds = list(info.get("extensions", {}).items())
        shown = ", ".join(f"{shorten(kind, 24)} {n}" for kind, n in kinds[:_KINDS_SHOWN])
        if len(kinds) > _KINDS_SHOWN:
            shown += f", {len(kinds) - _KINDS_SHOWN} more"
        label = SKIP_REASONS.get(reason, reason)
        lines.append(f"  {label}: {info['count']}" + (f"  ({shown})" if shown else ""))
        if verbose:
            more = info["count"] - len(info["examples"])
            lines += [f"      {shorten(p, 160)}" for p in info["examples"]]
            if more > 0 and info["examples"]:
                lines.append(f"      … {more} more")
    if total and not verbose:
        lines.append("  (--verbose lists the first paths of each)")
    return lines


#: how many extensions are named per skip reason
_KINDS_SHOWN = 6
