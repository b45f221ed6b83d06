"""``thresher demo``: generate a fictional corpus, index it, run one multi-hop search.

The corpus is a seeded fictional world (web pages, annual filings, patents,
email threads) so no model can answer from memory. The question is the world's
first planted chain; after the search the planted evidence is compared with
what the episode returned. Re-running reuses the index (ingestion is
incremental: nothing changed, nothing re-embedded).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.cli._common import (
    add_config_args,
    live_view,
    load_config,
    print_json,
    shorten,
    show_progress,
)

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", default=".demo", help="working folder (default .demo)")
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    parser.add_argument(
        "--size", default="small", help="world size: small, medium, large (default small)"
    )
    parser.add_argument("--policy", help="policy name (default: the library's default)")
    parser.add_argument("--question", help="ask this instead of the world's first chain")
    parser.add_argument(
        "--quiet", action="store_true", help="no live view on stderr (implied by --json)"
    )
    add_config_args(parser)


def chain_steps(events: Sequence[Any], documents: Sequence[Any]) -> dict[str, str]:
    """How each final document was found, from the trace's lineage: the hop, the call
    and its query, and the document whose bridge led there ("hop 2: search_corpus
    "Vratain Microsystems town ..." via email/thread-00011.txt")."""
    lineage: dict[str, dict[str, Any]] = {}
    from thresher.harness.trace import ToolResult

    for event in events:
        if isinstance(event, ToolResult):
            for record in event.lineage:
                lineage.setdefault(str(record.get("chunk_id")), record)
    doc_of = {cid: str(rec.get("doc_id")) for cid, rec in lineage.items()}
    out: dict[str, str] = {}
    for doc in documents:
        found = [lineage[c] for c in doc.chunk_ids if c in lineage]
        if not found:
            continue
        record = found[0]
        hop = record.get("hop")
        step = f"hop {hop}: " if hop is not None else ""
        step += f"{record.get('tool')} {shorten(str(record.get('query', '')), 80)!r}"
        via = [doc_of.get(p, p) for p in record.get("parents") or ()]
        via = [d for d in dict.fromkeys(via) if d != doc.doc_id]
        if via and hop:
            step += f" via {', '.join(via[:2])}"
        out[doc.doc_id] = step
    return out


def run(args: argparse.Namespace) -> int:
    from thresher.api import searching
    from thresher.cli.trace_cmd import format_event
    from thresher.corpus.loaders import iter_documents
    from thresher.harness.trace import read_jsonl
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    config = load_config(args)
    root = Path(args.dir)
    world_dir, index_dir, trace_file = root / "world", root / "index", root / "trace.jsonl"
    say = (lambda *_: None) if args.json else (lambda msg: print(msg, file=sys.stderr))

    manifest = generate_world(args.seed, args.size, world_dir)
    chain = manifest.chains[0]
    say(f"[1/3] fictional world (seed {args.seed}, {args.size}) in {world_dir}")
    report = ingest(iter_documents([world_dir]), index_dir, config, progress=show_progress(args))
    say(
        f"[2/3] index {index_dir}: {report.documents_seen} documents, "
        f"{report.chunks_added} chunks added, {report.documents_unchanged} unchanged"
    )
    question = args.question or chain.question
    say(f"[3/3] search: {question}")

    watching = live_view(args)
    kwargs = {"policy": args.policy} if args.policy else {}
    with searching(
        question,
        index=index_dir,
        config=config,
        trace=trace_file,
        reuse=False,  # one call per process: nothing to reuse
        **kwargs,
    ) as episode:
        for event in episode:  # the live view: each event as it is applied
            if watching:
                for line in format_event(event):
                    print("      " + line, file=sys.stderr, flush=True)
    result = episode.result
    assert result is not None  # read to its end
    gold = [] if args.question else [hop.doc for hop in chain.hops]
    found = {doc.doc_id for doc in result.documents}
    if args.json:
        print_json({"question": question, "gold": gold, "result": result.to_dict()})
        return 0
    print(f"\nQuestion: {question}")
    found_by = chain_steps(read_jsonl(trace_file), result.documents)
    for doc in result.documents:
        mark = "*" if doc.doc_id in gold else " "
        print(f"{mark}{doc.rank:>2}. {doc.doc_id}  ({doc.title})")
        if doc.doc_id in found_by:
            print(f"     found: {found_by[doc.doc_id]}")
        if doc.justification:
            print(f"     {shorten(doc.justification, 200)}")
    print(
        f"\nexit: {result.exit_reason.value}; turns {result.turns}; "
        f"tool calls {json.dumps(result.tool_calls)}; "
        f"context tokens at the end {result.usage.used}/{result.usage.budget}"
    )
    if gold:
        hits = sum(1 for g in gold if g in found)
        print(f"planted evidence found: {hits}/{len(gold)} (* marks it); answer: {chain.answer}")
    print(f"trace: {trace_file}  (thresher trace show {trace_file})")
    return 0
