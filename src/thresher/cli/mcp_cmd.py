"""``thresher mcp --index DIR|URL``: the MCP server (stdio by default, or streamable HTTP).

Tools: ``search`` (a whole episode: ranked documents with justifications and a
trace id) and the raw ``search_corpus``, ``grep_corpus`` and ``read_document``.
Over stdio nothing but the protocol goes to stdout. See ``docs/serving.md``
for Claude Desktop, Cursor and OpenAI Agents SDK configurations.
"""

from __future__ import annotations

import argparse

from thresher.cli.serve_cmd import add_serving_args, settings_from_args

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_serving_args(parser)
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (started by the client, default) or http (streamable HTTP at /mcp)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="http: address (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="http: port (8765)")


def run(args: argparse.Namespace) -> int:
    from thresher.errors import ConfigError
    from thresher.serve.mcp_server import run_mcp
    from thresher.serve.settings import is_loopback

    settings = settings_from_args(args)
    if args.transport == "http" and not is_loopback(args.host):
        raise ConfigError(
            f"--host {args.host}: the MCP HTTP transport has no API key here; serve it on "
            "loopback (the default) and put an authenticating proxy in front for other machines"
        )
    run_mcp(settings, args.transport, args.host, args.port)
    return 0
