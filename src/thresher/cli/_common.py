"""Arguments and output helpers shared by the subcommands.

Output rule: stdout carries the command's result (text, or one JSON document
with ``--json``); stderr carries errors and, for a person watching, the live
episode view and progress bars. ``--json`` means a program is reading, so it
turns the live view and the progress bars off (:func:`live_view`,
:func:`show_progress`); bars are also off whenever stderr is not a terminal
(tqdm's ``disable=None``, or the ingest's own check).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from thresher.config import Config

__all__ = [
    "add_index_arg",
    "add_config_args",
    "load_config",
    "print_json",
    "shorten",
    "live_view",
    "show_progress",
]


def add_index_arg(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--index``: an index folder, or ``http://HOST:PORT[/COLLECTION]`` for a Chroma server."""
    parser.add_argument(
        "--index",
        required=required,
        metavar="DIR|URL",
        help="index folder (embedded default) or http://HOST:PORT[/COLLECTION] (Chroma server)",
    )


def add_config_args(parser: argparse.ArgumentParser) -> None:
    """``--config FILE`` and repeated ``--set section.key=value`` overrides."""
    parser.add_argument("--config", metavar="FILE", help="a .toml or .json config file")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting, e.g. --set budget.total=16384 (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def load_config(args: argparse.Namespace, extra: dict[str, Any] | None = None) -> Config:
    """The config from ``--config`` and ``--set`` (and command-specific ``extra``)."""
    from thresher.errors import ConfigError

    config = Config.load(args.config) if getattr(args, "config", None) else Config()
    overrides: dict[str, Any] = {}
    for item in getattr(args, "overrides", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    overrides.update({k: v for k, v in (extra or {}).items() if v is not None})
    return config.override(overrides) if overrides else config


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def shorten(text: str, width: int = 160) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def live_view(args: argparse.Namespace) -> bool:
    """Whether to print the live episode view (and other running commentary) on stderr.

    False with ``--quiet`` or ``--json``: JSON output is for programs, which read
    stdout and should find stderr empty unless something went wrong.
    """
    return not getattr(args, "quiet", False) and not getattr(args, "json", False)


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to ask for progress bars: False with ``--no-progress`` or ``--json``.

    A True answer is a request, not a promise: every bar is still off when stderr
    is not a terminal, so pipes and log files never receive carriage returns.
    """
    return not getattr(args, "no_progress", False) and not getattr(args, "json", False)
