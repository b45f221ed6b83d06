"""``thresher synth tasks --index DIR --out FILE``: synthesize verified multi-hop tasks.

Writes the tasks as JSONL (schema in ``docs/synth-tasks.md``), optionally the
same tasks in the ``{query_id, query, answer, document_ids}`` form and as TREC
qrels, and prints how many candidates each check kept and rejected. The store
checks run on ``--workers N`` threads or, with ``--ray [ADDRESS]``, as Ray jobs;
the tasks written are the same.
"""

from __future__ import annotations

import argparse
import json

from thresher.cli._common import (
    add_config_args,
    add_index_arg,
    add_runner_args,
    load_config,
    make_runner,
    print_json,
    show_progress,
    terminal_line,
)


def _weights(text: str) -> dict[int, float]:
    """``2,3,4`` (equal weights) or ``2:0.3,3:0.3,4:0.4``."""
    out: dict[int, float] = {}
    try:
        for part in text.split(","):
            hop, _, weight = part.partition(":")
            out[int(hop)] = float(weight) if weight else 1.0
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--hops expects e.g. 2,3,4 or 2:0.3,3:0.3,4:0.4, got {text!r}"
        ) from exc
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arg(parser)
    parser.add_argument("--out", required=True, metavar="FILE", help="tasks JSONL to write")
    parser.add_argument("--n", type=int, default=500, help="tasks wanted (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="any integer (default 0)")
    parser.add_argument(
        "--mode",
        choices=("offline", "llm"),
        default="offline",
        help="offline: template questions (default); llm: phrased and checked by the "
        "endpoint in llm.* settings",
    )
    parser.add_argument(
        "--hops",
        type=_weights,
        default=None,
        metavar="SPEC",
        help="hop counts and weights, e.g. 2,3,4 or 2:0.3,3:0.3,4:0.4 (the default)",
    )
    parser.add_argument(
        "--strict-hops",
        action="store_true",
        help="keep only chains of the drawn hop count (default: fall back to fewer hops)",
    )
    parser.add_argument(
        "--phrasing",
        choices=("auto", "clues", "sentences", "salient"),
        default="auto",
        help="offline questions: from the documents' own sentences, lettered clues, or "
        "each hop named by a few of its sentence's rarest words (salient) "
        "(default auto: sentences when the corpus defines names or links its pages)",
    )
    parser.add_argument("--k", type=int, default=5, help="single-shot cut (default 5)")
    parser.add_argument(
        "--distractors", type=int, default=8, help="distractors per task (default 8)"
    )
    parser.add_argument(
        "--query-out", metavar="FILE", help="also write {query_id, query, answer, document_ids}"
    )
    parser.add_argument("--qrels", metavar="FILE", help="also write TREC qrels (document level)")
    parser.add_argument("--report", metavar="FILE", help="also write the counts as JSON")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar (implied by --json)"
    )
    add_runner_args(parser)
    add_config_args(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from thresher.batch.stores import StoreRef
    from thresher.corpus.jsonl import jsonl_line
    from thresher.tasks.generate.pipeline import synthesize_tasks
    from thresher.tasks.synthetic import to_query_record, write_qrels, write_synth_tasks

    config = load_config(args)
    # reading the whole corpus is one grep over every chunk: give it time
    config = config.override({"grep.timeout_s": max(config.grep.timeout_s, 300.0)})
    location = args.index if "://" in args.index else str(Path(args.index).resolve())
    phraser = None
    if args.mode == "llm":
        from thresher.endpoint.settings import EndpointSettings
        from thresher.llm.client import ChatClient
        from thresher.tasks.generate.phrase import LLMPhraser

        phraser = LLMPhraser(ChatClient(EndpointSettings.resolve(config.llm)))
    with make_runner(args) as runner:
        report = synthesize_tasks(
            StoreRef(location, config),
            args.n,
            args.seed,
            args.mode,
            hop_weights=args.hops,
            strict_hops=args.strict_hops,
            phrasing=args.phrasing,
            k=args.k,
            n_distractors=args.distractors,
            phraser=phraser,
            progress=show_progress(args),
            runner=runner,
        )
    write_synth_tasks(args.out, report.tasks)
    if args.query_out:
        with open(args.query_out, "w", encoding="utf-8") as fh:
            for task in report.tasks:
                fh.write(jsonl_line(to_query_record(task)))
    if args.qrels:
        write_qrels(args.qrels, report.tasks)
    summary = report.to_dict()
    if args.report:
        with open(args.report, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2)
            fh.write("\n")
    if args.json:
        print_json({"out": args.out, **summary})
        return 0 if report.kept else 1
    hops = ", ".join(f"{h} hops: {c}" for h, c in sorted(report.by_hops.items()))
    print(
        f"kept {report.kept} of {args.n} tasks ({hops}) from {report.chunks} chunks "
        f"in {report.documents} documents in {report.seconds:.1f} s "
        f"(reading the corpus {report.read_seconds:.1f} s); wrote {args.out}"
    )
    print(
        f"single-shot hybrid recall@{report.k} on the kept tasks: {report.single_shot_recall:.3f}"
    )
    search = report.search
    print(
        f"chain search: {search.get('fact_sentences', 0)} fact sentences of "
        f"{search.get('sentences', 0)} read; {search.get('ambiguous_hop', 0)} ambiguous "
        "candidate hops refused"
    )
    print("check                    passed  rejected")
    for reason, rejected in report.rejected.items():
        if rejected or report.passed.get(reason):
            print(f"{reason:<24} {report.passed.get(reason, 0):>6}  {rejected:>8}")
    if report.failed:
        print(
            f"note: the store checks of {len(report.failed)} candidates failed twice "
            f"(first error: {terminal_line(report.failed[0])}); they count as candidates"
        )
    if report.kept < args.n:
        print(f"note: the seeds ran out after {report.candidates} candidates; fewer than {args.n}")
    return 0 if report.kept else 1
