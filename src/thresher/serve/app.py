"""The HTTP API: ``POST /search`` streamed as server-sent events, traces and their viewer.

Routes (the schema is served at ``/openapi.json``):

* ``POST /search`` ``{query, collection_name?, policy?|model?, config?}``: runs one
  episode. By default (and with ``Accept: text/event-stream``) it streams the
  episode as ``action`` / ``observation`` / ``done`` / ``error`` events
  (:mod:`thresher.serve.events`); with ``Accept: application/json`` it returns the
  Result as one JSON object. Either way the trace id is in the
  ``X-Thresher-Trace-Id`` header.
* ``GET /traces/{id}``: the episode's trace as JSONL (a running episode's so far).
* ``GET /traces/{id}/view``: the trace viewer page for it.
* ``POST /retrieve`` ``{queries, topk?, return_scores?, collection_name?}``: one hybrid
  search per query, answered ``{"result": [[...], ...]}`` in the shape of Search-R1's
  retriever server (:mod:`thresher.serve.retrieve`), for RL trainers that call one.
* ``GET /healthz``: collections, policies, and episodes running and waiting.

Limits: episodes at once with a bounded queue (429 with ``Retry-After`` past
it), request body and question size (413), the per-episode wall time (the
server's ``episode.wall_time_s``, which a request may only lower), and an
optional API key (401). A client that disconnects stops its episode.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from thresher._version import __version__
from thresher.corpus.sanitize import safe_json
from thresher.errors import ThresherError
from thresher.harness.result import Result
from thresher.serve.events import EventMapper, SseEvent, answer_text, terminal_event
from thresher.serve.hosts import HostGuard, allowed_names
from thresher.serve.limits import ApiKeyGuard, BodyLimit
from thresher.serve.retrieve import RetrieveRequest
from thresher.serve.service import RunningEpisode, SearchService
from thresher.serve.settings import ServeSettings, request_extras

__all__ = [
    "SearchRequest",
    "create_app",
    "error_response",
    "run_http",
    "TRACE_HEADER",
    "wants_json",
]

#: the response header naming the episode's trace id
TRACE_HEADER = "X-Thresher-Trace-Id"
#: how often a JSON request checks that its client is still there (seconds)
_WATCH_S = 0.2


class SearchRequest(BaseModel):
    """The body of ``POST /search`` (fields Chroma's search agent API takes, plus ``policy``)."""

    model_config = ConfigDict(extra="ignore")

    query: str = Field(description="the question to find supporting documents for")
    collection_name: str | None = Field(
        default=None, description="the collection (index) to search; default: the server's first"
    )
    model: str | None = Field(
        default=None, description="the policy to run (Chroma's field name; same as policy)"
    )
    policy: str | None = Field(default=None, description="the policy to run; default: the server's")
    config: dict[str, Any] | None = Field(
        default=None,
        description="settings to tighten for this episode: budget.*, episode.*, "
        "retrieval.mode/candidates/rrf_k/where/path, grep.limit (never above the server's caps)",
    )
    k: int | None = Field(
        default=None,
        ge=1,
        validation_alias=AliasChoices("k", "n_results"),
        description="how many documents to return (episode.k; n_results accepted too); "
        "at most the server's episode.max_final_documents",
    )

    where: dict[str, Any] | None = Field(
        default=None,
        description="only documents whose metadata match, as Chroma's where "
        '({"lang": "en"}, {"year": {"$gte": 2019}}); retrieval.where',
    )
    path: str | None = Field(
        default=None, description="only documents whose id matches this glob; retrieval.path"
    )

    def overrides(self) -> dict[str, Any] | None:
        """``config`` with ``k`` as ``episode.k`` and the filter as ``retrieval.where/path``."""
        extra = request_extras(self.k, self.where, self.path)
        return {**(self.config or {}), **extra} if extra else self.config


def wants_json(accept: str) -> bool:
    """JSON when the client asks for it and not for an event stream (the default is SSE)."""
    accept = accept.lower()
    return "application/json" in accept and "text/event-stream" not in accept


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return _SafeJSON({"error": code, "message": message}, status_code=status, headers=headers)


def error_response(exc: ThresherError) -> Response:
    """The HTTP answer to a refused request: ``{"error": exc.code, "message": ...}`` with
    ``exc.http_status`` and ``exc.http_headers()``."""
    return _error(exc.http_status, exc.code, str(exc), exc.http_headers() or None)


def _sse(event: SseEvent) -> ServerSentEvent:
    return ServerSentEvent(data=safe_json(event.data), event=event.event, id=event.id)


class _SafeJSON(JSONResponse):
    """A JSON response that can always be encoded (see :func:`safe_json`)."""

    def render(self, content: Any) -> bytes:
        return safe_json(content).encode("utf-8")


async def _stream(episode: RunningEpisode) -> AsyncIterator[ServerSentEvent]:
    """The episode's events as SSE, read from its stream as they are applied; stopping this
    stream (the client gone) ends the episode."""
    mapper = EventMapper()
    try:
        async with contextlib.aclosing(episode.events()) as events:
            async for item in events:
                for event in mapper.map(item):
                    yield _sse(event)
    except ThresherError as exc:
        data = {"trace_id": episode.trace_id, "code": "server_error", "message": str(exc)}
        yield _sse(SseEvent("error", data))
        return
    finally:
        episode.leave()
    result = episode.outcome
    if result is None:  # cannot happen once the stream is read out; said, not hidden
        data = {"trace_id": episode.trace_id, "code": "server_error", "message": "no result"}
        yield _sse(SseEvent("error", data))
        return
    yield _sse(terminal_event(result, episode.trace_id))


class _EpisodeResponse(EventSourceResponse):
    """The SSE response of one episode: however the response ends (sent, failed, cancelled,
    or never read), its episode is ended and its slot comes back."""

    def __init__(self, episode: RunningEpisode, headers: dict[str, str]) -> None:
        super().__init__(_stream(episode), headers=headers, ping=15)
        self.episode = episode

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.episode.leave()


async def _watched(request: Request, episode: RunningEpisode) -> Result | None:
    """The episode's Result, or None once its client has gone (the episode is then stopped)."""
    waiting = asyncio.ensure_future(episode.result())
    try:
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=_WATCH_S)
            if done:
                return waiting.result()
            if await request.is_disconnected():
                episode.cancel()
                with contextlib.suppress(ThresherError):
                    await waiting
                return None
    finally:
        episode.cancel()
        if not waiting.done():  # we were cancelled: its reader leaves, the episode ends
            waiting.cancel()


def create_app(
    settings: ServeSettings,
    service: SearchService | None = None,
    bind: tuple[str, int] | None = None,
) -> FastAPI:
    """The ASGI application serving ``settings`` (FastAPI behind the key and body guards).

    Args:
        settings: collections, policies, config and limits.
        service: the search service (default: a new one over ``settings``).
        bind: the ``(host, port)`` it is served on: requests naming another ``Host``
            (or a foreign ``Origin``) are refused, 421/403 (None: no Host check,
            for in-process use).

    Returns:
        The app; ``app.state.service`` is its :class:`SearchService`.
    """
    service = service or SearchService(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(service.open_all)
        try:
            yield
        finally:
            service.close()

    app = FastAPI(
        title="thresher",
        version=__version__,
        summary="A self-editing search subagent: multi-hop retrieval with an auditable trace.",
        lifespan=lifespan,
    )
    app.state.service = service

    @app.exception_handler(ThresherError)
    async def refused(_: Request, exc: ThresherError) -> Response:
        """Any thresher error a route raises: the status, code and headers its class
        carries (:mod:`thresher.errors`), the message in the body."""
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(_: Request, exc: RequestValidationError) -> Response:
        """FastAPI's 422, written so that any text echoed back can be encoded."""
        return _SafeJSON({"detail": jsonable_encoder(exc.errors())}, status_code=422)

    @app.post(
        "/search",
        responses={
            200: {
                "description": "the episode as server-sent events (action, observation, done, "
                "error), or with Accept: application/json the Result",
                "content": {"text/event-stream": {}, "application/json": {}},
            },
            400: {"description": "a bad request (unknown policy, refused config override)"},
            401: {"description": "missing or wrong API key"},
            404: {"description": "the collection is not served here"},
            413: {"description": "the request body or the question is too large"},
            429: {"description": "too many episodes running and waiting; see Retry-After"},
        },
    )
    async def search(body: SearchRequest, request: Request) -> Any:
        """Run one search episode over the collection and return its ranked documents."""
        episode = await service.start(  # a refusal: the ThresherError handler answers
            body.query, body.collection_name, body.policy or body.model, body.overrides()
        )
        headers = {TRACE_HEADER: episode.trace_id}
        if not wants_json(request.headers.get("accept", "")):
            return _EpisodeResponse(episode, headers)
        try:
            result = await _watched(request, episode)
        except ThresherError as exc:  # the episode was accepted: its failure is the server's
            return _error(503, "unavailable", str(exc), headers)
        if result is None:  # the client is gone; nobody reads this
            return Response(status_code=499, headers=headers)
        payload = {"trace_id": episode.trace_id, **result.to_dict(), "answer": answer_text(result)}
        return _SafeJSON(payload, headers=headers)

    @app.post(
        "/retrieve",
        responses={
            200: {"description": '{"result": [[hit, ...] per query]} (Search-R1\'s shape)'},
            400: {"description": "an empty or unsearchable query"},
            401: {"description": "missing or wrong API key"},
            404: {"description": "the collection is not served here"},
            413: {"description": "too many queries, too large a topk or a query too long"},
            422: {"description": "a body that is not {queries: [str, ...], topk?, ...}"},
            429: {"description": "the server is busy; see Retry-After"},
        },
    )
    async def retrieve(body: RetrieveRequest) -> Response:
        """Search the collection once per query (hybrid: BM25 and dense fused) and return
        each query's top documents as ``{"id", "contents": "title\\ntext"}``, with their
        scores when ``return_scores`` is true."""
        return _SafeJSON(await service.retrieve(body))

    @app.get("/traces/{trace_id}", responses={404: {"description": "no such trace"}})
    async def trace(trace_id: str) -> Response:
        """The episode's trace as JSONL (docs/trace-schema.md); a running one's so far."""
        events = service.traces.get(trace_id)
        if events is None:
            return _error(404, "unknown_trace", f"no trace {trace_id!r} on this server")
        body = "".join(safe_json(e.to_dict()) + "\n" for e in events)
        return Response(body, media_type="application/x-ndjson")

    @app.get("/traces/{trace_id}/view", responses={404: {"description": "no such trace"}})
    async def view(trace_id: str) -> Response:
        """The trace viewer page for one episode."""
        from thresher.serve.viewer import render_viewer

        events = service.traces.get(trace_id)
        if events is None:
            return _error(404, "unknown_trace", f"no trace {trace_id!r} on this server")
        page = render_viewer([e.to_dict() for e in events], source=f"trace {trace_id}")
        return HTMLResponse(page.html, headers={"Content-Security-Policy": page.csp})

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness, collections, policies and the load (open without the API key)."""
        return service.health()

    app.add_middleware(
        BodyLimit, max_bytes=settings.max_body_bytes, timeout_s=settings.body_timeout_s
    )
    if settings.api_key:  # a keyless body is never read
        app.add_middleware(ApiKeyGuard, key=settings.api_key)
    if bind is not None:  # added last: the outermost, before anything else is looked at
        hosts, origins = allowed_names(bind[0], bind[1], settings.allowed_hosts)
        app.add_middleware(HostGuard, hosts=hosts, origins=origins)
    return app


def run_http(
    settings: ServeSettings,
    host: str = "127.0.0.1",
    port: int = 8080,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve the API until interrupted (uvicorn with the connection limits of
    :mod:`thresher.serve.connections`; the indexes are opened and warmed first, then
    ``on_ready`` is called, e.g. to print a banner).

    Raises:
        IndexNotFoundError: an index does not exist.
    """
    from thresher.serve.connections import serve

    service = SearchService(settings)
    service.warm_all()  # fail before listening, with thresher's own error
    if on_ready is not None:
        on_ready()
    app = create_app(settings, service, bind=(host, port))
    serve(app, host, port, settings, timeout_graceful_shutdown=5)
