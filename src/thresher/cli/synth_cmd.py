"""``thresher synth SUBCOMMAND``: synthesize fictional corpora and multi-hop tasks.

Sub-subcommands live in their own modules under ``thresher.cli`` with the same
``add_arguments(parser)`` / ``run(args) -> int`` shape as top-level commands;
add one by adding a line to :data:`SUBCOMMANDS`. Their bodies import the
library lazily, so ``thresher synth --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["SUBCOMMANDS", "add_arguments", "run"]

#: sub-subcommand -> (module under thresher.cli, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "world": (
        "synth_world_cmd",
        "generate a seeded fictional corpus (web pages, filings, patents, email) with planted chains",
    ),
    "tasks": ("synth_tasks_cmd", "synthesize verified multi-hop tasks from any index"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="synth_command", metavar="SUBCOMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(f"thresher.cli.{module}").add_arguments(p)
    parser.set_defaults(_synth_parser=parser)


def run(args: argparse.Namespace) -> int:
    name = getattr(args, "synth_command", None)
    if name is None:
        args._synth_parser.print_help()
        return 2
    return int(importlib.import_module(f"thresher.cli.{SUBCOMMANDS[name][0]}").run(args) or 0)
