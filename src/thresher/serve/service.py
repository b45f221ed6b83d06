"""One search service behind the HTTP API and the MCP server: admission, episodes, traces.

:class:`SearchService` checks a request (question size, collection, policy,
config overrides), takes an episode slot (:class:`~thresher.serve.gate.EpisodeGate`),
and opens the episode as a stream of its events with ``iter_episode`` — the same
episode ``thresher.search`` runs, on a Store opened once per collection and
shared by every request. :class:`RunningEpisode` is what a response reads: its
:meth:`~RunningEpisode.events` runs each step of the episode on a worker thread
(anyio's) as the reader asks for the next event, and keeps every event under a
trace id for ``GET /traces/{id}``. There is no thread or queue of our own: the
reader sets the pace.

Stopping: a reader that leaves (a client gone: its response is cancelled or
closed) closes the stream; a step still running (a policy thinking) sees the stop
at once and ends the episode ``cancelled`` when it returns, and the slot is freed
then, so nothing runs for a client that is gone. :meth:`RunningEpisode.cancel`
asks the episode to stop while the reader stays for its last events.

starlette's ``iterate_in_threadpool`` is not used to read the stream: a cancelled
reader waits there for the running step to finish (anyio shields a worker
thread's wait), which for a thinking policy is its whole reply; the step is
therefore awaited with ``abandon_on_cancel`` and the stream closed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from anyio.to_thread import run_sync

from thresher.config import Config
from thresher.corpus.sanitize import invalid_path
from thresher.errors import InputError, ThresherError
from thresher.harness.episode import check_searchable
from thresher.harness.result import Result
from thresher.harness.stream import EpisodeStream
from thresher.harness.trace import TraceEvent, read_jsonl, write_jsonl
from thresher.index.filters import DocFilter
from thresher.index.store import Store
from thresher.serve.gate import EpisodeGate
from thresher.serve.retrieve import RetrieveRequest
from thresher.serve.settings import ServeSettings, request_config

__all__ = ["TooLarge", "TraceStore", "RunningEpisode", "SearchService", "TRACE_ID"]

log = logging.getLogger(__name__)

#: the form of a trace id (a UUID4 in hex)
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


class TooLarge(InputError):
    """A request or question over the server's size limit (HTTP 413)."""

    http_status = 413
    code = "question_too_large"


class TraceStore:
    """Traces by id: live while their episode runs, the last ``limit`` finished ones after.

    Finished traces are also written to ``folder/<id>.jsonl`` when a folder is
    given, and read back from there once they have left memory; the folder keeps
    at most ``max_files`` traces and ``max_bytes`` bytes of them (the oldest, by
    the time they were written, are deleted first; files other than trace ids
    are never touched).
    """

    def __init__(
        self,
        limit: int,
        folder: str | Path | None = None,
        max_files: int = 10_000,
        max_bytes: int = 1 << 30,
    ) -> None:
        self.limit = limit
        self.folder = Path(folder) if folder is not None else None
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._live: dict[str, list[TraceEvent]] = {}
        self._done: OrderedDict[str, tuple[TraceEvent, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._files: OrderedDict[Path, int] = OrderedDict()  # written traces, oldest first
        if self.folder is not None and self.folder.is_dir():
            found = [(p.stat().st_mtime, p) for p in self.folder.glob("*.jsonl")]
            for _, path in sorted(found):
                if TRACE_ID.match(path.stem):
                    self._files[path] = path.stat().st_size
            self._retain()

    def open(self, trace_id: str) -> list[TraceEvent]:
        """A live event list for a new episode (appended to by its thread)."""
        events: list[TraceEvent] = []
        with self._lock:
            self._live[trace_id] = events
        return events

    def finish(self, trace_id: str, events: tuple[TraceEvent, ...]) -> Path | None:
        """Keep an episode's whole trace; returns where it was written, if anywhere."""
        with self._lock:
            self._live.pop(trace_id, None)
            self._done[trace_id] = events
            while len(self._done) > self.limit:
                self._done.popitem(last=False)
        if self.folder is None:
            return None
        try:
            path = write_jsonl(events, self.folder / f"{trace_id}.jsonl")
            size = path.stat().st_size
        except (OSError, ValueError) as exc:  # a full disk, say: the trace stays in memory
            log.warning("could not write trace %s to %s: %s", trace_id, self.folder, exc)
            return None
        with self._lock:
            self._files[path] = size
            self._retain()
        return path

    def _retain(self) -> None:
        """Delete the oldest written traces past ``max_files`` or ``max_bytes`` (the newest
        one is always kept)."""
        total = sum(self._files.values())
        while len(self._files) > 1 and (
            len(self._files) > self.max_files or total > self.max_bytes
        ):
            path, size = self._files.popitem(last=False)
            total -= size
            with contextlib.suppress(OSError):
                path.unlink()

    def get(self, trace_id: str) -> list[TraceEvent] | None:
        """The events of a trace so far (a running episode's too); None when unknown."""
        if not TRACE_ID.match(trace_id):
            return None
        with self._lock:
            if trace_id in self._live:
                return list(self._live[trace_id])
            if trace_id in self._done:
                return list(self._done[trace_id])
        if self.folder is not None and (self.folder / f"{trace_id}.jsonl").is_file():
            return read_jsonl(self.folder / f"{trace_id}.jsonl")
        return None

    def running(self) -> int:
        """Episodes whose trace is still live."""
        with self._lock:
            return len(self._live)


class RunningEpisode:
    """One episode, read from the event loop.

    Attributes:
        trace_id: the id of its trace (``GET /traces/{id}``).
        collection: the collection it searches. policy: the policy it runs.
        stream: the episode's event stream.

    Args:
        live: the trace's live event list (appended to as events are read).
        ended: called once with the Result when the episode has ended (from whichever
            thread ended it): the service keeps the trace and frees the slot.
        limiter: bounds the worker threads the service's episodes run on.
    """

    def __init__(
        self,
        trace_id: str,
        collection: str,
        policy: str,
        stream: EpisodeStream,
        live: list[TraceEvent],
        ended: Callable[[RunningEpisode, Result], None],
        limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.collection = collection
        self.policy = policy
        self.stream = stream
        self._live = live
        self._ended = ended
        self._limiter = limiter
        self._settled = False
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Ask the episode to stop (it ends ``cancelled`` at its next check); the reader
        still gets its last events."""
        self.stream.cancel()

    def leave(self) -> None:
        """The reader is gone: end the episode now, or as soon as its running step returns
        (idempotent; never blocks)."""
        self.stream.close()
        self._settle()

    @property
    def outcome(self) -> Result | None:
        """The episode's Result once it has ended."""
        return self.stream.result

    async def events(self) -> AsyncGenerator[TraceEvent, None]:
        """Each trace event as it is applied, every step on a worker thread.

        Leaving early (the reader is cancelled or closes this iterator) ends the
        episode (:meth:`leave`).

        Raises:
            ThresherError: no worker thread could be had to run the episode.
        """
        try:
            while True:
                try:
                    event = await run_sync(
                        self._step, abandon_on_cancel=True, limiter=self._limiter
                    )
                except RuntimeError as exc:  # no thread to be had
                    raise ThresherError(
                        f"could not start the episode's work: {exc}; try again later"
                    ) from exc
                if event is None:
                    return
                yield event
        finally:
            self.leave()

    async def result(self) -> Result:
        """Read the episode to its end; its Result.

        Raises:
            ThresherError: the episode could not run.
        """
        async with contextlib.aclosing(self.events()) as events:
            async for _ in events:
                pass
        if self.outcome is None:
            raise ThresherError("the episode ended without a result")
        return self.outcome

    def _step(self) -> TraceEvent | None:
        """The next event (on a worker thread); None once the episode has ended."""
        event = next(self.stream, None)
        if event is not None:
            self._live.append(event)
        self._settle()
        return event

    def _settle(self) -> None:
        """Once the episode has ended: hand its Result to the service, once."""
        result = self.stream.result
        if result is None:
            return
        with self._lock:
            if self._settled:
                return
            self._settled = True
        self._ended(self, result)


class SearchService:
    """Checks requests, runs episodes within the limits, keeps their traces.

    Args:
        settings: collections, policies, config and limits.
    """

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.gate = EpisodeGate(
            settings.max_concurrent, settings.max_queued, settings.queue_timeout_s
        )
        self.traces = TraceStore(
            settings.max_traces,
            settings.trace_dir,
            settings.trace_dir_max_files,
            settings.trace_dir_max_bytes,
        )
        self._stores: dict[str, Store] = {}
        self._store_lock = threading.Lock()
        self._running: set[RunningEpisode] = set()
        self._limiter: anyio.CapacityLimiter | None = None  # made on the event loop

    # -- checks (before any slot is taken) ---------------------------------------------
    def check(
        self,
        question: str,
        collection: str | None = None,
        policy: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> tuple[str, str, str, Config]:
        """``(question, collection, policy, config)`` of a valid request.

        Raises:
            TooLarge: the question is over ``max_question_chars``.
            InputError: an empty question (NoSearchableWordsError: one with no letter
                or digit), an unknown collection or policy, a refused config override,
                a ``retrieval.where`` chromadb would refuse.
            ConfigError: an unknown or ill-typed config setting.
        """
        where = invalid_path(
            {
                "query": question,
                "collection_name": collection,
                "policy": policy,
                "config": dict(overrides or {}),
            }
        )
        if where:
            raise InputError(
                f"{where} holds text that is not valid Unicode (a lone surrogate such as "
                "'\\ud800'); send UTF-8 text"
            )
        limit = self.settings.max_question_chars
        if len(question) > limit:
            raise TooLarge(
                f"the question has {len(question)} characters, over this server's limit of "
                f"{limit}; shorten it (or start the server with a larger --max-question-chars)"
            )
        if not question.strip():
            raise InputError("the question is empty; send {'query': 'your question'}")
        check_searchable(question)
        name, _ = self.settings.choose_collection(collection)
        chosen = self.settings.choose_policy(policy)
        config = request_config(self.settings.config, overrides)
        # a filter set through ``config`` is checked like the request's ``where`` (400)
        DocFilter.parse(config.retrieval.where, config.retrieval.path)
        return question, name, chosen, config

    # -- stores -----------------------------------------------------------------------
    def store(self, name: str) -> Store:
        """The open Store of a collection (opened on first use, then shared)."""
        from thresher.index.backends import open_store

        with self._store_lock:
            store = self._stores.get(name)
            if store is None:
                _, location = self.settings.choose_collection(name)
                store = open_store(location, self.settings.config)
                self._stores[name] = store
            return store

    def open_all(self) -> None:
        """Open every collection now, so the first request does not pay for it (and a
        missing index fails at start-up)."""
        for name in self.settings.collections:
            self.store(name)

    def warm_all(self) -> None:
        """Open every collection and warm it up (:func:`~thresher.serve.warm.warm_up`):
        what a server does before it says it is ready."""
        from thresher.serve.warm import warm_up

        for name in self.settings.collections:
            warm_up(self.store(name), self.settings.policy, self.settings.config)

    # -- episodes ---------------------------------------------------------------------
    async def start(
        self,
        question: str,
        collection: str | None = None,
        policy: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> RunningEpisode:
        """Check the request, wait for a slot, and open its episode (it runs as it is read:
        the caller must read :meth:`RunningEpisode.events` or :meth:`RunningEpisode.result`,
        or call :meth:`RunningEpisode.leave`, so that the slot comes back).

        Raises:
            Busy: no slot (HTTP 429). TooLarge, InputError, ConfigError: a bad request.
            ThresherError: the policy could not be built or the index opened.
        """
        question, name, chosen, config = self.check(question, collection, policy, overrides)
        await self.gate.acquire()
        try:
            stream = await asyncio.to_thread(self._prepare, question, name, chosen, config)
        except BaseException:
            self.gate.release()
            raise
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.settings.max_concurrent)
        trace_id = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        episode = RunningEpisode(
            trace_id,
            name,
            chosen,
            stream,
            self.traces.open(trace_id),
            lambda ep, result: self._finished(loop, ep, result, time.perf_counter() - started),
            self._limiter,
        )
        self._running.add(episode)
        return episode

    def _prepare(self, question: str, name: str, policy: str, config: Config) -> EpisodeStream:
        from thresher.harness.episode import iter_episode
        from thresher.policies import build_policy

        return iter_episode(question, self.store(name), build_policy(policy, config), config)

    def _finished(
        self,
        loop: asyncio.AbstractEventLoop,
        episode: RunningEpisode,
        result: Result,
        seconds: float,
    ) -> None:
        """An episode has ended (on whichever thread ended it): keep its trace, free its slot
        on the event loop."""
        try:
            self.traces.finish(episode.trace_id, result.trace)
        finally:
            here: asyncio.AbstractEventLoop | None
            try:
                here = asyncio.get_running_loop()
            except RuntimeError:
                here = None
            if here is loop:
                self._ended(episode, seconds)
            else:
                with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to free
                    loop.call_soon_threadsafe(self._ended, episode, seconds)

    def _ended(self, episode: RunningEpisode, seconds: float) -> None:
        self._running.discard(episode)
        self.gate.release(seconds)

    async def search(
        self,
        question: str,
        collection: str | None = None,
        policy: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> tuple[str, Result]:
        """Run one episode to its end: ``(trace_id, Result)``; cancelled if the caller is."""
        episode = await self.start(question, collection, policy, overrides)
        try:
            return episode.trace_id, await episode.result()
        finally:
            episode.leave()  # a no-op once it has ended; ends it if we were cancelled

    async def retrieve(self, body: RetrieveRequest) -> dict[str, Any]:
        """``POST /retrieve``: one hybrid search per query on the collection, in a slot.

        The request is checked whole first (:func:`~thresher.serve.retrieve.check_request`),
        then the batch runs on a worker thread holding one episode slot, so retrieval
        and episodes share the server's bound on concurrent work.

        Raises:
            TooManyQueries: over the server's batch, ``topk`` or query-size limits (413).
            InputError: an empty or unsearchable query, an unknown collection (400/404).
            Busy: no slot (429).
        """
        from thresher.serve.retrieve import RetrieveLimits, check_request, retrieve

        limits = RetrieveLimits(
            self.settings.max_retrieve_queries,
            self.settings.max_retrieve_topk,
            self.settings.max_question_chars,
        )
        topk = check_request(body, limits)
        name, _ = self.settings.choose_collection(body.collection_name)
        retrieval = self.settings.config.retrieval
        where = DocFilter.parse(retrieval.where, retrieval.path)
        await self.gate.acquire()
        try:
            return await asyncio.to_thread(
                retrieve, self.store(name), body.queries, topk, body.return_scores, where
            )
        finally:
            self.gate.release()

    def open_episodes(self) -> int:
        """Episodes started and not yet ended (each holds a slot until it ends)."""
        return len(self._running)

    def stop_all(self) -> None:
        """Ask every running episode to stop (server shutdown)."""
        for episode in list(self._running):
            episode.cancel()

    def close(self) -> None:
        """Stop running episodes and close every open Store."""
        self.stop_all()
        with self._store_lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()

    def health(self) -> dict[str, Any]:
        """What ``GET /healthz`` reports: collections, policies and the load right now."""
        return {
            "status": "ok",
            "collections": list(self.settings.collections),
            "default_collection": self.settings.default_collection,
            "policies": list(self.settings.allowed_policies),
            "running": self.gate.running,
            "waiting": self.gate.waiting,
            "max_concurrent": self.settings.max_concurrent,
            "max_queued": self.settings.max_queued,
        }
