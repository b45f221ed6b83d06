"""``thresher serve --index DIR|URL``: the HTTP API (``POST /search`` streamed as SSE).

Listens on 127.0.0.1:8080 by default. Binding another address needs an API key
(``THRESHER_API_KEY``) or an explicit ``--no-key``. See ``docs/serving.md``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from thresher.cli._common import add_config_args, add_index_arg, add_setting_flag, load_config

if TYPE_CHECKING:
    from thresher.serve.settings import ServeSettings

__all__ = ["add_arguments", "run", "add_serving_args", "settings_from_args"]


def add_serving_args(parser: argparse.ArgumentParser) -> None:
    """What the HTTP and MCP servers share: the indexes, the policies and the limits."""
    add_index_arg(parser)
    parser.add_argument(
        "--name", metavar="NAME", help="the --index collection's name (default: its folder's name)"
    )
    parser.add_argument(
        "--collection",
        action="append",
        default=[],
        metavar="NAME=DIR|URL",
        help="serve another index under a collection name (repeatable)",
    )
    parser.add_argument("--policy", default="local", help="the default policy (default: local)")
    parser.add_argument(
        "--policies",
        default="",
        metavar="A,B",
        help="other policies a request may choose with its 'policy' or 'model' field",
    )
    parser.add_argument("--max-concurrent", type=int, default=4, help="episodes at once (4)")
    parser.add_argument("--max-queued", type=int, default=16, help="requests waiting (16)")
    parser.add_argument(
        "--queue-timeout", type=float, default=30.0, help="longest wait for a slot, s (30)"
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=64 * 1024, help="largest request body (65536)"
    )
    parser.add_argument(
        "--max-question-chars", type=int, default=4000, help="longest question (4000)"
    )
    parser.add_argument(
        "--max-retrieve-queries",
        type=int,
        default=64,
        help="most queries in one POST /retrieve (64)",
    )
    parser.add_argument(
        "--max-retrieve-topk", type=int, default=50, help="most topk of POST /retrieve (50)"
    )
    add_setting_flag(parser, "--wall-time", "per-episode wall time cap, s (300)")
    parser.add_argument(
        "--trace-dir", metavar="DIR", help="also write every trace to DIR/<id>.jsonl"
    )
    parser.add_argument(
        "--max-traces", type=int, default=256, help="finished traces kept in memory (256)"
    )
    parser.add_argument(
        "--trace-dir-max-files",
        type=int,
        default=10_000,
        help="most traces kept in --trace-dir; the oldest are deleted (10000)",
    )
    parser.add_argument(
        "--trace-dir-max-mb",
        type=float,
        default=1024.0,
        help="most megabytes of traces kept in --trace-dir; the oldest are deleted (1024)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=10.0,
        help="longest time a request body may take to arrive, s (10; 408 past it)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=128,
        help="open connections at once (128; 503 past it, once connections with no "
        "request in progress have been closed to make room)",
    )
    parser.add_argument(
        "--max-connections-per-client",
        type=int,
        default=32,
        help="open connections from one client address (32; past it that client's oldest "
        "connection with no request in progress is closed)",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=5.0,
        help="longest time a request's headers may take to arrive, s (5; closed past it)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=5.0,
        help="longest time a connection may stay open sending no request, s (5; closed past it)",
    )
    add_config_args(parser)


def settings_from_args(args: argparse.Namespace) -> ServeSettings:
    """The :class:`~thresher.serve.settings.ServeSettings` the arguments describe."""
    from thresher.errors import ConfigError
    from thresher.serve.settings import ServeSettings, collection_name_for

    collections = {args.name or collection_name_for(args.index): args.index}
    for item in args.collection:
        name, sep, location = item.partition("=")
        if not sep or not name.strip() or not location.strip():
            raise ConfigError(f"--collection expects NAME=DIR|URL, got '{item}'")
        collections[name.strip()] = location.strip()
    config = load_config(args)
    return ServeSettings(
        collections=collections,
        policy=args.policy,
        policies=tuple(p.strip() for p in args.policies.split(",") if p.strip()),
        config=config,
        max_concurrent=args.max_concurrent,
        max_queued=args.max_queued,
        queue_timeout_s=args.queue_timeout,
        max_body_bytes=args.max_body_bytes,
        max_question_chars=args.max_question_chars,
        api_key=ServeSettings.key_from_env(),
        max_traces=args.max_traces,
        trace_dir=args.trace_dir,
        body_timeout_s=args.body_timeout,
        max_connections=args.max_connections,
        max_connections_per_client=args.max_connections_per_client,
        header_timeout_s=args.header_timeout,
        idle_timeout_s=args.idle_timeout,
        trace_dir_max_files=args.trace_dir_max_files,
        trace_dir_max_bytes=int(args.trace_dir_max_mb * 1024 * 1024),
        max_retrieve_queries=args.max_retrieve_queries,
        max_retrieve_topk=args.max_retrieve_topk,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_serving_args(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (8080)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another Host name clients may call the server by (repeatable; '*': any). "
        "Other names are refused, 421 (DNS rebinding)",
    )
    parser.add_argument(
        "--no-key",
        action="store_true",
        help="allow a non-loopback --host without THRESHER_API_KEY (anyone who can reach it "
        "can run episodes)",
    )


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from thresher.errors import ConfigError
    from thresher.serve.app import run_http
    from thresher.serve.settings import API_KEY_ENV, is_loopback

    settings = replace(settings_from_args(args), allowed_hosts=tuple(args.allowed_host))
    if not is_loopback(args.host) and not settings.api_key and not args.no_key:
        raise ConfigError(
            f"--host {args.host} is reachable from other machines: set {API_KEY_ENV} (clients "
            "send it as 'Authorization: Bearer KEY'), or pass --no-key to serve without one"
        )
    from thresher.index.backends import check_location

    for location in settings.collections.values():
        check_location(location)  # a missing index fails before the banner
    names = ", ".join(f"{n}={loc}" for n, loc in settings.collections.items())

    def ready() -> None:  # printed once the indexes are open and warmed up
        print(
            f"thresher serve: http://{args.host}:{args.port} · POST /search · collections "
            f"{names} · policy {settings.policy}"
            + (" · API key required" if settings.api_key else ""),
            file=sys.stderr,
            flush=True,
        )

    run_http(settings, args.host, args.port, on_ready=ready)
    return 0
