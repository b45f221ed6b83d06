"""One search service behind the HTTP API and the MCP server: admission, episodes, traces.

:class:`SearchService` checks a request (question size, collection, policy,
config overrides), takes an episode slot (:class:`~thresher.serve.gate.EpisodeGate`),
and runs the episode on its own thread with ``run_episode`` — the same episode
``thresher.search`` runs, on a Store opened once per collection and shared by
every request. Each trace event is handed to the event loop as it happens
(:class:`RunningEpisode` is what a stream reads) and kept under a trace id for
``GET /traces/{id}``.

Stopping: :meth:`RunningEpisode.cancel` sets the episode's stop event (the
harness's ``should_stop``); the episode ends ``cancelled`` at its next check and
its slot is freed when its thread has finished, so nothing runs for a client
that is gone.
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.corpus.sanitize import invalid_path
from thresher.errors import InputError, ThresherError
from thresher.harness.result import Result
from thresher.harness.trace import TraceEvent, read_jsonl, write_jsonl
from thresher.index.store import Store
from thresher.serve.gate import EpisodeGate
from thresher.serve.settings import ServeSettings, request_config

__all__ = ["TooLarge", "TraceStore", "RunningEpisode", "SearchService", "TRACE_ID"]

log = logging.getLogger(__name__)

#: the form of a trace id (a UUID4 in hex)
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


class TooLarge(InputError):
    """A request or question over the server's size limit (HTTP 413)."""


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


class _End:
    """The last item of an episode's event queue: its Result, or the error that ended it."""

    def __init__(self, outcome: Result | BaseException) -> None:
        self.outcome = outcome


class RunningEpisode:
    """One episode on its thread, read from the event loop.

    Attributes:
        trace_id: the id of its trace (``GET /traces/{id}``).
        collection: the collection it searches. policy: the policy it runs.
    """

    def __init__(self, trace_id: str, collection: str, policy: str) -> None:
        self.trace_id = trace_id
        self.collection = collection
        self.policy = policy
        self.stop = threading.Event()
        self._queue: asyncio.Queue[TraceEvent | _End] = asyncio.Queue()
        self._result: Result | None = None

    def cancel(self) -> None:
        """Ask the episode to stop (it ends ``cancelled`` at its next check)."""
        self.stop.set()

    async def next(self) -> TraceEvent | Result:
        """The next trace event, or the Result once the episode has ended.

        Raises whatever error ended the episode outside the harness (a Store that
        failed to open, a policy that could not be built).
        """
        if self._result is not None:
            return self._result
        item = await self._queue.get()
        if isinstance(item, _End):
            if isinstance(item.outcome, BaseException):
                raise item.outcome
            self._result = item.outcome
            return item.outcome
        return item

    async def result(self) -> Result:
        """Wait for the episode's Result (its events are dropped)."""
        while True:
            item = await self.next()
            if isinstance(item, Result):
                return item


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
            InputError: an empty question, an unknown collection or policy, a
                refused config override.
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
        name, _ = self.settings.choose_collection(collection)
        chosen = self.settings.choose_policy(policy)
        config = request_config(self.settings.config, overrides)
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
        """Check the request, wait for a slot, and start its episode.

        Raises:
            Busy: no slot (HTTP 429). TooLarge, InputError, ConfigError: a bad request.
            ThresherError: the policy could not be built or the index opened.
        """
        question, name, chosen, config = self.check(question, collection, policy, overrides)
        await self.gate.acquire()
        try:
            episode = RunningEpisode(uuid.uuid4().hex, name, chosen)
            built = await asyncio.to_thread(self._prepare, name, chosen, config)
        except BaseException:
            self.gate.release()
            raise
        loop = asyncio.get_running_loop()
        events = self.traces.open(episode.trace_id)
        self._running.add(episode)
        thread = threading.Thread(
            target=self._work,
            args=(loop, episode, question, built, config, events),
            name=f"thresher-episode-{episode.trace_id[:8]}",
            daemon=True,
        )
        try:
            thread.start()
        except RuntimeError as exc:  # no thread to be had: give everything back
            self.traces.finish(episode.trace_id, ())
            self._ended(episode, 0.0)
            raise ThresherError(f"could not start the episode: {exc}; try again later") from exc
        return episode

    def _prepare(self, name: str, policy: str, config: Config) -> tuple[Store, Any]:
        from thresher.policies import build_policy

        return self.store(name), build_policy(policy, config)

    def _work(
        self,
        loop: asyncio.AbstractEventLoop,
        episode: RunningEpisode,
        question: str,
        built: tuple[Store, Any],
        config: Config,
        events: list[TraceEvent],
    ) -> None:
        """The episode's thread: run it, hand every event to the loop, free the slot."""
        from thresher.harness.episode import run_episode

        def post(item: TraceEvent | _End) -> None:
            try:
                loop.call_soon_threadsafe(episode._queue.put_nowait, item)
            except RuntimeError:  # the loop has closed (server shut down): stop the episode
                episode.stop.set()

        def on_event(event: TraceEvent) -> None:
            events.append(event)
            post(event)

        started = time.perf_counter()
        store, policy = built
        outcome: Result | BaseException = ThresherError("the episode ended without a result")
        try:
            outcome = run_episode(
                question, store, policy, config, on_event=on_event, should_stop=episode.stop.is_set
            )
            self.traces.finish(episode.trace_id, outcome.trace)
        except Exception as exc:  # run_episode returns a Result even on its own errors
            outcome = exc if isinstance(exc, ThresherError) else ThresherError(str(exc))
            with contextlib.suppress(Exception):
                self.traces.finish(episode.trace_id, tuple(events))
        finally:  # whatever happened above, the reader hears the end and the slot comes back
            post(_End(outcome))
            seconds = time.perf_counter() - started
            with contextlib.suppress(RuntimeError):
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
            episode.cancel()  # a no-op once it has ended; stops it if we were cancelled

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
