"""``thresher search "question" --index DIR``: run a full episode with a live view.

The live view (one line per event: turns, tool calls with arguments, results,
prunes, refusals, usage) goes to stderr; the ranked documents with their
justifications go to stdout. ``--json`` prints the Result as JSON and draws no
live view, so stderr then carries errors only. Exit code 0 when the episode
produced a result (answered, or partial on a cap), 1 on a policy or internal
error, 2 on invalid input.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading

from thresher.cli._common import (
    add_config_args,
    add_filter_args,
    add_index_arg,
    add_setting_flag,
    live_view,
    load_config,
    print_json,
    shorten,
    terminal_line,
    warnings_on_stderr,
)
from thresher.config import Config

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from thresher.policies import POLICIES

    parser.add_argument("question", help="the question to find supporting documents for")
    add_index_arg(parser)
    built_in = ", ".join(name for name in POLICIES if name != "local")
    parser.add_argument(
        "--policy",
        default="local",
        help=f"policy: local (default), {built_in}, an installed one, or package.module:Factory",
    )
    parser.add_argument(
        "--k",
        "-k",
        "--n-results",
        dest="k",
        type=int,
        metavar="N",
        help="how many documents to return (default: the policy's own number)",
    )
    add_filter_args(parser)
    add_setting_flag(
        parser,
        "--budget",
        "token budget (default 32768; the LLM policy fits an unset budget to its server's context)",
    )
    parser.add_argument("--trace", metavar="FILE", help="write the trace (JSONL) to FILE")
    parser.add_argument(
        "--quiet", action="store_true", help="no live view on stderr (implied by --json)"
    )
    add_config_args(parser)


def _start_warm_up(index: str, config: Config) -> threading.Thread:
    """Load the token counter and the index's query embedder on another thread while this
    one imports the harness, opens the index and builds the policy: the episode loads
    both anyway (a load in progress is waited for, never done twice), and the ONNX
    session's load runs outside Python's lock, beside this thread's work."""
    from thresher.errors import ThresherError
    from thresher.index.backends import preload
    from thresher.tokens import get_counter

    def warm() -> None:
        preload(index)  # first: the longest, and mostly outside Python's lock
        with contextlib.suppress(ThresherError):
            get_counter(config.chunking.tokenizer)

    thread = threading.Thread(target=warm, name="thresher-warm-up")
    thread.start()
    return thread


def run(args: argparse.Namespace) -> int:
    from thresher.api import searching, with_filter, with_k
    from thresher.cli.trace_cmd import format_event
    from thresher.errors import InputError
    from thresher.harness.episode import check_searchable
    from thresher.harness.result import ExitReason

    if not args.question.strip():  # one line, before any episode (no live view, no result)
        raise InputError('the question is empty; ask one: thresher search "..." --index DIR')
    check_searchable(args.question)
    config = with_k(load_config(args), args.k)
    config = with_filter(config, args.where, args.path)
    warming = _start_warm_up(args.index, config)
    watching = live_view(args)
    with (
        warnings_on_stderr("thresher"),
        searching(
            args.question,
            index=args.index,
            policy=args.policy,
            config=config,
            trace=args.trace,
            reuse=False,  # one call per process: nothing to reuse
        ) as episode,
    ):
        for event in episode:  # the live view: each event as it is applied
            if watching:
                for line in format_event(event):
                    print(line, file=sys.stderr, flush=True)
    result = episode.result
    assert result is not None  # read to its end
    if args.json:
        print_json(result.to_dict())
    else:
        if not result.documents:
            print("(no documents)")
        for doc in result.documents:
            score = f"  (score {doc.score:.3f})" if doc.score is not None else ""
            print(terminal_line(f"{doc.rank}. {doc.doc_id}  {doc.title}{score}"))
            if doc.justification:
                print(f"   {shorten(doc.justification, 200)}")
            print(f"   {shorten(doc.text, 200)}")
        if result.partial:
            partial = f"(partial result: {result.exit_reason.value} {result.message})"
            print(terminal_line(partial.rstrip()))
    if args.trace and watching:
        print(f"trace written to {args.trace}", file=sys.stderr)
    warming.join()
    if result.exit_reason is ExitReason.INVALID_INPUT:
        print(terminal_line(f"thresher search: error: {result.message}"), file=sys.stderr)
        return 2
    failed = (ExitReason.POLICY_ERROR, ExitReason.ENDPOINT_UNAVAILABLE, ExitReason.ERROR)
    if result.exit_reason in failed:
        return 1
    return 0
