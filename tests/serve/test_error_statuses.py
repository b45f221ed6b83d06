"""Every thresher error reaches a client the way its class says: the HTTP API's status,
body and headers, and the MCP server's tool error, for every error class there is.

The expected answers are the table the API has always given (written out here, not
read from the error classes): a full queue 429 with ``Retry-After``, a question too
large 413, a ``/retrieve`` batch over the limits 413, an unknown collection 404, any other input or config error 400, anything
else 503; an MCP client gets the message (and, when busy, when to retry).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import anyio
import pytest

import thresher
from thresher.corpus.sanitize import safe_json
from thresher.errors import ConfigError, InputError, ThresherError

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

MESSAGE = "refused: <b>ü</b> \u2028 what to do next"


def _all_error_classes() -> list[type[ThresherError]]:
    """Every ThresherError subclass defined in the package (each module imported)."""
    for info in pkgutil.walk_packages(thresher.__path__, "thresher."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
    seen: dict[str, type[ThresherError]] = {}
    todo: list[type[ThresherError]] = [ThresherError]
    while todo:
        cls = todo.pop()
        seen.setdefault(f"{cls.__module__}.{cls.__qualname__}", cls)
        todo.extend(cls.__subclasses__())
    return [seen[k] for k in sorted(seen)]


def _make(cls: type[ThresherError]) -> ThresherError:
    for args in ((MESSAGE,), (MESSAGE, 7), (MESSAGE, "doc-1")):
        try:
            error = cls(*args)
        except TypeError:
            continue
        if str(error) == MESSAGE:
            return error
    raise AssertionError(f"cannot build {cls.__name__} with a message")


def _expected_http(error: ThresherError) -> tuple[int, str, dict[str, str]]:
    from thresher.serve.gate import Busy
    from thresher.serve.retrieve import TooManyQueries
    from thresher.serve.service import TooLarge
    from thresher.serve.settings import UnknownCollection

    if isinstance(error, Busy):
        return 429, "busy", {"retry-after": str(error.retry_after)}
    if isinstance(error, TooLarge):
        return 413, "question_too_large", {}
    if isinstance(error, TooManyQueries):
        return 413, "batch_too_large", {}
    if isinstance(error, UnknownCollection):
        return 404, "unknown_collection", {}
    if isinstance(error, InputError | ConfigError):
        return 400, "bad_request", {}
    return 503, "unavailable", {}


def _expected_tool_message(error: ThresherError) -> str:
    from thresher.serve.gate import Busy

    return f"{MESSAGE} (retry in {error.retry_after} s)" if isinstance(error, Busy) else MESSAGE


class _RefusingService:
    """A search service whose every way in raises ``error``."""

    def __init__(self, settings: Any, error: ThresherError) -> None:
        from thresher.serve.gate import EpisodeGate

        self.settings = settings
        self.error = error
        self.gate = _RefusingGate(error, EpisodeGate(1, 0, 1.0))

    async def start(self, *_: Any) -> Any:
        raise self.error

    async def search(self, *_: Any) -> Any:
        raise self.error

    def open_all(self) -> None: ...

    def close(self) -> None: ...


class _RefusingGate:
    def __init__(self, error: ThresherError, gate: Any) -> None:
        self.error, self.gate = error, gate

    async def acquire(self) -> None:
        raise self.error

    def release(self, *_: Any) -> None:
        raise AssertionError("nothing was acquired")


ERRORS = _all_error_classes()


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_class_answers_http_with_its_status_and_body(cls, tmp_path) -> None:
    from fastapi.testclient import TestClient

    from thresher.serve.app import create_app
    from thresher.serve.settings import ServeSettings

    error = _make(cls)
    settings = ServeSettings({"idx": str(tmp_path)})
    client = TestClient(create_app(settings, _RefusingService(settings, error)))  # type: ignore[arg-type]
    response = client.post("/search", json={"query": "where?"})
    status, code, headers = _expected_http(error)
    assert response.status_code == status
    assert response.content == safe_json({"error": code, "message": MESSAGE}).encode("utf-8")
    for name, value in headers.items():
        assert response.headers[name] == value
    assert "retry-after" in response.headers or not headers


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_class_is_one_mcp_tool_error(cls, tmp_path) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from thresher.serve.mcp_server import build_mcp_server
    from thresher.serve.settings import ServeSettings

    error = _make(cls)
    settings = ServeSettings({"idx": str(tmp_path)})
    server = build_mcp_server(_RefusingService(settings, error))

    async def said(name: str, arguments: dict[str, Any]) -> str:
        with pytest.raises(ToolError) as info:
            await server.call_tool(name, arguments)
        return str(info.value)

    async def scenario() -> list[str]:
        return [
            await said("search", {"question": "where?"}),  # the whole episode
            await said("search_corpus", {"query": "where?"}),  # a raw tool, at its slot
        ]

    prefix = "Error executing tool {}: "  # the SDK's own wording around the tool's message
    assert anyio.run(scenario) == [
        prefix.format(name) + _expected_tool_message(error) for name in ("search", "search_corpus")
    ]
