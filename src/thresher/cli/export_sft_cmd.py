"""``thresher export-sft TRACES... --tasks FILE --out FILE``: chat-format SFT trajectories.

Reads episode traces (JSONL), matches each episode to its task by question,
filters as the Context-1 report does (kept whole above 0.5 trajectory recall
and 0.4 output recall, lower kept at a diminishing rate, malformed dropped)
and writes OpenAI-style ``{"messages": [...], "tools": [...]}`` records. Each
trace file is one job: ``--workers N`` threads, or Ray with ``--ray [ADDRESS]``
(the files must be readable where the workers run); the output is the same.
"""

from __future__ import annotations

import argparse

from thresher.cli._common import add_runner_args, make_runner, print_json, terminal_line


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
    add_runner_args(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    from thresher.tasks.readers import load_tasks
    from thresher.train.sft import SftConfig, export_sft

    config = SftConfig(
        low_rate=args.low_rate, layout=args.layout, seed=args.seed, with_metadata=args.metadata
    )
    tasks = load_tasks(args.tasks)
    with make_runner(args) as runner:
        report = export_sft(args.traces, tasks, args.out, config, runner=runner)
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
    for failure in report.failed:
        print(terminal_line(f"failed twice, counted as dropped: {failure}"))
    return 0
