"""The connections a server keeps open: idle and header timeouts and a per-client cap.

Both HTTP servers (the API and MCP over HTTP) run on uvicorn through :func:`serve`.
uvicorn times a connection out only after a response (its keep-alive timer), so a
connection that never completes a request head stays open for good, and its
``limit_concurrency`` counts such connections: enough of them and every request is
answered 503. hypercorn closes idle connections and granian has a header-read
timeout, but neither caps connections per client, and either would replace the
server both apps run on. So uvicorn stays, and the HTTP protocol class it makes for
each connection (uvicorn's own, httptools or h11) gets three rules here:

* idle: a connection with nothing received of a request (fresh, or kept alive after
  a response) is closed after ``idle_timeout_s`` (uvicorn's keep-alive timer, also
  armed at connect);
* header: a request head must be complete within ``header_timeout_s`` of its first
  byte, however slowly it trickles;
* cap: a client address holds at most ``max_connections_per_client`` connections;
  past it, that client's oldest connection with no request in progress is closed
  (the new one itself when all the others are mid-request). And while the server
  holds ``max_connections``, the oldest connection of any client with no request in
  progress is closed for a new one: stalled connections never take the capacity a
  request needs, so uvicorn's 503 comes only from connections busy in requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from thresher.serve.settings import ServeSettings

__all__ = ["ConnectionGuard", "guarded_protocol", "serve", "uvicorn_options"]


class _Tracked(Hashable, Protocol):
    def in_request(self) -> bool: ...


C = TypeVar("C", bound=_Tracked)


class ConnectionGuard(Generic[C]):
    """Which open connections to close when one more arrives (pure bookkeeping).

    Args:
        max_connections: the server's connection limit (uvicorn's ``limit_concurrency``).
        max_per_client: the most connections one client address may hold.
    """

    def __init__(self, max_connections: int, max_per_client: int) -> None:
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self._open: dict[C, str] = {}  # in the order they connected
        self._by_client: dict[str, dict[C, None]] = {}

    def admit(self, conn: C, client: str) -> list[C]:
        """Count ``conn`` (just connected from ``client``); the connections to close now,
        ``conn`` itself among them when its client is at the cap and every other
        connection of that client is in a request. The victims are no longer counted."""
        self._open[conn] = client
        mine = self._by_client.setdefault(client, {})
        mine[conn] = None
        victims: list[C] = []
        while len(mine) > self.max_per_client:  # conn is never in a request yet: found
            victim = next(c for c in mine if not c.in_request())
            victims.append(victim)
            self.release(victim)
        while conn in self._open and len(self._open) >= self.max_connections:
            stalled = (c for c in self._open if c is not conn and not c.in_request())
            oldest = next(stalled, None)
            if oldest is None:  # all busy: uvicorn answers this one's request 503
                break
            victims.append(oldest)
            self.release(oldest)
        return victims

    def release(self, conn: C) -> None:
        """Stop counting ``conn`` (closed, or about to be); a second call does nothing."""
        client = self._open.pop(conn, None)
        if client is None:
            return
        mine = self._by_client[client]
        mine.pop(conn, None)
        if not mine:
            del self._by_client[client]

    def open_count(self, client: str | None = None) -> int:
        """Connections counted, all or one client's."""
        if client is None:
            return len(self._open)
        return len(self._by_client.get(client, ()))


class _Guarded:
    """The rules above, mixed into uvicorn's HTTP protocol class (see :func:`guarded_protocol`)."""

    guard: ClassVar[ConnectionGuard[Any]]
    header_timeout_s: ClassVar[float]
    idle_timeout_s: ClassVar[float]
    # set by uvicorn's protocol class
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    cycle: Any
    client: tuple[str, int] | None
    connections: set[Any]
    timeout_keep_alive: float
    timeout_keep_alive_task: asyncio.TimerHandle | None
    timeout_keep_alive_handler: Callable[[], None]
    _head_timer: asyncio.TimerHandle | None = None

    def in_request(self) -> bool:
        """Whether a request's head has arrived and its response is not yet complete."""
        return self.cycle is not None and not self.cycle.response_complete

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        base: Any = super()
        base.connection_made(transport)
        self.timeout_keep_alive = self.idle_timeout_s
        client = self.client[0] if self.client else ""
        for victim in self.guard.admit(self, client):
            victim.close_now()
        if not self.transport.is_closing():  # idle from the start: uvicorn's keep-alive timer
            self.timeout_keep_alive_task = self.loop.call_later(
                self.idle_timeout_s, self.timeout_keep_alive_handler
            )

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and not self.in_request():  # a request head begins
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_late)
        base: Any = super()
        base.data_received(data)
        if self._head_timer is not None and self.in_request():  # the head is complete
            self._head_timer.cancel()
            self._head_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.release(self)
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        base: Any = super()
        base.connection_lost(exc)

    def _head_late(self) -> None:
        self._head_timer = None
        if not self.in_request():
            self.close_now()

    def close_now(self) -> None:
        """Close the connection and stop counting it (uvicorn's count too) at once."""
        self.guard.release(self)
        self.connections.discard(self)
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    settings: ServeSettings, base: type[asyncio.Protocol] | None = None
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class ``base`` (default: uvicorn's choice, httptools when
    installed, else h11) with the rules above, one :class:`ConnectionGuard` shared by the
    connections of one server."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    guard: ConnectionGuard[Any] = ConnectionGuard(
        settings.max_connections, settings.max_connections_per_client
    )
    attributes = {
        "guard": guard,
        "header_timeout_s": settings.header_timeout_s,
        "idle_timeout_s": settings.idle_timeout_s,
    }
    return type("GuardedHTTPProtocol", (_Guarded, base), attributes)


def uvicorn_options(
    settings: ServeSettings, base: type[asyncio.Protocol] | None = None
) -> dict[str, Any]:
    """The ``uvicorn.run`` / ``uvicorn.Config`` options holding ``settings``' connection limits
    (``base``: as for :func:`guarded_protocol`)."""
    return {
        "http": guarded_protocol(settings, base),
        "ws": "none",  # neither server speaks WebSocket
        "limit_concurrency": settings.max_connections,
        "log_level": "warning",
    }


def serve(app: Any, host: str, port: int, settings: ServeSettings, **options: Any) -> None:
    """Run the ASGI ``app`` under uvicorn on ``host:port`` with ``settings``' connection
    limits (``max_connections``: 503 past it; the timeouts and cap above) until stopped.

    ``options`` go to ``uvicorn.run`` (e.g. ``timeout_graceful_shutdown``).
    """
    import uvicorn

    uvicorn.run(app, host=host, port=port, **uvicorn_options(settings), **options)
