"""A real ``chroma run`` process on a free loopback port, shared by the tests that
need a Chroma server (the store contract, the CLI over a server index)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["free_port", "running_chroma"]


def free_port() -> int:
    """A TCP port nothing listens on right now (on 127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _heartbeat(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).is_success
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def running_chroma(folder: Path) -> Iterator[str]:
    """Run ``chroma run`` on a free loopback port with its data in ``folder``; yield its
    base URL, stop it on exit. Skips the test when no ``chroma`` executable is installed."""
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip(f"no chroma executable next to {sys.executable}")
    port = free_port()
    log = (folder / "server.log").open("wb")
    cmd = [str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(folder)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _heartbeat(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not start: {(folder / 'server.log').read_text()}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
