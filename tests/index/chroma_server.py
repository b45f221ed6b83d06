"""A real ``chroma run`` process on a free loopback port, shared by the tests that
need a Chroma server (the store contract, the CLI over a server index, the fault
and kill tests, the kill bench).

:func:`running_chroma` runs a server for the length of a ``with`` block (skipping
the test when no ``chroma`` executable is installed); :class:`ChromaProcess` is
the process itself, for tests that SIGKILL it mid-episode or start it again on
the same port and data. Loopback only.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

__all__ = ["ChromaProcess", "chroma_executable", "free_port", "running_chroma"]


def free_port() -> int:
    """A TCP port nothing listens on right now (on 127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def chroma_executable() -> Path | None:
    """The ``chroma`` script next to this Python, or None."""
    path = Path(sys.executable).with_name("chroma")
    return path if path.exists() else None


def _answers(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).is_success
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def running_chroma(folder: Path) -> Iterator[str]:
    """Run ``chroma run`` on a free loopback port with its data in ``folder``; yield its
    base URL, stop it on exit. Skips the test when no ``chroma`` executable is installed."""
    import pytest

    if chroma_executable() is None:
        pytest.skip(f"no chroma executable next to {sys.executable}")
    chroma = ChromaProcess(folder, timeout_s=60.0)
    try:
        chroma.start()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield chroma.url
    finally:
        chroma.stop()


class ChromaProcess:
    """``chroma run`` on a fixed loopback port with its data in ``folder``.

    ``start()`` waits (at most ``timeout_s``) until the server answers;
    ``kill()`` sends SIGKILL and waits for the process to be gone; ``restart()``
    starts it again on the same port and data. Use as a context manager.
    """

    def __init__(self, folder: Path, port: int | None = None, timeout_s: float = 90.0) -> None:
        self.folder = Path(folder)
        self.port = port or free_port()
        self.timeout_s = timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ChromaProcess:
        """Start the server and wait until it answers. Raises ``RuntimeError`` if it does not."""
        exe = chroma_executable()
        if exe is None:
            raise RuntimeError(f"no chroma executable next to {sys.executable}")
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "server.log").open("ab")
        cmd = [str(exe), "run", "--host", "127.0.0.1", "--port", str(self.port)]
        self._proc = subprocess.Popen(
            [*cmd, "--path", str(self.folder)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        deadline = time.monotonic() + self.timeout_s
        while not _answers(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                text = (self.folder / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"chroma run did not start: {text}")
            time.sleep(0.2)
        return self

    def kill(self) -> None:
        """SIGKILL the server (idempotent) and wait until it is gone."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

    def restart(self) -> ChromaProcess:
        """Kill (if running) and start again on the same port and data."""
        self.kill()
        return self.start()

    def stop(self) -> None:
        """Terminate gracefully, then kill."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        self.kill()

    def __enter__(self) -> ChromaProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
