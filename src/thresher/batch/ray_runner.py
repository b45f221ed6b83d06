"""The Ray runner: jobs on a pool of Ray actors, one per CPU, on a local instance or a cluster.

``RayRunner("local")`` starts a private local instance (stopped by
:meth:`RayRunner.close`); ``RayRunner(ADDRESS)`` joins a running cluster
(``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``); when this process is already
connected (``ray.init`` was called), the runner uses that connection and leaves
it open. Every worker must have thresher installed and reach the index location
the jobs name (the same folder path, or the Chroma server URL).

Each actor is one worker process: the first job that needs the index opens it
there (:class:`~thresher.batch.stores.StoreRef`, through the backend registry)
and every later job on that actor reuses it; :meth:`RayRunner.close` asks each
actor to close its stores (removing their private read copies) before the
actors go. The driver keeps one job in flight per actor and calls ``on_done``
as each finishes.

Retries are Ray's own: the actor class has ``max_restarts=1`` and
``max_task_retries=1`` and each call ``retry_exceptions=True``, so a job that
raises (or whose worker dies) runs once more; a second failure reaches the
driver as the call's error and becomes a failed
:class:`~thresher.batch.runner.JobResult`. :data:`FATAL_ERRORS
<thresher.batch.runner.FATAL_ERRORS>` are returned by the actor instead of
raised (no retry) and re-raised on the driver.

Ray is optional: ``pip install 'thresher[ray]'``.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from thresher.batch.runner import FATAL_ERRORS, JobResult, OnDone, Runner, describe_error
from thresher.errors import BackendUnavailableError

__all__ = ["RayRunner", "LOCAL", "import_ray", "check_reachable"]

T = TypeVar("T")
R = TypeVar("R")
#: the ``--ray`` value (and its default) that starts a local Ray instance
LOCAL = "local"


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        BackendUnavailableError: Ray is not installed (names the extra to install).
    """
    try:
        import ray
    except ImportError as exc:
        raise BackendUnavailableError(
            f"--ray needs Ray, which is not installed ({exc}); "
            "run `pip install 'thresher[ray]'`, or drop --ray to run on local threads"
        ) from exc
    return ray


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` or ``ray://HOST:PORT`` nobody answers on.

    ``ray.init`` keeps retrying an unreachable cluster for minutes; one TCP connect
    first turns a wrong address into an error at once. Other forms (``auto``,
    ``local``) are left to Ray.

    Raises:
        BackendUnavailableError: nothing accepts a connection there within ``timeout``.
    """
    import socket

    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise BackendUnavailableError(
            f"no Ray cluster answers at {address} ({exc}); start one (`ray start --head`), "
            "check the address, or give --ray alone for a local instance"
        ) from exc


@dataclass(frozen=True, slots=True)
class _Fatal:
    """A fatal error, returned by the task (so Ray does not retry it) and raised on the driver."""

    error: Exception


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    try:
        return fn(item)
    except FATAL_ERRORS as exc:
        return _Fatal(exc)


class _Worker:
    """The body of each actor: run jobs; close this process's stores on request."""

    def run(self, fn: Callable[[Any], Any], item: Any) -> Any:
        return _call(fn, item)

    def close(self) -> None:
        from thresher.batch.stores import close_stores

        close_stores()


class RayRunner(Runner):
    """Jobs on Ray actors (one CPU each, one per CPU of the cluster), results in input order.

    Args:
        address: ``"local"`` (or None) starts a local instance; otherwise the
            cluster address given to ``ray.init``.
        num_cpus: CPUs of a local instance (default: the machine's).
        quiet: keep Ray's informational log lines and workers' output off stderr.

    Raises:
        BackendUnavailableError: Ray is not installed, or ``ray.init`` failed
            (the cluster is unreachable).
    """

    name = "ray"
    remote = True

    def __init__(
        self, address: str | None = LOCAL, *, num_cpus: int | None = None, quiet: bool = False
    ) -> None:
        from thresher.batch.stores import open_keys

        ray = import_ray()
        self.address = address or LOCAL
        self._kept = open_keys()  # stores open in this process before the runner
        self._owns = not ray.is_initialized()
        if self._owns:
            options: dict[str, Any] = {
                "logging_level": logging.ERROR if quiet else logging.WARNING,
                "log_to_driver": not quiet,
            }
            if self.address == LOCAL:
                options.update(include_dashboard=False, num_cpus=num_cpus)
            else:
                check_reachable(self.address)
            try:
                ray.init(address=self.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise BackendUnavailableError(
                    f"cannot start or join Ray at {self.address!r}: {exc}; check the address "
                    "(auto, HOST:PORT or ray://HOST:PORT), or give --ray alone for a local instance"
                ) from exc
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._actor_class = ray.remote(num_cpus=1, max_restarts=1, max_task_retries=1)(_Worker)
        self._actors: list[Any] = []

    def _submit(self, actor: Any, fn_ref: Any, item: Any) -> Any:
        return actor.run.options(retry_exceptions=True).remote(fn_ref, item)

    def map(
        self, fn: Callable[[T], R], items: Sequence[T], on_done: OnDone | None = None
    ) -> list[JobResult[R]]:
        ray = import_ray()
        queue = deque(enumerate(items))
        results: list[JobResult[R] | None] = [None] * len(queue)
        if not queue:
            return []
        while len(self._actors) < min(self.workers, len(queue)):
            self._actors.append(self._actor_class.remote())
        fn_ref = ray.put(fn)
        free = list(self._actors)
        running: dict[Any, tuple[int, Any]] = {}
        try:
            while queue or running:
                while free and queue:
                    index, item = queue.popleft()
                    actor = free.pop()
                    running[self._submit(actor, fn_ref, item)] = (index, actor)
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    index, actor = running.pop(ref)
                    result, alive = self._result(ray, ref)
                    if not alive:  # restarted once already and died again: replace it
                        self._actors.remove(actor)
                        actor = self._actor_class.remote()
                        self._actors.append(actor)
                    free.append(actor)
                    results[index] = result
                    if on_done is not None:
                        on_done(index, result)
        except BaseException:
            for ref in running:
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
            raise
        return [r for r in results if r is not None]

    @staticmethod
    def _result(ray: Any, ref: Any) -> tuple[JobResult[Any], bool]:
        """The job's result, and whether its actor is still alive."""
        try:
            value = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            return JobResult(error=describe_error(exc)), False
        except Exception as exc:  # the job raised twice
            return JobResult(error=describe_error(exc)), True
        if isinstance(value, _Fatal):
            raise value.error
        return JobResult(value), True

    def close(self) -> None:
        from thresher.batch.stores import close_stores

        ray = import_ray()
        actors, self._actors = self._actors, []
        if actors and ray.is_initialized():
            with contextlib.suppress(Exception):  # a dead actor has nothing left to close
                ray.get([a.close.remote() for a in actors], timeout=60)
            for actor in actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
        close_stores(keep=self._kept)
        if self._owns:
            if ray.is_initialized():
                ray.shutdown()
            self._owns = False
