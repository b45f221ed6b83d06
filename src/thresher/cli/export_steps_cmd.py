"""``thresher export-steps TRACES... --tasks FILE --out FILE``: step-wise RL rows.

Reads episode traces (JSONL) that carry ``sample`` events (the replies' token ids:
``--set llm.return_tokens=true`` with vLLM, or ``SearchEnv.step(..., sample=...)``),
matches each episode to its task by question, scores it, sets each task's
group-relative advantages (an episode that failed for infrastructure is unscorable:
advantage 0) and writes the rows (``thresher.train.stepwise``) as JSONL.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from thresher.cli._common import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace JSONL files")
    parser.add_argument(
        "--tasks", required=True, metavar="FILE", help="the tasks the traces ran (any task format)"
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="rows JSONL to write")
    parser.add_argument(
        "--beta", type=float, default=4.0, help="the reward's F-beta weight (default 4)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _unscorable(events: Sequence[Any]) -> str | None:
    """Why an episode failed for infrastructure (as a training SearchEnv says), or None."""
    from thresher.env.search_env import INFRA_EXITS, INFRA_TOOL_CODES
    from thresher.harness.trace import EpisodeEnd, ToolResult

    exits = {reason.value for reason in INFRA_EXITS}
    for event in events:
        if isinstance(event, EpisodeEnd) and event.exit_reason in exits:
            return event.exit_reason
        if (
            isinstance(event, ToolResult)
            and event.status == "error"
            and event.code in INFRA_TOOL_CODES
        ):
            return f"{event.tool} failed ({event.code})"
    return None


def run(args: argparse.Namespace) -> int:
    from thresher.errors import InputError
    from thresher.tasks.readers import load_tasks
    from thresher.train.stepwise import export_steps

    if not args.beta > 0:
        raise InputError(f"--beta must be above 0, got {args.beta}")
    tasks = load_tasks(args.tasks)
    report = export_steps(args.traces, tasks, args.out, beta=args.beta, unscorable=_unscorable)
    if args.json:
        print_json(report.to_dict())
        return 0
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items())) or "none"
    print(
        f"{report.episodes} episodes in {report.groups} task groups "
        f"({report.unscorable} unscorable): wrote {report.rows} rows to {args.out}; "
        f"skipped: {skipped}"
    )
    return 0
