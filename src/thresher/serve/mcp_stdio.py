"""MCP over stdio, with every malformed line answered by a JSON-RPC error.

The SDK's stdio transport drops a line it cannot read (not JSON, a batch, an id
that is an object, no ``jsonrpc``, params that are not an object): the client
then waits for its own timeout. Here each line is screened before the SDK sees it
(:func:`screen`), and a line refused is answered on the spot, per JSON-RPC 2.0:
``-32700`` (not UTF-8, not JSON, nested past the parser), ``-32600`` (not a
request: a batch, a bad ``id``/``jsonrpc``/``method``, nested deeper than
:data:`MAX_DEPTH`, longer than the line cap), ``-32602`` (params not an object, or
holding a lone surrogate, text no reply could carry). The reply's ``id`` is the
request's when it could be read, else ``null``. Lines that pass go to the SDK's own
:func:`mcp.server.stdio.stdio_server`, given our streams; both writers share one
lock, so a reply is never torn.

As the SDK does, fd 0 and 1 are pointed at the null device and stderr while
serving (stray output of a library never reaches the wire) and restored after.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

from thresher.corpus.sanitize import has_surrogate

__all__ = [
    "MAX_DEPTH",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "INVALID_PARAMS",
    "screen",
    "serve_stdio",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
#: the deepest nesting a message may have (MCP requests are a few levels deep)
MAX_DEPTH = 64


def _error(rid: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _depth_and_surrogate(value: Any) -> tuple[int, bool]:
    """The nesting depth of a parsed JSON value and whether any key or string in it
    holds a lone surrogate (iterative: a value nested past the recursion limit
    never reaches here, the parser refuses it)."""
    deepest, surrogate = 0, False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth)
            for k, v in item.items():
                surrogate = surrogate or has_surrogate(k)
                stack.append((v, depth + 1))
        elif isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str):
            surrogate = surrogate or has_surrogate(item)
    return deepest, surrogate


def screen(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error reply a line gets, or None when the SDK may read it.

    Blank lines and malformed notifications (a valid ``method``, no ``id``: nothing
    may answer them) also return None; the SDK drops what it cannot read.
    """
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _error(None, PARSE_ERROR, "Parse error: the message is not UTF-8")
    if not text.strip():
        return None
    try:
        message = json.loads(text)
    except RecursionError:
        return _error(None, PARSE_ERROR, "Parse error: JSON nested too deeply")
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: not JSON ({exc})")
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "Invalid request: batches are not supported")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid request: a message is a JSON object")
    rid = message.get("id")
    good_id = (isinstance(rid, str) and not has_surrogate(rid)) or (
        isinstance(rid, int) and not isinstance(rid, bool)
    )
    if "id" in message and not good_id:
        return _error(None, INVALID_REQUEST, "Invalid request: id must be a string or an integer")
    reply_id = rid if good_id else None
    if message.get("jsonrpc") != "2.0":
        return _error(reply_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
    depth, surrogate = _depth_and_surrogate(message)
    if depth > MAX_DEPTH:
        return _error(reply_id, INVALID_REQUEST, f"Invalid request: nested deeper than {MAX_DEPTH}")
    method = message.get("method")
    if "method" in message and (not isinstance(method, str) or has_surrogate(method)):
        return _error(reply_id, INVALID_REQUEST, 'Invalid request: "method" must be a string')
    if "method" in message:
        params = message.get("params", {})
        problem = None
        if not isinstance(params, dict):
            problem = "Invalid params: params must be an object"
        elif surrogate:
            problem = "Invalid params: text holds a lone surrogate (not valid Unicode)"
        if problem is not None:
            return None if reply_id is None else _error(reply_id, INVALID_PARAMS, problem)
    elif surrogate:
        return _error(reply_id, INVALID_REQUEST, "Invalid request: holds a lone surrogate")
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        if reply_id is None and "method" in message:
            return None  # a notification: nothing may answer it
        return _error(reply_id, INVALID_REQUEST, "Invalid request: not a JSON-RPC message")
    return None


class _Wire:
    """The private copies of stdin and stdout the transport reads and writes."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, max_line: int) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.max_line = max_line
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        """Write one whole line (the SDK writes ``json + "\\n"`` per call)."""
        data = text.encode("utf-8", errors="replace")
        async with self.lock:
            await anyio.to_thread.run_sync(self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        self.stdout.write(data)
        self.stdout.flush()

    async def flush(self) -> None:
        """Every write is flushed already."""

    def _readline(self) -> tuple[bytes, bool]:
        """One line (b"" at end of input) and whether it was cut at the line cap (the
        rest of it is read and dropped)."""
        line = self.stdin.readline(self.max_line + 1)
        if len(line) <= self.max_line or line.endswith(b"\n"):
            return line, False
        while line and not line.endswith(b"\n"):
            line = self.stdin.readline(self.max_line + 1)
        return b"", True

    async def lines(self) -> AsyncIterator[str]:
        """The lines the SDK may read; every other one is answered here."""
        while True:
            line, cut = await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
            if cut:
                message = f"Invalid request: a message is at most {self.max_line} bytes"
                await self.write(json.dumps(_error(None, INVALID_REQUEST, message)) + "\n")
                continue
            if not line:
                return
            reply = screen(line)
            if reply is not None:
                await self.write(json.dumps(reply) + "\n")
            else:
                yield line.decode("utf-8")


async def serve_stdio(server: Any, max_line: int) -> None:
    """Serve ``server`` (an SDK ``MCPServer``) over this process's stdin and stdout
    until the client closes stdin; lines longer than ``max_line`` bytes are refused."""
    from mcp.server.stdio import stdio_server

    lowlevel = getattr(server, "_lowlevel_server", None)  # what the SDK's run_stdio_async runs
    if lowlevel is None:  # another SDK layout: its own transport, unscreened
        await server.run_stdio_async()
        return
    private_in, private_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    sys.stdout.flush()
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    try:
        with (
            os.fdopen(private_in, "rb", closefd=False) as raw_in,
            os.fdopen(private_out, "wb", closefd=False) as raw_out,
        ):
            wire = _Wire(raw_in, raw_out, max_line)
            async with stdio_server(wire.lines(), wire) as (read, write):  # type: ignore[arg-type]
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
    finally:
        os.dup2(private_in, 0)
        os.dup2(private_out, 1)
        os.close(private_in)
        os.close(private_out)
