"""Arguments and output helpers shared by the subcommands.

Output rule: stdout carries the command's result (text, or one JSON document
with ``--json``); stderr carries errors and, for a person watching, the live
episode view and progress bars. ``--json`` means a program is reading, so it
turns the live view and the progress bars off (:func:`live_view`,
:func:`show_progress`); bars are also off whenever stderr is not a terminal
(tqdm's ``disable=None``, or the ingest's own check).

Terminal rule: ids, titles and chunk text are corpus data, and a terminal obeys
what it is sent (ESC starts a control sequence that can rewrite the screen or
the title bar, bidi controls reorder what a person reads, a newline inside an id
forges a line). Every line of corpus data a command prints goes through
:func:`terminal_line` (one line) or :func:`terminal_text` (newlines and tabs
kept), which show each other non-printable character as a visible escape
(``\\x1b``, ``\\u202e``); :func:`print_json` writes them as JSON ``\\uXXXX``
escapes, which read back to the same strings. A dozen lines of our own, since
what to keep (``\\n``, ``\\t``) and how to show the rest is the whole of it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

from thresher.config import Config

__all__ = [
    "add_index_arg",
    "add_config_args",
    "add_setting_flag",
    "SETTING_FLAGS",
    "add_runner_args",
    "add_filter_args",
    "doc_filter",
    "make_runner",
    "load_config",
    "print_json",
    "shorten",
    "terminal_line",
    "terminal_text",
    "live_view",
    "show_progress",
    "warnings_on_stderr",
]


@contextlib.contextmanager
def warnings_on_stderr(logger: str, *, enabled: bool = True) -> Iterator[None]:
    """Show ``logger``'s warnings on stderr (``thresher: message``) for the block's duration.

    The library reports conditions a person should know about (an ingest waiting
    for another one's lock) as warnings; the CLI prints them, one safe line each.
    """
    if not enabled:
        yield
        return

    class _Line(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            print(terminal_line(f"thresher: {record.getMessage()}"), file=sys.stderr, flush=True)

    handler = _Line(logging.WARNING)
    target = logging.getLogger(logger)
    target.addHandler(handler)
    try:
        yield
    finally:
        target.removeHandler(handler)


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


#: the flags that are another name for one ``--set`` key: flag -> (key, metavar)
SETTING_FLAGS: dict[str, tuple[str, str]] = {
    "--budget": ("budget.total", "N"),
    "--wall-time": ("episode.wall_time_s", "S"),
    "--chunk-tokens": ("chunking.max_tokens", "N"),
    "--embedder": ("retrieval.embedder", "NAME"),
    "--limit": ("grep.limit", "N"),
}


class _SetAlias(argparse.Action):
    """Records ``FLAG VALUE`` as ``--set KEY=VALUE`` would, in command-line order."""

    def __init__(self, option_strings: list[str], dest: str, key: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.key = key

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given = [*(getattr(namespace, self.dest, None) or []), f"{self.key}={values}"]
        setattr(namespace, self.dest, given)


def add_setting_flag(parser: argparse.ArgumentParser, flag: str, what: str) -> None:
    """``flag VALUE``: an alias of ``--set KEY=VALUE`` (:data:`SETTING_FLAGS` names the key).

    The value is converted and checked by the config, as a ``--set`` value is; the
    last of the alias and ``--set`` on the command line wins.
    """
    key, metavar = SETTING_FLAGS[flag]
    parser.add_argument(
        flag,
        dest="overrides",
        action=_SetAlias,
        key=key,
        default=argparse.SUPPRESS,
        metavar=metavar,
        help=f"{what}; an alias of --set {key}={metavar}",
    )


def add_filter_args(parser: argparse.ArgumentParser) -> None:
    """``--where JSON`` (Chroma's ``where`` on document metadata) and ``--path GLOB``."""
    parser.add_argument(
        "--where",
        metavar="JSON",
        help='only documents whose metadata match, as Chroma\'s where: \'{"lang": "en"}\', '
        '\'{"year": {"$gte": 2019}}\' (keys: a document\'s own metadata, doc_id, title, source)',
    )
    parser.add_argument(
        "--path",
        metavar="GLOB",
        help="only documents whose id matches the glob ('filings/*', '*.md'; * spans /)",
    )


def doc_filter(args: argparse.Namespace) -> Any:
    """The :class:`thresher.index.filters.DocFilter` of ``--where``/``--path``, or None."""
    from thresher.index.filters import DocFilter

    return DocFilter.parse(getattr(args, "where", None), getattr(args, "path", None))


def add_runner_args(parser: argparse.ArgumentParser, *, workers: bool = True) -> None:
    """``--ray [ADDRESS]`` (and ``--workers N`` unless the command has its own): where jobs run.

    ``--ray`` alone starts a local Ray instance; ``--ray ADDRESS`` joins a cluster.
    Without it, ``--workers`` threads of this process (see :mod:`thresher.batch`).
    """
    if workers:
        parser.add_argument(
            "--workers", type=int, default=1, metavar="N", help="concurrent jobs (threads)"
        )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        type=_ray_address,
        metavar="ADDRESS",
        help="run the jobs on Ray: alone, on a local Ray instance (its CPUs: --workers "
        "when above 1); with ADDRESS (auto, HOST:PORT, ray://HOST:PORT), on that cluster. "
        "Needs pip install 'thresher[ray]'",
    )


def _ray_address(text: str) -> str:
    """``--ray``'s ADDRESS, refusing a file: in ``--ray FILE...`` argparse reads the
    first file as the address."""
    from pathlib import Path

    if text != "local" and Path(text).exists():
        raise argparse.ArgumentTypeError(
            f"{text!r} is a file, not a cluster address; put --ray after the files, "
            "or write --ray=local (or --ray=ADDRESS)"
        )
    return text


def make_runner(args: argparse.Namespace) -> Any:
    """The :class:`thresher.batch.runner.Runner` that ``--workers`` / ``--ray`` ask for."""
    from thresher.batch.factory import make_runner as build

    address = getattr(args, "ray", None)
    return build(getattr(args, "workers", 1), address, quiet=not live_view(args))


def load_config(args: argparse.Namespace) -> Config:
    """The config from ``--config``, then ``--set`` and its aliases (:data:`SETTING_FLAGS`)
    in command-line order."""
    from thresher.errors import ConfigError

    config = Config.load(args.config) if getattr(args, "config", None) else Config()
    overrides: dict[str, Any] = {}
    for item in getattr(args, "overrides", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    return config.override(overrides) if overrides else config


def _visible(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_line(text: str) -> str:
    """``text`` safe to print as one terminal line: every non-printable character
    (newline, ESC, bidi and zero-width characters...) shown as a visible escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _visible(c) for c in text)


def terminal_text(text: str) -> str:
    """Like :func:`terminal_line`, but newlines and tabs are kept (chunk text)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else _visible(c) for c in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def print_json(data: Any) -> None:
    """One JSON document on stdout; non-printable characters as ``\\uXXXX`` escapes.

    Structure is ASCII, so a non-printable character can only be inside a
    string, where the escape is exact: the document reads back unchanged.
    """
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if not text.isprintable():
        text = "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in text)
    sys.stdout.write(text + "\n")


def shorten(text: str, width: int = 160) -> str:
    """One terminal-safe line of at most ``width`` characters (see :func:`terminal_line`)."""
    flat = terminal_line(" ".join(text.split()))
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
