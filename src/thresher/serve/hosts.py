"""DNS rebinding: the API answers only the ``Host`` names (and browser ``Origin``s) it is
served under.

A web page on another site can make a browser send requests to
``127.0.0.1:8080`` under its own host name (DNS rebinding); a server that
answers any ``Host`` then runs episodes and hands over traces to that page.
:class:`HostGuard` refuses a request whose ``Host`` is not the bound address
(and, for a loopback bind, ``localhost``/``127.0.0.1``/``[::1]``) or one of the
``--allowed-host`` names with 421, and a request whose ``Origin`` (sent by
browsers) is not one of theirs with 403: the checks and answers of the MCP SDK's
HTTP transport, whose :class:`~mcp.server.transport_security.TransportSecurityMiddleware`
does the matching.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from thresher.serve.limits import ASGIApp, Receive, Scope, Send
from thresher.serve.settings import is_loopback

__all__ = ["HostGuard", "allowed_names"]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _bracketed(host: str) -> str:
    try:
        return f"[{host}]" if ipaddress.ip_address(host.strip("[]")).version == 6 else host
    except ValueError:
        return host


def allowed_names(host: str, port: int, extra: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """``(hosts, origins)`` a server bound to ``host:port`` answers.

    Args:
        host: the bound address. A loopback bind answers every loopback name; a
            wildcard bind (``0.0.0.0``, ``::``) answers loopback names and ``extra``,
            or every host when ``extra`` is empty (such a bind needs an API key).
        port: the bound port.
        extra: more names (``--allowed-host``), each ``NAME`` or ``NAME:PORT``
            (``NAME`` alone: any port); ``*`` answers every host.

    Returns:
        Host patterns and Origin patterns in the MCP SDK's form (``name:*`` = any port).
    """
    if host in ("0.0.0.0", "::", "[::]", "") and not extra:
        return ["*"], ["*"]  # any address: the API key (required there) guards it
    names = [_bracketed(host)]
    if is_loopback(host) or host in ("0.0.0.0", "::", "[::]", ""):
        names = list(_LOOPBACK_NAMES)
    hosts = [f"{n}:{port}" for n in names]
    hosts += [n for n in names if port == 80]
    for item in extra:
        hosts += [item] if ":" in item.rsplit("]", 1)[-1] else [item, f"{item}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return hosts, origins


class HostGuard:
    """Refuse a request whose ``Host`` (421) or ``Origin`` (403) is not the server's own.

    Args:
        app: the application behind it.
        hosts, origins: what :func:`allowed_names` returns; ``*`` in ``hosts``
            turns the check off.
    """

    def __init__(self, app: ASGIApp, hosts: list[str], origins: list[str]) -> None:
        from mcp.server.transport_security import (
            TransportSecurityMiddleware,
            TransportSecuritySettings,
        )

        self.app = app
        self.off = "*" in hosts
        self.check = TransportSecurityMiddleware(
            TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.off or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request

        refused = await self.check.validate_request(Request(scope), is_post=False)
        if refused is None:
            await self.app(scope, receive, send)
            return
        word = "Host" if refused.status_code == 421 else "Origin"
        from starlette.responses import JSONResponse

        reply = JSONResponse(
            {
                "error": "misdirected_request" if word == "Host" else "forbidden_origin",
                "message": f"this server does not answer this {word} header (DNS rebinding "
                "protection); call it by its own address, or start it with --allowed-host NAME",
            },
            status_code=refused.status_code,
        )
        await reply(scope, receive, send)
