"""Two ASGI guards in front of the API: the API key (401) and the request body (413, 408).

Both are plain ASGI wrappers so they act before FastAPI parses anything: a
request without the key is refused before its body is read, and a body is
read at most ``max_body_bytes`` far (declared ``Content-Length`` or not)
before it is refused, and a body must arrive whole within ``timeout_s`` (408 and
the connection closed past it: a slow trickle cannot hold a connection open).
Written here because Starlette ships neither: its
middleware covers CORS, GZip, hosts and sessions, and uvicorn bounds header
sizes, not bodies.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["ApiKeyGuard", "BodyLimit", "OPEN_PATHS", "key_of"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: paths served without the key: liveness and the API's schema
OPEN_PATHS = frozenset({"/healthz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})


async def _reply(send: Send, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
    raw = json.dumps(body).encode()
    items = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    items += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": items})
    await send({"type": "http.response.body", "body": raw})


def key_of(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The key a request sends, as the bytes on the wire: ``Authorization: Bearer KEY``,
    ``X-API-Key`` or ``X-Chroma-Token`` (a UTF-8 key arrives as its UTF-8 bytes)."""
    found = {k.lower(): v for k, v in headers}
    auth = found.get(b"authorization", b"")
    if auth[:7].lower() == b"bearer ":
        return auth[7:].strip()
    return found.get(b"x-api-key") or found.get(b"x-chroma-token")


class ApiKeyGuard:
    """Refuse (401) every HTTP request but :data:`OPEN_PATHS` that lacks the right key.

    Args:
        app: the application behind it.
        key: the key every request must send (compared in constant time).
    """

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode("utf-8", "surrogateescape")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        sent = key_of(scope.get("headers") or [])
        if sent is None or not hmac.compare_digest(sent, self.key):
            await _reply(
                send,
                401,
                {
                    "error": "unauthorized",
                    "message": "send this server's key as 'Authorization: Bearer KEY' "
                    "(the THRESHER_API_KEY it was started with)",
                },
                {"WWW-Authenticate": "Bearer"},
            )
            return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse (413) a request whose body is over ``max_bytes``, reading no more than that.

    The body is read here (it is small by construction) and handed to the app
    as one message; later ``receive`` calls go to the server, so a streaming
    response still hears the client disconnect.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float = 10.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, int(declared))
            return
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        while True:
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(left, 0.001))
            except TimeoutError:  # a body trickled in (or stalled): drop the connection
                await _reply(
                    send,
                    408,
                    {
                        "error": "request_timeout",
                        "message": f"the request body did not arrive within {self.timeout_s:g} s; "
                        "send the whole body at once",
                    },
                    {"Connection": "close"},
                )
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send, size)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, size: int) -> None:
        await _reply(
            send,
            413,
            {
                "error": "request_too_large",
                "message": f"the request body has {size}+ bytes, over this server's limit of "
                f"{self.max_bytes}; send a smaller request",
            },
            {"Connection": "close"},
        )
