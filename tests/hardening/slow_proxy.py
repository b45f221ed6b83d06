"""A loopback TCP relay that can hold every request back: a slow network in front of a server.

Written with asyncio (one event loop on a daemon thread) because the fault tests
need exactly this and no more: listen on 127.0.0.1, relay bytes both ways, and
wait ``delay_s`` before forwarding each chunk a client sends. Proxies such as
toxiproxy are separate binaries, not PyPI packages.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType

__all__ = ["SlowProxy"]


class SlowProxy:
    """Relay ``127.0.0.1:<port>`` to ``127.0.0.1:<target_port>``; ``delay_s`` may change live."""

    def __init__(self, target_port: int, delay_s: float = 0.0) -> None:
        self.target_port = target_port
        self.delay_s = delay_s
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slow: bool
    ) -> None:
        try:
            while data := await reader.read(65536):
                if slow and self.delay_s:
                    await asyncio.sleep(self.delay_s)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            self._pipe(reader, up_writer, slow=True), self._pipe(up_reader, writer, slow=False)
        )

    def start(self) -> SlowProxy:
        """Listen on a free loopback port."""
        self._thread.start()

        async def serve() -> asyncio.Server:
            return await asyncio.start_server(self._handle, "127.0.0.1", 0)

        self._server = asyncio.run_coroutine_threadsafe(serve(), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        """Close the listener and stop the loop."""
        if self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> SlowProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
