"""The ``thresher`` command: a thin shell over the library.

Each subcommand lives in its own module under ``thresher.cli`` exposing
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only
when their subcommand runs, so ``thresher --help`` stays fast. Any
``ThresherError`` becomes one line on stderr and its exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main", "COMMANDS"]

#: subcommand -> (module under thresher.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo_cmd", "build the demo corpus and index, then run a multi-hop search"),
    "index": ("index_cmd", "ingest files, folders or datasets into an index"),
    "search": ("search_cmd", "run a search episode for a question"),
    "grep": ("grep_cmd", "regular-expression search over an index"),
    "read": ("read_cmd", "print a document (or chunks) by id"),
    "stats": ("stats_cmd", "summarize an index"),
    "docs": ("docs_cmd", "list the documents of an index, or delete some"),
    "fit-fusion": ("fit_fusion_cmd", "fit the hybrid search's fusion weights to an index"),
    "trace": ("trace_cmd", "inspect an episode trace (show, replay, view)"),
    "synth": ("synth_cmd", "synthesize fictional corpora and multi-hop tasks"),
    "train-policy": ("train_policy_cmd", "fit the local policy's scorer on task files"),
    "adapt": ("adapt_cmd", "adapt the local policy to an index's own documents (kept with it)"),
    "export-sft": ("export_sft_cmd", "write chat-format SFT trajectories from episode traces"),
    "export-steps": ("export_steps_cmd", "write step-wise RL rows (token ids) from episode traces"),
    "eval": ("eval_cmd", "paired evaluation of two configurations on a task file, with a report"),
    "serve": ("serve_cmd", "serve the HTTP API: POST /search streamed as server-sent events"),
    "mcp": ("mcp_cmd", "serve thresher as an MCP server (stdio or streamable HTTP)"),
}


def _build_parser(
    argv: Sequence[str],
) -> tuple[argparse.ArgumentParser, str | None, argparse.ArgumentParser | None]:
    parser = argparse.ArgumentParser(
        prog="thresher",
        description="A harness for self-editing search agents.",
    )
    from thresher._version import __version__

    parser.add_argument("--version", action="version", version=f"thresher {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    chosen_parser = None
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:  # only the chosen subcommand's module is imported
            importlib.import_module(f"thresher.cli.{module}").add_arguments(p)
            chosen_parser = p
    return parser, chosen if chosen in COMMANDS else None, chosen_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    from thresher.errors import ThresherError

    args_list = list(sys.argv[1:] if argv is None else argv)
    parser, chosen, sub = _build_parser(args_list)
    args, extra = parser.parse_known_args(args_list)
    if extra:  # said by the subcommand, with its own usage line (argparse exits 2)
        (sub or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if chosen is None:
        parser.print_help()
        return 2
    module = importlib.import_module(f"thresher.cli.{COMMANDS[chosen][0]}")
    try:
        return int(module.run(args) or 0)
    except ThresherError as exc:
        from thresher.cli._common import terminal_line

        print(terminal_line(f"thresher {chosen}: error: {exc}"), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"thresher {chosen}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
