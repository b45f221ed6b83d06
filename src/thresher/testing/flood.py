"""A connection flood against a loopback HTTP server: idle and slow-header sockets.

``idle`` sockets connect and send nothing; ``slow`` sockets send a request line
and then one header line every ``every_s`` seconds, never the blank line that
ends a request head. :meth:`Flood.still_open` then tells how many the server has
not closed. Used by the connection tests and ``bench/bench_connections.py``; a
bounded number of sockets, and the trickle stops when the flood is closed.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from types import TracebackType

__all__ = ["Flood"]


class Flood:
    """Open ``idle`` + ``slow`` connections to ``host:port`` (a context manager).

    Args:
        host, port: the server.
        idle: connections that send nothing.
        slow: connections that trickle a request head, one header line per ``every_s``.
        every_s: seconds between header lines.
        source: the local address to connect from (another loopback address is
            another client to the server).
    """

    def __init__(
        self,
        host: str,
        port: int,
        idle: int = 200,
        slow: int = 200,
        every_s: float = 1.0,
        source: str | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.idle_count, self.slow_count = idle, slow
        self.every_s = every_s
        self.source = source
        self.idle: list[socket.socket] = []
        self.slow: list[socket.socket] = []
        self._stop = threading.Event()
        self._trickle: threading.Thread | None = None

    def _connect(self) -> socket.socket:
        source = (self.source, 0) if self.source else None
        return socket.create_connection((self.host, self.port), timeout=10, source_address=source)

    def __enter__(self) -> Flood:
        try:
            self.idle = [self._connect() for _ in range(self.idle_count)]
            for _ in range(self.slow_count):
                sock = self._connect()
                self.slow.append(sock)
                head = f"GET /healthz HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                with contextlib.suppress(OSError):  # already closed by the server
                    sock.sendall(head.encode())
        except BaseException:
            self.close()
            raise
        self._trickle = threading.Thread(target=self._trickle_heads, daemon=True)
        self._trickle.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _trickle_heads(self) -> None:
        alive = list(self.slow)
        line = 0
        while alive and not self._stop.wait(self.every_s):
            line += 1
            for sock in list(alive):
                try:
                    sock.send(f"X-Slow-{line}: 1\r\n".encode())
                except OSError:  # closed by the server (or by us)
                    alive.remove(sock)

    def still_open(self, within_s: float) -> int:
        """Wait up to ``within_s`` for the server to close every flood connection; how many
        it has not closed by then (what a server sent before closing is read and dropped)."""
        waiting = {s for s in [*self.idle, *self.slow] if s.fileno() != -1}
        deadline = time.monotonic() + within_s
        with selectors.DefaultSelector() as selector:
            for sock in waiting:
                selector.register(sock, selectors.EVENT_READ, sock)
            while waiting:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                for key, _ in selector.select(min(left, 1.0)):
                    conn: socket.socket = key.data
                    try:
                        closed = conn.recv(65536) == b""
                    except (ConnectionResetError, TimeoutError):
                        closed = True
                    if closed:
                        selector.unregister(conn)
                        waiting.discard(conn)
        return len(waiting)

    def close(self) -> None:
        """Stop the trickle and close every socket (idempotent)."""
        self._stop.set()
        if self._trickle is not None:
            self._trickle.join(timeout=10)
        for sock in [*self.idle, *self.slow]:
            sock.close()
