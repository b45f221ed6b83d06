"""``thresher export-sft TRACES... --tasks FILE --out FILE``: chat-format SFT trajectories.

Reads episode traces (JSONL), matches each episode to its task by question,
filters as the Context-1 report does (kept whole above 0.5 trajectory recall
and 0.4 output recall, lower kept at a diminishing rate, malformed dropped)
and writes OpenAI-style ``{"messages": [...], "tools": [...]}`` records.
"""

from __future__ import annotations

import argparse

from thresher.cli._common import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace JSONL files")
    parser.add_argument(
        "--tasks", required=True, metavar="FILE", help="the tasks the traces ran (any task format)"
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="SFT JSONL to write")
    parser.add_argument(
        "--layout",
        choices=("turns", "episode"),
        default="turns",
        help="turns: one record per turn as the model saw it (default); episode: one per episode",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the low-recall sampling")
    parser.add_argument(
        "--low-rate",
        type=float,
        default=0.5,
        help="keep probability just below the thresholds (default 0.5)",
    )
    parser.add_argument(
        "--metadata", action="store_true", help="add task id and recalls to each record"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    from thresher.tasks.readers import load_tasks
    from thresher.train.sft import SftConfig, export_sft

    config = SftConfig(
        low_rate=args.low_rate, layout=args.layout, seed=args.seed, with_metadata=args.metadata
    )
    report = export_sft(args.traces, load_tasks(args.tasks), args.out, config)
    if args.json:
        print_json(report.to_dict())
        return 0
    dropped = ", ".join(f"{k} {v}" for k, v in report.dropped.items()) or "none"
    print(
        f"{report.episodes} episodes: kept {report.kept_whole} whole and {report.kept_sampled} "
        f"sampled below the recall thresholds, skipped {report.skipped_low} low-recall, "
        f"dropped {sum(report.dropped.values())} malformed ({dropped}); "
        f"wrote {report.records} records to {args.out}"
    )
    return 0
